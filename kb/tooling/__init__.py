"""The content side's lab: benchmarks of indexing, rendering and the attention lists, never served.

- ``benchmarking``: what every benchmark of every app shares (a throwaway database, percentiles,
  quiet logs, ``BenchmarkError``); it sits in ``kb``, the bottom layer, so all of them can use it;
- ``benchmarks``: ``kb_workers_bench`` (``workers``), ``render_bench`` (``rendering``),
  ``attention_bench`` (``attention``).

Everything here imports the serving modules; nothing they hold imports it back. The management
commands stay in ``kb/management/commands/``, where Django finds them.
"""
