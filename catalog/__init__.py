"""Pre-registered catalogs, synthetic cohorts and the code that loads, validates, expands and locks them."""
