"""Which cited sources a quoting answer lists (assistant.services.shown_sources)."""

from __future__ import annotations

from assistant.services.shown_sources import quoted_sources_only


def _citation(number: int, *, quoted: bool, older: bool = False, newer: int | None = None):
    return {
        "number": number,
        "path": f"page-{number}.md",
        "quotes": [[0, 10]] if quoted else [],
        "older": older,
        "newer_number": newer,
    }


def test_sources_cited_only_by_a_note_are_not_listed_and_their_markers_go() -> None:
    # given: the pattern, two quotes and a note about two pages nobody quoted
    answer = (
        "From our help center:\n\n“You keep your data for 90 days.” [1]\n\n“The Owner can delete "
        "the account.” [2]\n\nNote: the older page “Refund Policy (2023)” also covers this [3]; "
        "where they differ, the newer “Refund Policy” applies [4]."
    )
    citations = [
        _citation(1, quoted=True),
        _citation(2, quoted=True),
        _citation(3, quoted=False),
        _citation(4, quoted=False),
    ]

    # when
    text, shown = quoted_sources_only(answer=answer, citations=citations)

    # then: two sources for two quotes, and no marker naming an unlisted one
    assert [c["path"] for c in shown] == ["page-1.md", "page-2.md"]
    assert text.endswith("also covers this; where they differ, the newer “Refund Policy” applies.")
    assert "[3]" not in text and "[4]" not in text and "[1]" in text and "[2]" in text


def test_an_older_page_that_contradicts_a_quoted_one_stays_listed_with_its_warning() -> None:
    answer = "“Refunds within 30 days.” [1]\n\nNote: the older page also covers this [2]."
    citations = [_citation(1, quoted=True), _citation(2, quoted=False, older=True, newer=1)]

    text, shown = quoted_sources_only(answer=answer, citations=citations)

    assert (text, shown) == (answer, citations)


def test_the_rest_is_renumbered_in_order_and_the_warning_follows_its_page() -> None:
    # given: source 1 is only pointed at; 3 (older) contradicts 2, which is quoted
    answer = "See [1]. “Thirty days.” [2] “Fourteen days.” [3]"
    citations = [
        _citation(1, quoted=False),
        _citation(2, quoted=True),
        _citation(3, quoted=True, older=True, newer=2),
    ]

    text, shown = quoted_sources_only(answer=answer, citations=citations)

    assert text == "See. “Thirty days.” [1] “Fourteen days.” [2]"
    assert [(c["path"], c["number"], c["newer_number"]) for c in shown] == [
        ("page-2.md", 1, None),
        ("page-3.md", 2, 1),
    ]


def test_an_answer_with_no_quote_matched_keeps_every_source() -> None:
    answer = "“Something.” [1] [2]"
    citations = [_citation(1, quoted=False), _citation(2, quoted=False)]

    assert quoted_sources_only(answer=answer, citations=citations) == (answer, citations)
