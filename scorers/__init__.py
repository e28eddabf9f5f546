"""Inspect scorers and metrics for the counterfactual suites."""
