"""words: the English stopwords every keyword and term extractor in ncx drops. Pure data.

One list, so chunk keywords, BM25 terms and memory extraction agree on what a content word is.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves use used using may might must shall
    one two new see via e.g i.e etc per let lets get gets got make makes made
    """.split()
)
