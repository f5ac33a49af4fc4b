"""Retrieval's lab: measuring and tuning the serving code, never served.

- ``evaluation``: eval cases and the ranking metrics ``search_eval`` reports;
- ``evalsets``: external eval sets (public documentation pinned by commit, cases derived from it);
- ``benchmarks``: ``search_bench``, a synthetic index at scale and plan evidence;
- ``tuning``: the offline fit of the fusion's weights (``search_fusion``).

Everything here imports the serving modules of ``search`` and ``kb``; nothing they hold imports
it back. The management commands stay in ``search/management/commands/``, where Django finds them.
"""
