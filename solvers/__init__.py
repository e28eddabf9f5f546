"""Inspect solvers: how a model under test produces the outputs a suite scores."""
