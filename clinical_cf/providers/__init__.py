"""Model providers the package registers with Inspect (see `gguf`)."""
