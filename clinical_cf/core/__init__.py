"""The lowest layer: reading user files within bounds, locks, and input errors.

Catalog, tasks, analysis and the CLI import from here; nothing here imports from them.
"""
