"""clinical_cf: counterfactual evaluation of clinical LLMs and agents, as Inspect tasks."""
