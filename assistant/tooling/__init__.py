"""The answer side's lab: measuring and tuning the answerer, never served.

- ``evaluation``: answer eval cases and whether an answer states the expected fact
  (``answer_eval``);
- ``benchmarks``: answer latency and the load run (``answer_bench``, ``load_bench``);
- ``tuning``: dumps and fits of the answerer's constants over the eval sets (``answer_tuning``).

Everything here imports the serving modules; nothing they hold imports it back. The management
commands stay in ``assistant/management/commands/``, where Django finds them.
"""
