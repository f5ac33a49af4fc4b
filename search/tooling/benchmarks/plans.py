"""Query plans and server settings, for the EXPLAIN evidence a benchmark prints."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.db import connection

from kb.tooling.benchmarking import BenchmarkError


def index_definition(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    if row is None:
        raise BenchmarkError(f"index {name} is missing: run the migrations")
    return row[0]


def search_settings() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'), "
            "current_setting('jit'), current_setting('work_mem'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        ef_search, iterative_scan, jit, work_mem, pgvector = cursor.fetchone()
    return (
        f"pgvector {pgvector}, hnsw.ef_search {ef_search}, iterative_scan {iterative_scan}, "
        f"jit {jit}, work_mem {work_mem}"
    )


class StatementCapture:
    """An execute wrapper that records the SQL and parameters Django sends."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def __call__(
        self, execute: Callable, sql: str, params: object, many: bool, context: dict
    ) -> object:
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


PLAN_MARKERS = ("Scan", "Sort", "Index Cond", "Order By", "Recheck", "JIT", "Execution Time")
VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'")


def relevant_lines(plan: str) -> list[str]:
    """The scans, sorts and timings (where each leg's time goes), vector literals elided."""
    return [
        VECTOR_LITERAL.sub("'[...]'", line)
        for line in plan.splitlines()
        if any(marker in line for marker in PLAN_MARKERS)
    ]


def cte_milliseconds(plan: str, name: str) -> float | None:
    """Actual total time of a CTE's top node: the line after ``CTE <name>`` in a text plan."""
    match = re.search(rf"CTE {name}\n[^\n]*actual time=[\d.]+\.\.([\d.]+)", plan)
    return float(match.group(1)) if match else None


def explain_as_run(sql: str, params: Mapping[str, Any], *, options: str) -> str:
    """``EXPLAIN (options)`` of the plan the statement really runs with: with prepared search
    statements (``SEARCH_PREPARED_STATEMENTS``) that is the generic plan of a prepared
    statement (``plan_cache_mode`` is set per connection in ``search.apps``), not the custom
    plan an EXPLAIN of the statement with its values would show."""
    with connection.cursor() as cursor:
        if not settings.SEARCH_PREPARED_STATEMENTS:
            cursor.execute(f"EXPLAIN ({options}) " + sql, params)
            return "\n".join(row[0] for row in cursor.fetchall())
        # Numbered as psycopg numbers them: each name once, in the order it first appears.
        names = list(dict.fromkeys(PLACEHOLDER.findall(sql)))
        prepared = PLACEHOLDER.sub(lambda match: f"${names.index(match.group(1)) + 1}", sql)
        cursor.execute("PREPARE explained_statement AS " + prepared.replace("%%", "%"))
        try:
            arguments = ", ".join(["%s"] * len(names))
            cursor.execute(
                f"EXPLAIN ({options}) EXECUTE explained_statement ({arguments})",
                [params[name] for name in names],
            )
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE explained_statement")


PLACEHOLDER = re.compile(r"(?<!%)%\((\w+)\)s")  # a named parameter: %(vector)s
