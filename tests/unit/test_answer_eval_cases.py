"""The answer eval's cases, checked against the sample help center's pages: each fact is stated
in the section its case names, the halves split both kinds, and a bad file is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.facts import fact_text, states
from assistant.tooling.evaluation import (
    AnswerCase,
    AnswerEvalError,
    AnswerOutcome,
    answer_cases_load,
    answer_eval_summarise,
    lead_sentence,
)
from search.tooling.evalsets.pages import pages_read
from tests.conftest import CORPUS_DIR

CASES = CORPUS_DIR / "answer-eval.jsonl"


def test_every_fact_is_stated_in_the_section_its_case_names() -> None:
    sections = {(s.path, s.label): s.text for s in pages_read(CORPUS_DIR).sections}
    cases = [case for case in answer_cases_load(CASES) if case.answerable]

    wrong = [
        case.id
        for case in cases
        if not states(sections.get((case.path or "", case.section or ""), ""), case.fact or "")
    ]

    assert len(cases) >= 60
    assert wrong == []


def test_both_halves_hold_answerable_and_unanswerable_cases() -> None:
    cases = answer_cases_load(CASES)

    for half in ("calibration", "report"):
        kinds = [case.answerable for case in cases if case.half == half]
        assert kinds.count(True) >= 30 and kinds.count(False) >= 10, half
    assert "Who is on the billing on-call rota?" in {c.question for c in cases if not c.answerable}


def test_facts_compare_without_markup_or_dash_differences() -> None:
    assert fact_text("5\u201310 **business days**") == "5-10 business days"
    assert states("They usually appear within **5\u201310 business days**.", "5-10 business days")
    assert not states("within 10 business days", "5\u201310 business days")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        ('{"id": "a", "half": "other", "question": "q", "fact": null}', "'half' must be"),
        ('{"id": "a", "half": "report", "question": "q", "fact": "30 days"}', "needs 'path'"),
        ('{"id": "", "half": "report", "question": "q", "fact": null}', "'id' must be"),
    ],
)
def test_a_bad_case_file_is_refused_naming_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok", "half": "report", "question": "q", "fact": null}\n' + line)

    with pytest.raises(AnswerEvalError, match=message) as raised:
        answer_cases_load(path)

    assert f"{path}:2" in str(raised.value)


def test_a_case_with_several_facts_needs_all_or_any_of_them(tmp_path: Path) -> None:
    # given
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "all", "half": "report", "question": "q", "facts": ["[services.rss]", "limit"],'
        ' "match": "all", "path": "a.md", "section": ""}\n'
        '{"id": "any", "half": "report", "question": "q", "facts": ["fly scale", "fly m run"],'
        ' "match": "any", "path": "a.md", "section": "Scaling"}\n'
    )

    # when
    both, either = answer_cases_load(path)

    # then
    assert both.stated_in("Set `limit` under **[services.rss]**.")
    assert not both.stated_in("Set limit in your configuration.")
    assert either.stated_in("Run fly scale count 2.") and either.stated_in("or fly m run")
    assert not either.stated_in("Run fly deploy.")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a", "half": "report", "question": "q", "facts": []}', "'facts' a list"),
        (
            '{"id": "a", "half": "report", "question": "q", "facts": ["x"], "match": "most",'
            ' "path": "a.md", "section": ""}',
            "'match' must be",
        ),
        ('{"id": "a", "half": "report", "question": "q", "fact": "x", "facts": ["x"]}', "not both"),
    ],
)
def test_a_bad_facts_field_is_refused_naming_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(line + "\n")

    with pytest.raises(AnswerEvalError, match=message) as raised:
        answer_cases_load(path)

    assert f"{path}:1" in str(raised.value)


def test_the_lead_of_an_answer_is_its_first_quote_or_its_first_sentence() -> None:
    quoted = (
        "From our help center:\n\n“Go to Settings. Click Cancel.” [1]\n\n“Refunds take 5 days.” [2]"
    )
    written = "You can cancel in Settings [1]. Refunds take 5 days [2].\n\nMore."

    assert lead_sentence(quoted, quoted=True) == "“Go to Settings. Click Cancel.” [1]"
    assert lead_sentence(written, quoted=False) == "You can cancel in Settings [1]."


def test_the_lead_quote_of_a_code_unit_holds_its_block() -> None:
    # the answerer quotes a block with the sentence that introduces it, as one unit, and its
    # replay (`answer_tuning`) scores the lead with the block: the eval must read it so too
    block = "`config/app.toml`\n\n```toml\n[server]\n\nport = 8000\n```"
    quoted = f"From our help center:\n\n“To change the port:” [1]\n\n{block}\n\n“Restart.” [2]"
    sentence_first = (
        f"From our help center:\n\n“Restart.” [2]\n\n“To change the port:” [1]\n\n{block}"
    )

    assert lead_sentence(quoted, quoted=True) == f"“To change the port:” [1]\n\n{block}"
    assert lead_sentence(sentence_first, quoted=True) == "“Restart.” [2]"


def test_the_lead_quote_of_a_table_unit_holds_its_rows() -> None:
    # a table's lead-in is quoted with the rows it announces, as one unit, as a code block is
    table = "| Retry | When |\n|---|---|\n| 1st retry | 1 day after |\n| 2nd retry | 3 days after |"
    quoted = f"From our help center:\n\n“Acme retries 2 times:” [1]\n\n{table}\n\n“Restart.” [2]"
    sentence_first = "From our help center:\n\n“Restart.” [2]\n\n“Acme retries 2 times:” [1]"

    assert lead_sentence(quoted, quoted=True) == f"“Acme retries 2 times:” [1]\n\n{table}"
    assert lead_sentence(f"{sentence_first}\n\n{table}", quoted=True) == "“Restart.” [2]"


def test_the_summary_tells_a_lead_from_another_section_from_a_wrong_lead_of_the_right_one() -> None:
    # given: three answerable questions answered (each citing the answering section, two of them
    # in their lead, one of those with a lead that states the fact) and one refused
    def outcome(
        case_id: str, *, refused: bool = False, lead_cites: bool = False, lead_states: bool = False
    ) -> AnswerOutcome:
        case = AnswerCase(case_id, "report", "q", ("60 days",), path="a.md", section="Refunds")
        return AnswerOutcome(
            case=case,
            refused=refused,
            states_fact=not refused,
            cites_fact=not refused,
            answer="",
            cited=[],
            status="answered",
            lead_states_fact=lead_states,
            cites_section=not refused,
            lead_cites_section=lead_cites,
        )

    outcomes = [
        outcome("right lead", lead_cites=True, lead_states=True),
        outcome("wrong unit of the right section", lead_cites=True),
        outcome("lead from another section"),
        outcome("refused", refused=True),
    ]

    # when
    _, report, overall = answer_eval_summarise(outcomes)

    # then: shares of the answered questions, as "cites section" is
    assert report.cites_section == 1.0
    assert report.lead_cites_section == pytest.approx(2 / 3)
    assert report.lead_states_fact == 0.25  # of the answerable questions
    assert overall.as_json()["lead_cites_section"] == 0.667
