"""What the running processes need below every app: the embedded servers of the default set-up
and the database backend and cache that start them on first use, the read-replica router, what a
reader sees while the database is down, and the processes the demo and benchmarks supervise.

``kb`` is the ground floor, so ``search`` and ``assistant`` may import from here; ``config`` wires
these pieces in (settings, urls, the Celery app) and nothing here imports ``config``.
"""
