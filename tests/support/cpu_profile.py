"""CPU time per test and per fixture, for finding where the suite's time goes.

Wall-clock durations (``--durations``) mean little on a shared, loaded machine; CPU time does
not depend on how many other processes wait for the same cores. With
``-p tests.support.cpu_profile`` and ``GROUNDWORK_CPU_PROFILE=FILE``, each test process (each
xdist worker too) appends one JSON line per test phase and per fixture set-up to ``FILE``::

    {"kind": "phase", "test": "tests/unit/test_x.py::test_y", "phase": "call",
     "cpu": 0.41, "children_cpu": 0.0, "wall": 0.52}
    {"kind": "fixture", "fixture": "e2e_server", "scope": "function", "test": ...,
     "cpu": 0.2, "children_cpu": 1.9, "wall": 2.1}

``cpu`` is this process's user+system time; ``children_cpu`` is the time of child processes
it waited for (gunicorn, Celery workers, ``manage.py`` runs), which ``getrusage`` only counts
once a child has exited. The embedded PostgreSQL and Redis run detached, so their time shows in
neither: count their start-ups from the fixture lines instead. ``python -m
tests.support.cpu_profile FILE`` prints the totals per layer and the largest costs.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_PATH = os.environ.get("GROUNDWORK_CPU_PROFILE")
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


def _cpu() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (
        own.ru_utime + own.ru_stime,
        children.ru_utime + children.ru_stime,
        time.perf_counter(),
    )


def _write(record: dict[str, Any]) -> None:
    if not _PATH:
        return
    with open(_PATH, "a") as handle:  # one short line per write: appends never interleave
        handle.write(json.dumps(record) + "\n")


def _spent(before: tuple[float, float, float]) -> dict[str, float]:
    after = _cpu()
    return {
        "cpu": round(after[0] - before[0], 4),
        "children_cpu": round(after[1] - before[1], 4),
        "wall": round(after[2] - before[2], 4),
    }


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: Any) -> Iterator[None]:
    before = _cpu()
    yield
    node = getattr(request, "node", None)
    _write(
        {
            "kind": "fixture",
            "fixture": fixturedef.argname,
            "scope": fixturedef.scope,
            "test": getattr(node, "nodeid", ""),
            **_spent(before),
        }
    )


class _EmbeddingTally:
    """What the local model was asked to embed in this process: texts, repeats and CPU time."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.first_cpu: dict[str, float] = {}  # per text embedded here first: its share of CPU
        self.texts = 0
        self.repeats = 0
        self.cpu = 0.0
        self.repeat_cpu = 0.0

    def counted(self, kind: str, method: Any) -> Any:
        def embed(embedder: Any, texts: Any) -> Any:
            batch = [texts] if kind == "q" else list(texts)
            before = time.process_time()
            try:
                return method(embedder, texts)
            finally:
                spent = time.process_time() - before
                repeats = sum((kind, text) in self.seen for text in batch)
                for text in batch:
                    if (kind, text) not in self.seen and batch:
                        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
                        self.first_cpu[digest] = round(spent / len(batch), 5)
                self.seen.update((kind, text) for text in batch)
                self.texts += len(batch)
                self.repeats += repeats
                self.cpu += spent
                self.repeat_cpu += spent * repeats / len(batch) if batch else 0.0

        return embed

    def snapshot(self) -> tuple[int, int, float, float]:
        return self.texts, self.repeats, self.cpu, self.repeat_cpu


_TALLY = _EmbeddingTally()


def pytest_configure(config: pytest.Config) -> None:
    if not _PATH:
        return
    from kb.embedders.local import LocalMiniLMEmbedder

    LocalMiniLMEmbedder.embed_documents = _TALLY.counted("d", LocalMiniLMEmbedder.embed_documents)
    LocalMiniLMEmbedder.embed_query = _TALLY.counted("q", LocalMiniLMEmbedder.embed_query)


def _phase(item: pytest.Item, phase: str) -> Iterator[None]:
    before = _cpu()
    embedded = _TALLY.snapshot()
    yield
    texts, repeats, cpu, repeat_cpu = (
        after - start for after, start in zip(_TALLY.snapshot(), embedded, strict=True)
    )
    _write(
        {
            "kind": "phase",
            "test": item.nodeid,
            "phase": phase,
            "worker": _WORKER,
            "ended": round(time.time(), 3),
            **_spent(before),
            "embedded": texts,
            "embedded_again": repeats,
            "embed_cpu": round(cpu, 4),
            "embed_again_cpu": round(repeat_cpu, 4),
        }
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "teardown")


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionstart(session: pytest.Session) -> Iterator[None]:
    before = _cpu()
    yield
    _write({"kind": "session", "phase": "start", **_spent(before)})


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _TALLY.first_cpu:
        _write({"kind": "embedded", "worker": _WORKER, "texts": _TALLY.first_cpu})


def _layer(test: str) -> str:
    parts = test.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


def report(path: Path, top: int = 15) -> str:
    """Totals per layer (unit, integration, e2e), then the ``top`` costliest fixtures and tests."""
    per_layer: dict[str, float] = defaultdict(float)
    per_test: dict[str, float] = defaultdict(float)
    per_fixture: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    embedding = defaultdict(float)
    tests: set[str] = set()
    workers_by_text: dict[str, list[float]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["kind"] == "embedded":
            for digest, cpu in record["texts"].items():
                workers_by_text[digest].append(cpu)
            continue
        spent = record["cpu"] + record["children_cpu"]
        if record["kind"] == "phase":
            tests.add(record["test"])
            per_layer[_layer(record["test"])] += spent
            per_test[record["test"]] += spent
            for key in ("embedded", "embedded_again", "embed_cpu", "embed_again_cpu"):
                embedding[key] += record.get(key, 0)
        elif record["kind"] == "fixture":
            totals = per_fixture[f"{record['fixture']} ({record['scope']})"]
            totals[0] += spent
            totals[1] += 1
    lines = [f"{len(tests)} tests, {sum(per_layer.values()):.1f} s CPU in all"]
    lines += [f"  {layer:<12} {seconds:8.1f} s" for layer, seconds in sorted(per_layer.items())]
    lines.append(
        f"local model in the test process: {embedding['embedded']:.0f} texts in "
        f"{embedding['embed_cpu']:.1f} s CPU; {embedding['embedded_again']:.0f} of them "
        f"({embedding['embed_again_cpu']:.1f} s) had been embedded before in the same process"
    )
    if workers_by_text:
        copies = [cpus for cpus in workers_by_text.values() if len(cpus) > 1]
        lines.append(
            f"  {len(workers_by_text)} distinct texts; {len(copies)} embedded first by more than "
            f"one worker ({sum(sum(cpus) - min(cpus) for cpus in copies):.1f} s for the copies)"
        )
    lines.append(f"top {top} fixtures by CPU (set-ups, seconds in all, times set up):")
    ranked = sorted(per_fixture.items(), key=lambda item: -item[1][0])[:top]
    lines += [f"  {seconds:8.1f} s  x{count:<5.0f} {name}" for name, (seconds, count) in ranked]
    lines.append(f"top {top} tests by CPU (set-up + call + teardown):")
    ranked_tests = sorted(per_test.items(), key=lambda item: -item[1])[:top]
    lines += [f"  {seconds:8.1f} s  {name}" for name, seconds in ranked_tests]
    lines += _tails(path)
    return "\n".join(lines)


def _tails(path: Path, files: int = 3) -> list[str]:
    """When each worker finished, and its last files: under ``--dist loadfile`` a long file
    handed out last keeps one worker busy while the others are done."""
    # per worker: (ended, wall, file) of each test phase
    runs: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["kind"] == "phase" and "ended" in record:
            runs[record["worker"]].append(
                (record["ended"], record["wall"], record["test"].split("::")[0])
            )
    if not runs:
        return []
    start = min(ended - wall for records in runs.values() for ended, wall, _ in records)
    lines = [
        "when each worker finished its tests (seconds after the first began), and its last files:"
    ]
    for worker, records in sorted(runs.items()):
        records.sort()
        last: dict[str, list[float]] = {}
        for ended, wall, file in records:
            span = last.setdefault(file, [ended - wall, ended])
            span[1] = ended
        tail = sorted(last.items(), key=lambda item: item[1][1])[-files:]
        lines.append(f"  {worker}: {records[-1][0] - start:6.1f} s")
        lines += [f"      {span[1] - span[0]:6.1f} s  {file}" for file, span in tail]
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).exists():
        sys.exit("usage: python -m tests.support.cpu_profile PROFILE.jsonl (an existing file)")
    print(report(Path(sys.argv[1])))
