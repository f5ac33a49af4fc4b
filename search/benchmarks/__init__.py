"""Benchmark building blocks: a synthetic index at scale, plan evidence, percentiles."""
