"""A passage shown to a steward (the attention page's contradictions) is rendered as the public
page renders it, with the values to look at marked, and never as raw Markdown."""

from __future__ import annotations

from kb.rendering import passage_to_html

TABLE = (
    "| Event | Sent when |\n|---|---|\n"
    "| `customer.subscription.trial_will_end` | **3 days** before a trial ends. |\n"
)


def _span(text: str, part: str) -> tuple[int, int]:
    start = text.index(part)
    return start, start + len(part)


def test_a_table_passage_is_a_table_with_its_value_marked() -> None:
    html = passage_to_html(TABLE, marked=[_span(TABLE, "3 days")])
    assert "<table>" in html and "<th>Sent when</th>" in html
    assert "<td><strong><mark>3 days</mark></strong> before a trial ends.</td>" in html
    assert "|---|" not in html and "**" not in html


def test_a_list_passage_is_a_list_and_a_mark_never_spans_a_tag() -> None:
    text = "- within **14 days** of the payment\n- renewals: never"
    html = passage_to_html(text, marked=[_span(text, "14 days** of the")])
    assert html.count("<li>") == 2
    assert "<strong><mark>14 days</mark></strong><mark> of the</mark>" in html


def test_markup_in_a_passage_is_neutralised() -> None:
    html = passage_to_html("<script>alert(1)</script> [x](javascript:alert(1)) **ok**")
    assert "<script" not in html and "&lt;script&gt;" in html
    assert "href" not in html
    assert "<strong>ok</strong>" in html
