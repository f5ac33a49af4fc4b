"""Every command of the project answers ``--help``: the first thing a new operator types."""

from __future__ import annotations

import pytest
from django.core.management import get_commands, load_command_class

PROJECT_APPS = ("config", "kb", "search", "assistant")
COMMANDS = sorted((app, name) for name, app in get_commands().items() if app in PROJECT_APPS)


def test_the_project_has_commands_to_check() -> None:
    assert {"demo", "kb_sync", "search_eval", "answer_eval"} <= {name for _, name in COMMANDS}


@pytest.mark.parametrize(("app", "name"), COMMANDS, ids=[name for _, name in COMMANDS])
def test_a_command_prints_its_help(app: str, name: str) -> None:
    # given: argparse reads "%" in a help text as a format specifier ("{% %}" must be "{%% %%}")
    parser = load_command_class(app, name).create_parser("manage.py", name)

    # when
    text = parser.format_help()

    # then: every option that has a help text is listed
    assert text.startswith("usage: manage.py " + name)
    for action in parser._actions:
        if action.help and action.option_strings:
            assert action.option_strings[-1] in text
