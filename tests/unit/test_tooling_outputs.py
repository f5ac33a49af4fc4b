"""A tooling command's output path is made ready before its work starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError

from kb.tooling.outputs import output_prepared


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
