"""cli: the typer edge — one module per command group; the only place that prints or exits."""
