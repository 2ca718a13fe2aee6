"""Container registries, over the OCI distribution API: their repositories and tags."""
