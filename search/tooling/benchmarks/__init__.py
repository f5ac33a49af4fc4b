"""The retrieval benchmark (``search_bench``): a synthetic index at scale, plan evidence, and
the measuring itself (``retrieval``). Support every benchmark shares is in
``kb.tooling.benchmarking``."""
