"""A tooling command's output path is made ready before its work starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from kb.tooling.outputs import output_prepared
from tests.conftest import CORPUS_DIR as CORPUS


def test_the_folder_of_an_output_is_made(tmp_path: Path) -> None:
    # when
    path = output_prepared(tmp_path / "dumps" / "2026" / "fly.jsonl")

    # then
    assert path.parent.is_dir()
    assert not path.exists()  # nothing is written yet


@pytest.mark.parametrize("where", ["folder", "under a file"])
def test_an_output_that_cannot_be_a_file_is_a_clear_error(tmp_path: Path, where: str) -> None:
    # given
    (tmp_path / "a-file").write_text("")
    path = tmp_path if where == "folder" else tmp_path / "a-file" / "out.jsonl"

    # when / then
    with pytest.raises(CommandError, match=f"cannot write {path}"):
        output_prepared(path)


def test_a_file_in_the_way_is_named(tmp_path: Path) -> None:
    # given
    (tmp_path / "dumps").write_text("")

    # when / then
    with pytest.raises(CommandError, match=r"dumps is a file, not a folder"):
        output_prepared(tmp_path / "dumps" / "2026" / "fly.jsonl")


def test_a_candidate_dump_checks_its_output_before_the_first_question(tmp_path: Path) -> None:
    # given: good cases, an output under a file (no database here: a question asked would fail
    # on it, so the error below must come first)
    (tmp_path / "a-file").write_text("")

    # when / then
    with pytest.raises(CommandError, match="is a file, not a folder"):
        call_command(
            "search_fusion",
            "dump",
            str(CORPUS / "eval.jsonl"),
            "--name",
            "sample",
            "--output",
            str(tmp_path / "a-file" / "sample.jsonl"),
        )


def test_a_candidate_dump_with_bad_cases_makes_no_folder(tmp_path: Path) -> None:
    # when
    with pytest.raises(CommandError):
        call_command(
            "search_fusion",
            "dump",
            str(tmp_path / "missing.jsonl"),
            "--name",
            "x",
            "--output",
            str(tmp_path / "dumps" / "x.jsonl"),
        )

    # then
    assert not (tmp_path / "dumps").exists()
