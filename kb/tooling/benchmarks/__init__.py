"""Benchmarks of the indexing machinery that more than one command or test runs."""
