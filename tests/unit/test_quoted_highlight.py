"""The document page's highlight of quoted sentences (``document_render(quoted=...)``): the
sentences are marked, the rest of the cited passage lightly, and the section is theirs."""

from __future__ import annotations

import re

from kb.rendering import document_render

BODY = """# Refund Policy

## Monthly plans

You can get a **full refund** within 30 days. Later renewals are not refundable.

## Annual plans

Annual plans get a prorated refund within 60 days.

| Charge | Refund |
|---|---|
| Annual plan | Prorated |

```
A code line. Never marked.
```
"""


def span(text: str) -> tuple[int, int]:
    start = BODY.index(text)
    return start, start + len(text)


def marks(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", m) for m in re.findall(r"<mark[^>]*>(.*?)</mark>", html)]


def test_quoted_sentences_are_marked_and_their_passage_lightly() -> None:
    # given: a chunk covering both sections, whose answer quoted one sentence of the second
    chunk = (BODY.index("## Monthly"), BODY.index("```"))

    # when
    rendered = document_render(
        body=BODY,
        cited_range=chunk,
        quoted=[span("Annual plans get a prorated refund within 60 days.")],
    )

    # then: only that sentence is the highlight, under its own section's heading
    assert marks(rendered.html) == ["Cited: Annual plans get a prorated refund within 60 days."]
    assert rendered.html.count('id="passage"') == 1
    assert '<mark class="cited-sentence" id="passage">' in rendered.html
    assert "cited-context" in rendered.html and "cited-passage" not in rendered.html
    assert rendered.quoted and rendered.quoted_section is not None
    assert rendered.quoted_section.text == "Annual plans"
    assert rendered.quoted_section.anchor == "annual-plans"


def test_a_sentence_over_bold_text_or_table_cells_is_marked_piece_by_piece() -> None:
    rendered = document_render(
        body=BODY,
        quoted=[
            span("You can get a **full refund** within 30 days."),
            span("Annual plan | Prorated"),
        ],
    )

    assert marks(rendered.html) == [
        "Cited: You can get a ", "full refund", " within 30 days.", "Annual plan", "Prorated",
    ]  # fmt: skip
    assert "<strong><mark" in rendered.html  # nested inside the inline element, never across
    assert rendered.html.count("<table>") == 1 and "|" not in rendered.html
    assert rendered.quoted_section is not None and rendered.quoted_section.text == "Monthly plans"


def test_quotes_outside_the_body_fall_back_to_the_passage_highlight() -> None:
    # given: a hand-edited link whose quote runs past the end of the body
    chunk = span("A code line. Never marked.")

    # when
    rendered = document_render(body=BODY, cited_range=chunk, quoted=[(5, 10_000)])

    # then: the page is the old highlight of the chunk
    assert not rendered.quoted and "<mark" not in rendered.html
    assert 'id="passage"' in rendered.html and "cited-passage" in rendered.html


def test_a_link_without_quotes_renders_as_before() -> None:
    chunk = span("Annual plans get a prorated refund within 60 days.")

    with_nothing = document_render(body=BODY, cited_range=chunk)
    with_empty = document_render(body=BODY, cited_range=chunk, quoted=[])

    assert with_nothing == with_empty
    assert "<mark" not in with_nothing.html and 'id="passage"' in with_nothing.html
    assert with_nothing.quoted_section is None
