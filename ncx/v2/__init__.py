"""v2: the .mlda (v2) importer behind `ncx migrate` — reader, plan and apply, journal.

Deletable as a unit; nothing on the sync or query path imports it.
"""
