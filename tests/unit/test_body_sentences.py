"""The sentences of a body with their offsets and sections, as citations record them."""

from __future__ import annotations

from kb.chunking.spans import body_sentences, section_at

BODY = """# Refund Policy

Intro sentence one. Intro sentence two, e.g. Stripe refunds.

## Monthly plans

- Sign in as the **Owner**.
- Open the invoice and click
  **Request refund**.

| Charge | Refund |
|---|---|
| Monthly renewal | Not refundable |

```
Code. Is not a sentence.
```

> Quoted advice. Second one.
"""


def test_each_sentence_is_its_exact_text_in_the_body() -> None:
    sentences = body_sentences(BODY)

    assert [sentence.text for sentence in sentences] == [
        "Intro sentence one.",
        "Intro sentence two, e.g. Stripe refunds.",
        "Sign in as the **Owner**.",
        "Open the invoice and click\n  **Request refund**.",
        "Charge | Refund",
        "Monthly renewal | Not refundable",
        "Quoted advice.",
        "Second one.",
    ]
    assert all(BODY[s.start : s.end] == s.text for s in sentences)


def test_list_markers_quote_markers_and_outer_pipes_stay_outside_the_span() -> None:
    # given / when
    by_text = {sentence.text: sentence for sentence in body_sentences(BODY)}

    # then: marking a span never touches the markup that makes the block what it is
    assert BODY[by_text["Sign in as the **Owner**."].start - 2 :].startswith("- Sign")
    assert BODY[by_text["Monthly renewal | Not refundable"].start - 2 :].startswith("| Monthly")
    assert BODY[by_text["Quoted advice."].start - 2 :].startswith("> Quoted")


def test_sentences_carry_their_section_and_can_be_limited_to_a_range() -> None:
    start = BODY.index("- Sign")
    end = BODY.index("| Charge")

    sentences = body_sentences(BODY, start=start, end=end)

    assert [s.text[:7] for s in sentences] == ["Sign in", "Open th"]
    assert {s.section for s in sentences} == {"Refund Policy > Monthly plans"}
    assert body_sentences(BODY)[0].section == "Refund Policy"


def test_section_at_names_the_section_an_offset_is_in() -> None:
    assert section_at(BODY, BODY.index("Intro sentence two")) == "Refund Policy"
    assert section_at(BODY, BODY.index("Monthly renewal")) == "Refund Policy > Monthly plans"
    assert section_at("No heading here.", 3) == ""
