"""Benchmarks: each prints its figure next to a raw baseline measured in the same run."""
