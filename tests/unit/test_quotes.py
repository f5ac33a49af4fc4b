"""Which stretch of an answer cites which source, and which sentence of the source it drew on."""

from __future__ import annotations

from assistant.services.quotes import best_sentence, claims_by_source
from kb.chunking.spans import body_sentences

BODY = """## Monthly plans

You can get a **full refund** of your first monthly charge within 30 days. Later monthly
renewals are not refundable. See [Cancellation](cancellation.md) to stop renewals.
"""


def test_quotes_of_the_offline_answerer_belong_to_the_marker_after_them() -> None:
    answer = (
        "From our help center:\n\n"
        "“You can get a full refund of your first monthly charge within 30 days.” [1]\n\n"
        "“Later monthly renewals are not refundable.” [2]"
    )

    claims = claims_by_source(answer)

    assert claims == {
        1: ["You can get a full refund of your first monthly charge within 30 days."],
        2: ["Later monthly renewals are not refundable."],
    }


def test_a_written_answer_cites_per_sentence_and_a_marker_may_name_several() -> None:
    answer = "Refunds take 30 days [1]. Renewals are final [1, 3]. Thanks!"

    claims = claims_by_source(answer)

    assert claims == {
        1: ["Refunds take 30 days.", "Renewals are final."],
        3: ["Renewals are final."],
    }


def test_a_quote_finds_its_own_sentence_despite_markdown_in_the_page() -> None:
    sentences = body_sentences(BODY)

    chosen = best_sentence(
        "You can get a full refund of your first monthly charge within 30 days.", sentences
    )

    assert chosen is not None
    assert BODY[chosen.start : chosen.end].startswith("You can get a **full refund**")
    assert chosen.section == "Monthly plans"


def test_a_paraphrase_finds_the_sentence_it_rewords_and_an_unrelated_claim_none() -> None:
    sentences = body_sentences(BODY)

    paraphrase = best_sentence("Monthly renewals are not refundable later on.", sentences)
    unrelated = best_sentence("Enterprise contracts are invoiced yearly by wire.", sentences)

    assert paraphrase is not None and paraphrase.text.startswith("Later monthly")
    assert unrelated is None


PRICE_TABLE = """## Plan prices

| Plan | Monthly billing | Annual billing | Effective monthly price on annual |
|---|---|---|---|
| Starter | $29 / month | $290 / year | $24.17 |
| Growth | $99 / month | $990 / year | $82.50 |
"""


def test_a_quoted_table_row_is_matched_to_its_row_not_to_the_header() -> None:
    # given: the offline answerer's quote of the Growth row (corpus/plans/plans-and-limits.md),
    # which names the header's columns
    claim = (
        "Plan: Growth; Monthly billing: $99 / month; Annual billing: $990 / year; "
        "Effective monthly price on annual: $82.50"
    )

    # when
    sentence = best_sentence(claim, body_sentences(PRICE_TABLE))

    # then: the highlight is the Growth row (the header shares every column name, not the fact)
    assert sentence is not None
    assert sentence.text.startswith("Growth | $99")
