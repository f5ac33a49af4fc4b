"""Serving code and lab code live apart: each app's eval, benchmarks and tuning sit in its
``tooling`` package, which imports the serving code and is never imported by it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("kb", "search", "assistant")
# Where tooling may be imported from: the lab itself and the commands that run it.
LAB_PARTS = {"tooling", "management"}


def _serving_modules() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if not LAB_PARTS & set(path.relative_to(ROOT).parts) and "migrations" not in path.parts
    )


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _is_tooling(name: str) -> bool:
    parts = name.split(".")
    return len(parts) > 1 and parts[0] in APPS and parts[1] == "tooling"


def test_every_app_keeps_its_lab_in_a_tooling_package() -> None:
    for app in APPS:
        assert (ROOT / app / "tooling" / "__init__.py").is_file(), app
    for old in (
        "search/evaluation.py",
        "search/benchmarks",
        "search/evalsets",
        "search/tuning",
        "assistant/evaluation.py",
        "assistant/benchmarks.py",
        "assistant/tuning",
        "kb/benchmarking.py",
        "kb/benchmarks",
        "kb/attention/benchmark.py",
    ):
        moved = ROOT / old
        assert not moved.is_file() and not (moved.is_dir() and any(moved.rglob("*.py"))), old


@pytest.mark.parametrize("path", _serving_modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_serving_code_never_imports_the_lab(path: Path) -> None:
    assert sorted(name for name in _imported_names(path) if _is_tooling(name)) == []
