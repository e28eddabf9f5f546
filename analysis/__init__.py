"""Analysis of Inspect logs: tables and statistics over many runs."""
