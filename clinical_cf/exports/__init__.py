"""Exports for the places labs run evals from: the inspect_evals Register, lm-evaluation-harness, dataset loaders."""
