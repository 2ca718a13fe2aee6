"""Read side: one module per read model, each with a NAME, an idempotent apply() and its queries."""
