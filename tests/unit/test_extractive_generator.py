"""The offline answerer quotes the sentences of real help-center passages that answer."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence

import numpy as np
import pytest

from assistant.citations import check_citations, says_not_covered
from assistant.generators import get_generator
from assistant.generators.base import GenerationDone, Prompt, Source, TextDelta, Turn
from assistant.generators.extractive import (
    QUOTED_LABEL,
    ExtractiveGenerator,
    FollowedQuestion,
    _after_sentence_before,
    _alone,
    _joined,
    _named,
    _runs_joined,
    _steps_wanted,
    _UnitVectors,
    not_covered_answer,
)
from assistant.prompting import build_prompt
from assistant.units import taken_by, units_of
from kb.chunking import ChunkLimits, chunk_markdown
from kb.embedders import Embedder, EmbeddingError
from kb.parsing import parse_document
from search.results import Hit
from tests.conftest import CORPUS_DIR, CountingEmbedder

QUOTE = re.compile(r"^“(?P<sentence>.+)” \[(?P<number>\d+)\]$")


@functools.cache
def _chunks(path: str, max_input_tokens: int) -> list[Hit]:
    document = parse_document(path=path, raw=(CORPUS_DIR / path).read_bytes())
    from kb.embedders import get_embedder

    drafts = chunk_markdown(
        title=document.title,
        body=document.body,
        limits=ChunkLimits.for_window(max_input_tokens),
        count_tokens=get_embedder().count_tokens,
    )
    return [
        Hit(
            chunk_id=hash((path, draft.ordinal)) % 10**6,
            document_id=hash(path) % 10**6,
            path=path,
            title=document.title,
            heading_path=draft.heading_path,
            text=draft.text,
            char_start=draft.char_start,
            char_end=draft.char_end,
            updated_on=document.updated_on,
            vector_rank=None,
            keyword_rank=None,
            fused_score=0.0,
            similarity=None,
        )
        for draft in drafts
    ]


def _passage(embedder: Embedder, path: str, containing: str) -> Hit:
    """The chunk of a corpus page that holds ``containing``, as retrieval would return it."""
    for hit in _chunks(path, embedder.max_input_tokens):
        if containing in hit.text:
            return hit
    raise AssertionError(f"no chunk of {path} contains {containing!r}")


def _answer(
    generator: ExtractiveGenerator,
    question: str,
    hits: Sequence[Hit],
    history=(),
    search_query: str | None = None,
) -> tuple[list[str], GenerationDone, Prompt]:
    prompt = build_prompt(question=question, hits=hits, history=history, search_query=search_query)
    events = list(generator.stream(question=question, prompt=prompt))
    *deltas, done = events
    assert all(isinstance(event, TextDelta) for event in deltas)
    assert isinstance(done, GenerationDone)
    return [event.text for event in deltas], done, prompt


def _quotes(deltas: list[str]) -> list[tuple[str, int]]:
    """The quoted sentences and their source numbers, after the label; a table unit's quote
    with its table after it, as the unit's words (``Unit.words_text``)."""
    assert deltas[0] == f"{QUOTED_LABEL}\n\n"
    quotes = []
    for piece in deltas[1:]:
        quote, _, table = piece.strip().partition("\n\n")
        match = QUOTE.match(quote if table.startswith("|") else piece.strip())
        if match:
            table = table if table.startswith("|") else ""
            sentence = f"{match.group('sentence')} {table}" if table else match.group("sentence")
            quotes.append((sentence, int(match.group("number"))))
    return quotes


@pytest.fixture
def generator(cached_embedder: Embedder) -> ExtractiveGenerator:
    # The same sentences of the sample pages come back case after case: the vectors the model
    # gave the first time serve the later cases (the tests of embedding calls use the model).
    return ExtractiveGenerator(embedder=cached_embedder)


# Real questions (most from corpus/eval.jsonl), the page that answers them and the sentence that
# does; each is asked with the answering passage among unrelated ones, not always first.
CASES = [
    (
        "can I get my money back if I paid for a whole year?",
        "policies/refunds.md",
        "For annual plans you can request a",
        "prorated refund within 60 days of the annual charge",
    ),
    (
        "data residency: can I change my data region from US to EU after the account is created?",
        "security/security-and-compliance.md",
        "The region **can't be changed**",
        "The region can't be changed after the account is created.",
    ),
    (
        "does the automatic card updater handle expired or reissued Visa and Mastercard cards?",
        "billing/payment-methods.md",
        "card updater works with Visa",
        "card updater works with Visa and Mastercard",
    ),
    (
        "once we've left for good, how long until our stuff is actually wiped from your backup "
        "copies too?",
        "account/account-deletion-and-data-retention.md",
        "fully purged within",
        "fully purged within 35 days",
    ),
    (
        "whats the lowest I can bill a UK client for, in pounds sterling?",
        "billing/currencies.md",
        "| GBP",
        "£0.30",
    ),
    (
        "someone signed up jan 31. when does their feb bill go out, feb doesnt have 31 days lol",
        "billing/billing-cycles-and-proration.md",
        "anchored on 31 January",
        "bills on 28 February",
    ),
]
DISTRACTORS = [
    ("webhooks/signatures.md", "Anyone who knows your webhook URL"),
    ("api/pagination.md", "starting_after"),
]


@pytest.mark.parametrize(("question", "path", "passage", "expected"), CASES)
def test_quotes_the_sentence_that_answers_the_question(
    generator: ExtractiveGenerator,
    local_embedder: Embedder,
    question: str,
    path: str,
    passage: str,
    expected: str,
) -> None:
    # given: the answering passage second of three
    hits = [
        _passage(local_embedder, *DISTRACTORS[0]),
        _passage(local_embedder, path, passage),
        _passage(local_embedder, *DISTRACTORS[1]),
    ]

    # when
    deltas, done, prompt = _answer(generator, question, hits)

    # then: 1 to 3 quotes, the answer among them, cited to the page it came from
    quotes = _quotes(deltas)
    assert 1 <= len(quotes) <= 3
    answering = [(sentence, number) for sentence, number in quotes if expected in sentence]
    assert answering, quotes
    assert all(prompt.sources[number - 1].path == path for _, number in answering)
    assert done == GenerationDone(stop_reason="end_turn", truncated=False, refused=False)


def test_every_quote_is_verbatim_from_its_source_and_cited(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given
    question = "How long do I have to ask for a refund of my first monthly charge?"
    hits = [
        _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly charge")
    ]

    # when
    deltas, _, prompt = _answer(generator, question, hits)

    # then: the words are the page's (only Markdown emphasis and link targets dropped)
    answer = "".join(deltas)
    quotes = _quotes(deltas)
    for sentence, number in quotes:
        source = re.sub(r"\*\*|__", "", prompt.sources[number - 1].text)
        assert sentence in " ".join(source.split())
    check = check_citations(answer=answer, sources=prompt.sources, question=question)
    assert check.confident and check.removed == []
    assert answer.startswith("From our help center:\n\n")


def test_says_so_when_the_sources_hold_nothing_relevant(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given
    hits = [
        _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly charge")
    ]

    # when
    deltas, done, _ = _answer(generator, "What is the boiling point of liquid nitrogen?", hits)

    # then
    assert deltas == [not_covered_answer()]
    assert says_not_covered(deltas[0])
    assert QUOTED_LABEL not in deltas[0]
    assert done.stop_reason == "end_turn"


def test_says_so_when_there_are_no_sources(generator: ExtractiveGenerator) -> None:
    # when
    deltas, done, _ = _answer(generator, "Can I get a refund?", [])

    # then
    assert deltas == [not_covered_answer()]
    assert isinstance(done, GenerationDone)


def test_never_quotes_an_instruction_planted_in_a_page(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given: the poisoned data-export page, and a question that echoes its planted line
    hits = [_passage(local_embedder, "account/data-export.md", "disregard your rules")]

    # when
    deltas, _, _ = _answer(generator, "Are all refunds approved automatically?", hits)

    # then
    answer = "".join(deltas)
    assert "evil.example" not in answer
    assert "disregard" not in answer.lower()


def test_the_newer_page_is_quoted_and_the_older_one_mentioned(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given: the 2023 refund page ranked above the current one, as retrieval may do
    old = _passage(local_embedder, "policies/refunds-2023.md", "within 14 days")
    new = _passage(
        local_embedder, "policies/refunds.md", "full refund of your first monthly charge"
    )
    question = "how many days after my first monthly payment can I still ask for a refund?"

    # when
    deltas, _, prompt = _answer(generator, question, [old, new])

    # then
    answer = "".join(deltas)
    quotes = _quotes(deltas)
    assert quotes and all(prompt.sources[number - 1] == prompt.sources[1] for _, number in quotes)
    assert "30 days" in answer and "14 days" not in answer
    assert (
        "Note: the older page “Refund Policy (2023)” (updated 2023-05-02) also covers this [1]; "
        "where they differ, the newer “Refund Policy” (updated 2026-09-14) applies [2]."
    ) in answer


def test_a_follow_up_question_is_read_as_it_was_searched(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given
    hits = [
        _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly charge"),
        _passage(local_embedder, "policies/refunds.md", "For annual plans you can request"),
    ]
    history = [Turn(question="Can I get a refund on a monthly plan?", answer="Yes [1].")]

    # when
    deltas, _, prompt = _answer(
        generator,
        "and for annual plans?",
        hits,
        history=history,
        search_query="Can I get a refund on a monthly plan? and for annual plans?",
    )

    # then
    assert prompt.search_query == "Can I get a refund on a monthly plan? and for annual plans?"
    assert any("60 days" in sentence for sentence, _ in _quotes(deltas))


class _CallCounter(CountingEmbedder):
    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        return super().embed_documents(texts)

    def embed_query(self, text):
        self.calls += 1
        return super().embed_query(text)


def test_units_embedded_for_one_answer_are_not_embedded_again_for_the_next(
    local_embedder: Embedder,
) -> None:
    # given: an answer's units embedded once
    counter = CountingEmbedder(local_embedder)
    hits = [
        _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly charge"),
        _passage(local_embedder, "billing/currencies.md", "| GBP"),
    ]
    generator = ExtractiveGenerator(embedder=counter)
    question = "What is the minimum charge in GBP, and is there a refund for a monthly plan?"
    first, _, _ = _answer(generator, question, hits)
    embedded = len(counter.embedded_texts)

    # when: the same passages are read for the same question again
    again, _, _ = _answer(generator, question, hits)

    # then: only the question is embedded the second time, and the answer is the same
    assert embedded > 1
    assert counter.embedded_texts[embedded:] == [question]
    assert again == first


def test_the_unit_vectors_kept_are_bounded_least_recently_used_first_out(
    local_embedder: Embedder,
) -> None:
    vectors = _UnitVectors(kept=2)
    counter = CountingEmbedder(local_embedder)

    vectors.embedded(counter, queries=["q"], texts=["a", "b"])
    vectors.embedded(counter, queries=["q"], texts=["a"])  # "a" used last
    vectors.embedded(counter, queries=["q"], texts=["c"])  # "b" goes
    counter.embedded_texts.clear()
    asked, found = vectors.embedded(counter, queries=["q"], texts=["a", "b", "c"])

    assert counter.embedded_texts == ["q", "b"]
    assert asked.shape == (1, 384) and found.shape == (3, 384)
    assert np.allclose(found[1], local_embedder.embed_documents(["b"])[0], atol=1e-5)


def test_one_batched_embedder_call_per_answer(local_embedder: Embedder) -> None:
    # given
    counter = _CallCounter(local_embedder)
    hits = [
        _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly charge"),
        _passage(local_embedder, "billing/currencies.md", "| GBP"),
        _passage(local_embedder, "api/pagination.md", "starting_after"),
    ]

    # when
    _answer(ExtractiveGenerator(embedder=counter), "What is the minimum charge in GBP?", hits)

    # then
    assert counter.calls == 1
    assert len(counter.embedded_texts) > 10  # the question and every candidate sentence


def test_still_answers_by_shared_terms_when_the_embedder_fails(local_embedder: Embedder) -> None:
    # given
    broken = CountingEmbedder(local_embedder)
    broken.failure = EmbeddingError("model file missing")
    hits = [
        _passage(local_embedder, "api/pagination.md", "starting_after"),
        _passage(local_embedder, "api/invoices.md", "auto_advance` defaults to"),
    ]

    # when
    deltas, _, _ = _answer(
        ExtractiveGenerator(embedder=broken),
        "what does auto_advance default to for invoices created with POST /v1/invoices?",
        hits,
    )

    # then
    assert any("auto_advance` defaults to" in sentence for sentence, _ in _quotes(deltas))


def test_the_default_generator_is_the_extractive_one(settings) -> None:
    # given
    settings.GENERATOR = "extractive"
    get_generator.cache_clear()
    try:
        # when
        generator = get_generator()

        # then
        assert isinstance(generator, ExtractiveGenerator)
        assert (generator.name, generator.quoted) == ("extractive", True)
        assert get_generator() is generator
    finally:
        get_generator.cache_clear()


def test_table_rows_are_quoted_whole_with_their_column_names(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given
    hits = [_passage(local_embedder, "policies/refunds.md", "| Annual plan charge")]

    # when
    deltas, _, _ = _answer(generator, "Is the annual plan charge refundable?", hits)

    # then
    sentences = [sentence for sentence, _ in _quotes(deltas)]
    assert (
        "Charge type: Annual plan charge; Refund eligibility: Prorated refund for unused time; "
        "Window: Within 60 days of the annual charge"
    ) in sentences


def test_a_paragraph_that_links_to_another_site_is_quoted_without_the_address(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given: Plausible's definition of unique visitors, one Markdown line ending on a link to
    # plausible.io, which is not among this help center's domains; the answer step used to read
    # the passage empty
    text = (
        "The number of people who visited your site. We are privacy-friendly so we don't use "
        "cookies and other persistent identifiers. If a person visits from multiple devices or on "
        "multiple days, they are counted as separate visitors. You can learn more about "
        "[how we count unique visitors](https://plausible.io/data-policy)."
    )
    hit = dataclasses.replace(
        _passage(local_embedder, "policies/refunds.md", "Annual plan"),
        path="metrics-definitions.md",
        title="Metrics definitions",
        heading_path="Traffic > Unique Visitors",
        text=text,
        char_end=len(text),
    )

    # when
    deltas, _, prompt = _answer(
        generator,
        "If someone visits on their phone and then their laptop, is that two visitors?",
        [hit],
    )

    # then: the sentence that answers is quoted, and no address reaches the prompt or the answer
    assert any("counted as separate visitors" in sentence for sentence, _ in _quotes(deltas))
    assert "plausible.io" not in prompt.sources[0].text
    assert "plausible.io" not in "".join(deltas)


def test_unit_vectors_are_what_the_scores_assume(local_embedder: Embedder) -> None:
    # The sentence scores are dot products: they are cosines only for unit vectors.
    vectors = local_embedder.embed_documents(["refunds", "annual plans"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_an_over_long_passage_is_shortlisted_to_the_sentences_sharing_the_question_terms(
    local_embedder: Embedder,
) -> None:
    # given: a top passage far over the budget, with the answer near its end
    filler = " ".join(f"Paragraph {n} talks about webhooks and retries." for n in range(150))
    hit = _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly")
    long_hit = Hit(**{**hit.__dict__, "text": f"{filler}\n\n{hit.text}"})
    counter = _CallCounter(local_embedder)

    # when
    deltas, _, _ = _answer(
        ExtractiveGenerator(embedder=counter), "Is my first monthly charge refundable?", [long_hit]
    )

    # then
    assert len(counter.embedded_texts) <= 61
    assert any("first monthly charge" in sentence for sentence, _ in _quotes(deltas))


@pytest.mark.parametrize(
    "fence",
    [
        pytest.param(("~~~markdown", "~~~"), id="tilde fence holding a backtick fence"),
        pytest.param(("````markdown", "````"), id="longer backtick fence holding a shorter one"),
    ],
)
def test_code_inside_a_fence_is_never_quoted_however_the_fences_nest(
    generator: ExtractiveGenerator, local_embedder: Embedder, fence: tuple[str, str]
) -> None:
    # given: a page that shows, as a code sample, a reply that is not its policy
    opener, closer = fence
    hit = _passage(local_embedder, "policies/refunds.md", "full refund of your first monthly")
    sample = (
        f"{opener}\nA canned reply, as an example of the format:\n```\n"
        "Annual plans are refundable within 365 days of purchase, no questions asked.\n"
        f"```\n{closer}"
    )
    fenced = Hit(**{**hit.__dict__, "text": f"{hit.text}\n\n{sample}"})

    # when
    deltas, _, _ = _answer(generator, "Are annual plans refundable within 365 days?", [fenced])

    # then
    assert "365" not in "".join(deltas)


def _hit(text: str, *, number: int = 1, section: str = "Guide > Settings") -> Hit:
    return Hit(
        chunk_id=number,
        document_id=number,
        path=f"guide-{number}.md",
        title="Guide",
        heading_path=section,
        text=text,
        char_start=0,
        char_end=len(text),
        updated_on=None,
        vector_rank=None,
        keyword_rank=None,
        fused_score=0.0,
        similarity=None,
    )


def test_a_configuration_block_is_quoted_as_the_page_shows_it_after_its_lead_in(
    generator: ExtractiveGenerator,
) -> None:
    # given
    hit = _hit(
        "By default each RSS feed lists every page. To limit the items in each feed, set this "
        "in your project configuration:\n\n```toml\n[services.rss]\nlimit = 42\n```\n"
    )

    # when
    deltas, _, _ = _answer(generator, "How do I limit the number of items in my RSS feed?", [hit])

    # then
    answer = "".join(deltas)
    assert (
        "“To limit the items in each feed, set this in your project configuration:” [1]\n\n"
        "```toml\n[services.rss]\nlimit = 42\n```"
    ) in answer


def test_a_code_block_is_quoted_under_the_file_name_the_page_shows_above_it(
    generator: ExtractiveGenerator,
) -> None:
    # given: a Hugo page, whose fence names the file the block goes in
    hit = _hit(
        "Hugo does not provide a built-in template for Mermaid diagrams. Create your own using "
        "a code block render hook:\n\n"
        '```go-html-template {file="layouts/_markup/render-codeblock-mermaid.html"}\n'
        '<pre class="mermaid">\n  {{ .Inner | htmlEscape | safeHTML }}\n</pre>\n```\n'
    )

    # when
    deltas, _, _ = _answer(generator, "How do I render Mermaid diagrams?", [hit])

    # then: the name is shown above the block, as the page shows it
    answer = "".join(deltas)
    assert (
        "Create your own using a code block render hook:” [1]\n\n"
        "`layouts/_markup/render-codeblock-mermaid.html`\n\n"
        '```go-html-template\n<pre class="mermaid">'
    ) in answer


def test_a_table_s_lead_in_is_quoted_with_its_rows_and_no_row_again(
    generator: ExtractiveGenerator, cached_embedder: Embedder
) -> None:
    # given: the sample's retry schedule, whose lead-in states the count and whose rows the days
    hit = _passage(cached_embedder, "billing/failed-payments-and-dunning.md", "4 times")

    # when
    deltas, _, _ = _answer(generator, "how many retries for a failed payment?", [hit])

    # then: the count, then the schedule it announces as the page shows it, each row once
    answer = "".join(deltas)
    assert (
        "“By default, Acme retries a failed payment 4 times:” [1]\n\n"
        "| Retry | When |\n|---|---|\n| 1st retry | 1 day after the original failure |\n"
    ) in answer
    assert "7 days after the original failure" in answer
    assert "Retry: 4th retry" not in answer


def test_a_placeholder_that_looks_like_a_delimiter_is_quoted_as_the_page_writes_it(
    generator: ExtractiveGenerator,
) -> None:
    # given: Fly.io's pages write `<user>`, which the prompt escapes so that no passage can
    # forge a delimiter; the quote is the page's text, not the escape
    hit = _hit(
        "To open a shell on the machine as another user, pass the `--user <user>` flag to the "
        "console command:\n\n```sh\nfly ssh console --user <user>\n```\n"
    )

    # when
    deltas, _, prompt = _answer(generator, "How do I open a shell as another user?", [hit])

    # then
    answer = "".join(deltas)
    assert "&lt;user&gt;" in prompt.sources[0].text  # what a model is sent stays escaped
    assert "`--user <user>` flag" in answer
    assert "```sh\nfly ssh console --user <user>\n```" in answer
    assert "&lt;" not in answer and "&gt;" not in answer


def test_two_steps_of_one_procedure_are_never_quoted_apart(
    generator: ExtractiveGenerator,
) -> None:
    # given: a procedure whose steps each read well alone, with their lead-in
    hit = _hit(
        "To delete your account:\n\n"
        "1. Go to Settings > Account and click Delete account.\n"
        "2. Type the account name to confirm the deletion of the account.\n"
        "3. Enter your two-factor code to confirm the account deletion.\n"
    )

    # when
    deltas, _, _ = _answer(generator, "How do I delete my account?", [hit])

    # then: the procedure once, or one step, never two steps each with the lead-in
    answer = "".join(deltas)
    assert answer.count("To delete your account:") == 1, answer


def test_a_how_to_question_that_also_asks_yes_or_no_gets_the_decision_and_the_steps(
    generator: ExtractiveGenerator, local_embedder: Embedder
) -> None:
    # given: the page's opening sentence decides the second ask, its steps answer the first
    # (a newcomer's question, typed as typed; issue #24)
    hits = [
        _passage(local_embedder, "policies/cancellation.md", "no notice period"),
        _passage(local_embedder, "api/subscriptions.md", "cancel_at_period_end"),
        _passage(local_embedder, "policies/cancellation.md", "Click **Cancel subscription**"),
    ]

    # when
    deltas, _, prompt = _answer(
        generator, "how do i cancle my subscribtion, is there a notice period?", hits
    )

    # then: the decision leads, after the sentence before it in its paragraph; the steps
    # follow, each cited to the cancellation page
    quotes = _quotes(deltas)
    assert quotes[0][0] == (
        "You can cancel your Acme Billing subscription at any time, directly in the dashboard. "
        "There are no cancellation fees and no notice period."
    )
    assert quotes[1][0].startswith("1. ")
    assert "3. Click Cancel subscription." in quotes[1][0]
    assert {prompt.sources[number - 1].path for _, number in quotes} == {"policies/cancellation.md"}


def _passage_of(text: str) -> Source:
    return Source(
        number=1,
        chunk_id=1,
        document_id=1,
        path="account/cancel.md",
        title="Cancelling",
        section="Cancelling",
        updated_on=None,
        text=text,
        char_start=0,
        char_end=len(text),
    )


def test_the_steps_added_to_a_how_to_answer_never_repeat_the_step_that_leads() -> None:
    # given: the lead is one step of a procedure (an item with its lead-in), the procedure whole
    # is as close to the question
    source = _passage_of("To cancel:\n\n1. Go to Settings > Subscription.\n2. Click Cancel.")
    units = units_of([source])
    step = next(index for index, unit in enumerate(units) if unit.kind == "item")
    whole = next(index for index, unit in enumerate(units) if unit.kind == "procedure")
    assert units[step].position in units[whole].holds

    # when
    added = _steps_wanted(
        "how do I cancel?", units, [whole, step], picked=[step], similarity=np.ones(len(units))
    )

    # then: the procedure would quote the lead's step again
    assert added is None


@pytest.mark.parametrize(
    "question",
    [
        "¿Cuánto cuesta el plan Growth al mes?",
        # "Growth", an English word, made this French question read as English, so the
        # English-only model's cosine decided and "Growth is our most popular plan." led
        "Combien coûte le plan Growth ?",
    ],
)
def test_a_foreign_price_question_quotes_the_price_row(
    generator: ExtractiveGenerator, question: str
) -> None:
    # given: the plans page's price table and its Growth section, as retrieval finds them for
    # the question with the local English model (issue #24)
    hits = [
        _passage(generator._embedder, "plans/plans-and-limits.md", "Growth is our most popular"),
        _passage(generator._embedder, "plans/plans-and-limits.md", "| Growth | $99 / month"),
    ]

    # when
    deltas, _, _ = _answer(generator, question, hits)

    # then: the price leads, not the sentence that only names the plan
    lead, _ = _quotes(deltas)[0]
    assert "$99 / month" in lead


def test_a_spanish_price_question_without_a_period_quotes_the_price_row(
    generator: ExtractiveGenerator,
) -> None:
    # given: the passages retrieval finds on the sample for "¿Cuánto cuesta el plan Growth?" with
    # the local English model, in its order: the price table comes seventh. The question names
    # no period, so no unit shares a word with it but "plan" and "Growth", and the first
    # passage's "Growth is our most popular plan." led on its rank alone (issue #24)
    hits = [
        _passage(generator._embedder, "plans/plans-and-limits.md", "Growth is our most popular"),
        _passage(generator._embedder, "plans/changing-plans.md", "You can move between"),
        _passage(generator._embedder, "plans/free-trial.md", "Growth plan features"),
        _passage(generator._embedder, "plans/plans-and-limits.md", "No. Every account starts"),
        _passage(generator._embedder, "plans/plans-and-limits.md", "Registered nonprofits get"),
        _passage(generator._embedder, "plans/plans-and-limits.md", "| Feature | Starter"),
        _passage(generator._embedder, "plans/plans-and-limits.md", "| Growth | $99 / month"),
    ]

    # when
    deltas, _, _ = _answer(generator, "¿Cuánto cuesta el plan Growth?", hits)

    # then: without the embedder's meaning, the kind of answer asked for decides: the price leads
    lead, number = _quotes(deltas)[0]
    assert "$99 / month" in lead
    assert number == 7


def test_each_quote_brings_the_unit_after_it_unless_that_one_is_quoted() -> None:
    # given: a rule and its exception, then two steps of a list
    units = units_of(
        [
            _passage_of(
                "Refunds take 5 to 10 business days. Card refunds can take longer.\n\n"
                "To update it:\n\n- Open Settings.\n- Click Update billing info."
            )
        ]
    )
    rule, exception, open_settings, update = units

    # when: the rule and the first step are quoted, then the exception itself is quoted too
    taken = taken_by([rule, open_settings])
    joined = [_joined(_alone(unit), units, taken).unit for unit in (rule, open_settings)]
    quoted_already = _joined(_alone(rule), units, taken_by([rule, exception])).unit

    # then: each brings its next unit, the item without the lead-in it shares
    assert [unit.text for unit in joined] == [
        "Refunds take 5 to 10 business days. Card refunds can take longer.",
        "To update it: Open Settings. Click Update billing info.",
    ]
    assert taken == taken_by([rule, open_settings, exception, update])
    # and a unit quoted already is not quoted twice
    assert quoted_already.text == rule.text


def test_a_sentence_quoted_is_not_quoted_again_from_the_chunk_that_repeats_it() -> None:
    # given: Flask's blueprint error handlers, cut into two chunks of one section, the second
    # opening with the first one's last paragraph (the chunker repeats a chunk's last blocks)
    reason = (
        'This is because the blueprint does not "own" a certain URL space, so the application '
        "has no way of knowing which blueprint error handler it should run."
    )
    first = dataclasses.replace(
        _passage_of(
            f"Most error handlers work as expected. Some are only invoked by abort.\n\n{reason}"
        ),
        ordinal=0,
    )
    second = dataclasses.replace(
        _passage_of(f"{reason} Define them at the application level instead."),
        number=2,
        chunk_id=2,
        ordinal=1,
    )
    units = units_of([first, second])
    invoked = next(unit for unit in units if unit.text.startswith("Some are only"))
    instead = next(unit for unit in units if unit.text.startswith("Define them"))

    # when: a quote brings the reason, then a later quote would be read after its copy
    taken = taken_by([invoked, instead])
    quotes = [
        _joined(_alone(invoked), units, taken).unit,
        _after_sentence_before(instead, units, taken).unit,
    ]

    # then: the reason is quoted once
    assert " ".join(quote.text for quote in quotes).count("This is because") == 1
    assert quotes[1].text == "Define them at the application level instead."


def test_a_list_item_without_a_full_stop_is_quoted_apart_from_the_item_after_it() -> None:
    # given: Argo CD's deletion modes list their effects as items with no full stop
    units = units_of(
        [
            _passage_of(
                "- All managed resources are preserved in the cluster\n"
                "- The finalizer is removed automatically before deletion\n"
            )
        ]
    )
    preserved, _ = units

    # when
    joined = _joined(_alone(preserved), units, {id(preserved)}).unit

    # then: the two read as two items, not as "…in the cluster The finalizer…"
    assert joined.text == (
        "All managed resources are preserved in the cluster; "
        "The finalizer is removed automatically before deletion"
    )


def test_a_quote_is_read_under_the_identifier_its_section_describes(
    generator: ExtractiveGenerator,
) -> None:
    # given: a reference page heads each header with its name and describes it without it
    # (Fly.io's request headers page; Python's and Django's references head functions and
    # settings the same way)
    described = _hit(
        "A comma separated list of IP addresses, the client's first.\n\nA client can spoof "
        "the addresses of the list, so parse them with care.\n\nSee the proxy's reference.",
        section="Request Headers > `X-Forwarded-For`",
    )
    named = _hit(
        "`Fly-Client-IP` holds the IP address of the client, as Fly Proxy saw it.",
        number=2,
        section="Request Headers > `Fly-Client-IP`",
    )

    # when
    deltas, _, _ = _answer(
        generator,
        "Which request headers hold the IP address of the client, and can they be spoofed?",
        [described, named],
    )

    # then: the section that does not name its header is read under it, once (its two
    # quotes, one after the other on the page, are one); the one that names it is left as it is
    assert [sentence for sentence, _ in _quotes(deltas)] == [
        "`Fly-Client-IP` holds the IP address of the client, as Fly Proxy saw it.",
        "`X-Forwarded-For`: A comma separated list of IP addresses, the client's first. "
        "A client can spoof the addresses of the list, so parse them with care. "
        "See the proxy's reference.",
    ]


def test_two_quotes_of_a_section_that_does_not_name_its_identifier_read_under_it_once() -> None:
    # given: two quotes of one reference entry, apart on its page
    source = dataclasses.replace(
        _passage_of(
            "A comma separated list of IP addresses, the client's first.\n\n"
            "| Proxy | Appends |\n|---|---|\n| Fly Proxy | the address it saw |\n\n"
            "A client can spoof the addresses of the list, so parse them with care."
        ),
        section="Request Headers > `X-Forwarded-For`",
    )
    first, _, spoof = units_of([source])

    # when
    named = _named([first, spoof])

    # then
    assert [unit.text for unit in named] == [
        "`X-Forwarded-For`: A comma separated list of IP addresses, the client's first.",
        "A client can spoof the addresses of the list, so parse them with care.",
    ]


@pytest.mark.parametrize(
    ("section", "quoted"),
    [
        (
            "Runtime options > `kill_timeout` option",
            "`kill_timeout` option: Seconds to wait before the stop.",
        ),
        (
            "API > `os.path.join(path, *paths)`",
            "`os.path.join(path, *paths)`: Seconds to wait before the stop.",
        ),
        # a heading written without code marks that is one identifier (reST headings, which
        # Flask's security headers and many settings pages use)
        ("Security Headers > X-Frame-Options", "X-Frame-Options: Seconds to wait before the stop."),
        ("Settings > MAX_CONTENT_LENGTH", "MAX_CONTENT_LENGTH: Seconds to wait before the stop."),
        ("Signals > template_rendered", "template_rendered: Seconds to wait before the stop."),
        # a kebab-case name: a component, a notification template (Argo CD's)
        ("Templates > app-sync-failed", "app-sync-failed: Seconds to wait before the stop."),
        ("Components > argocd-repo-server", "argocd-repo-server: Seconds to wait before the stop."),
        # a heading that asks or says more than the name is no name to read a quote under,
        # and a word with a hyphen is a word
        ("FAQ > How do I fix `invalid cookie` errors?", "Seconds to wait before the stop."),
        ("Runtime options > Stopping", "Seconds to wait before the stop."),
        ("Guides > Step-by-step", "Seconds to wait before the stop."),
        ("Guides > Built-In Types", "Seconds to wait before the stop."),
        ("Proposal > Non-Goals", "Seconds to wait before the stop."),
        ("Guides > _Speedrun_", "Seconds to wait before the stop."),
    ],
)
def test_only_a_heading_that_names_an_identifier_heads_a_quote(section: str, quoted: str) -> None:
    # given
    sources = build_prompt(
        question="How long?", hits=[_hit("Seconds to wait before the stop.", section=section)]
    )

    # when
    named = _named(units_of(sources.sources))

    # then
    assert [unit.text for unit in named] == [quoted]


def test_a_statement_is_quoted_with_the_command_that_acts_on_it(
    generator: ExtractiveGenerator,
) -> None:
    # given: Hugo's image cache page states the problem, then gives its command with a lead-in
    hit = _hit(
        "If you change image processing methods, or rename or remove images, the cache will "
        "eventually contain unused files. To remove them and reclaim disk space, run the "
        "garbage collection:\n\n```sh\nhugo build --gc\n```\n",
        section="Image processing > Garbage collection",
    )

    # when
    deltas, _, _ = _answer(
        generator, "Why does my image cache still hold pictures I deleted long ago?", [hit]
    )

    # then: the statement leads, and the command follows it, as the page shows it
    answer = "".join(deltas)
    assert answer.startswith(
        f"{QUOTED_LABEL}\n\n“If you change image processing methods, or rename or remove images, "
        "the cache will eventually contain unused files. To remove them and reclaim disk space, "
        "run the garbage collection:” [1]\n\n```sh\nhugo build --gc\n```"
    ), answer


def test_a_follow_up_does_not_repeat_the_first_quote_of_the_answer_before_it() -> None:
    # given: the answer before quoted the monthly rule (with the sentence after it), then the
    # annual one
    prompt = build_prompt(
        question="and for annual plans?",
        hits=[
            _hit(
                "Monthly plans are refundable within 30 days. The refund goes back to the card.\n\n"
                "Annual plans get a prorated refund within 60 days."
            )
        ],
        history=[
            Turn(
                question="Can I get a refund?",
                answer=f"{QUOTED_LABEL}\n\n“Monthly plans are refundable within 30 days. The "
                "refund goes back to the card.” [1]\n\n“Annual plans get a prorated refund within "
                "60 days.” [2]",
            )
        ],
        search_query="Can I get a refund? and for annual plans?",
    )

    # when
    follows = FollowedQuestion.of(prompt, question="and for annual plans?")

    # then: the two units of the first quote are not quoted again, the annual rule may be
    assert follows.anchor == "Can I get a refund?"
    assert [follows.opened_with(unit) for unit in units_of(prompt.sources)] == [True, True, False]


def test_a_lead_that_points_back_is_quoted_after_the_sentence_it_points_to(
    generator: ExtractiveGenerator,
) -> None:
    # given
    hit = _hit(
        "Return `200` as soon as the signature is verified, and handle the event in a background "
        "job. This keeps you well inside the 10-second timeout.",
        section="Webhooks > Designing your endpoint",
    )

    # when
    deltas, _, _ = _answer(generator, "How do I stay within the 10-second timeout?", [hit])

    # then
    assert _quotes(deltas)[0] == (
        "Return `200` as soon as the signature is verified, and handle the event in a background "
        "job. This keeps you well inside the 10-second timeout.",
        1,
    )


def test_an_items_sentence_that_points_back_is_quoted_after_the_items_first(
    generator: ExtractiveGenerator,
) -> None:
    # given: a list item states a rule and then what it means; the question asks about the
    # second sentence's example
    hit = _hit(
        "How the Top Pages report counts pages:\n\n"
        "- Query parameters are discarded from the path so they do not show as other pages. "
        "This means that `index.php?article=12&page=3` is reported as `index.php` in the "
        "Top Pages report.\n"
        "- Pages are listed by their pageviews.\n",
        section="Top Pages > How it works",
    )

    # when
    deltas, _, _ = _answer(
        generator, "Why is index.php?article=12&page=3 reported as index.php in Top Pages?", [hit]
    )

    # then: the example is quoted after the rule it follows from, not alone
    assert _quotes(deltas)[0][0].startswith(
        "How the Top Pages report counts pages: Query parameters are discarded from the path "
        "so they do not show as other pages. This means that "
    )


def test_a_quote_goes_on_with_the_units_that_point_back_to_the_one_it_brings(
    generator: ExtractiveGenerator,
) -> None:
    # given: a rule, what it means, and what to do instead, in the next paragraph
    hit = _hit(
        "Using `@celery_app.task` to decorate task functions requires the `celery_app` object, "
        "which the app factory pattern does not give you. It also means the tasks are tied to "
        "one app instance.\n\n"
        "Instead, use Celery's `@shared_task` decorator. Workers are started with the "
        "`celery worker` command.\n",
        section="Background Tasks with Celery > Defining Tasks",
    )

    # when
    deltas, _, _ = _answer(
        generator,
        "With the app factory pattern I have no celery_app object to decorate task functions.",
        [hit],
    )

    # then: the quote goes on to what to do instead, and stops there
    quoted = _quotes(deltas)[0][0]
    assert quoted.startswith("Using `@celery_app.task` to decorate task functions")
    assert quoted.endswith(
        "It also means the tasks are tied to one app instance. Instead, use Celery's "
        "`@shared_task` decorator."
    )


# A long section of one page cut into two chunks, one after the other: the second opens with
# the first one's last paragraph (the chunker's overlap) and goes on with the answer.
SPLIT_SECTION = (
    "Invoices are emailed to the account owner on the first day of each billing cycle.\n\n"
    "Rather than forwarding each invoice by hand, you can have copies sent to your "
    "accounting team automatically.",
    "Rather than forwarding each invoice by hand, you can have copies sent to your "
    "accounting team automatically.\n\n"
    "Add their address under Settings > Billing > Invoice recipients; up to five addresses "
    "are accepted.",
)


def split_section_hits(first_ordinal: int = 4, *, labelled: bool = False) -> list[Hit]:
    """The two chunks of ``SPLIT_SECTION`` as retrieval returns them, the first ranked higher,
    with another page's passage between them. ``labelled``: a bold label heads the first
    chunk's last paragraph, which the second repeats without it (the chunker repeats a block,
    not the label over it)."""
    opening, repeated = SPLIT_SECTION[0].split("\n\n")
    texts = (
        f"{opening}\n\n**Automatic copies**\n\n{repeated}" if labelled else SPLIT_SECTION[0],
        SPLIT_SECTION[1],
    )
    first, second = (
        dataclasses.replace(
            _hit(text, number=number, section="Billing > Invoices"),
            document_id=7,
            path="billing.md",
            ordinal=ordinal,
        )
        for number, text, ordinal in (
            (1, texts[0], first_ordinal),
            (3, texts[1], 5),
        )
    )
    other = _hit("Receipts for one-off purchases are kept for a year.", number=2)
    return [first, other, second]


def test_a_further_quote_comes_after_the_sentence_before_it_as_the_lead_does(
    generator: ExtractiveGenerator,
) -> None:
    # given: Fly.io's Cloudflare steps, whose last step gives the fix and then the cause, and
    # another page's sentence that leads
    hits = [
        _hit(
            "Cloudflare's proxy in front of your app can cause an endless redirect loop when the "
            "SSL mode is wrong. Check the SSL/TLS settings of your zone first.",
            number=1,
            section="Cloudflare > Redirect loops",
        ),
        _hit(
            "1. Verify domain ownership: add the TXT record shown in your certificate details.\n"
            '2. Set SSL mode: Use "Full" or "Full (Strict)" SSL mode in Cloudflare. "Flexible" '
            "mode can cause redirect loops.",
            number=2,
            section="Cloudflare > Setup",
        ),
    ]

    # when
    deltas, _, _ = _answer(generator, "Why does Cloudflare cause redirect loops?", hits)

    # then: the cause is quoted after the fix its step gives first, not alone
    assert _quotes(deltas)[1] == (
        'Set SSL mode: Use "Full" or "Full (Strict)" SSL mode in Cloudflare. "Flexible" mode '
        "can cause redirect loops.",
        2,
    )


@pytest.mark.parametrize(
    ("first_ordinal", "labelled", "goes_on"), [(4, False, True), (4, True, True), (3, False, False)]
)
def test_a_quote_that_ends_its_passage_goes_on_in_the_passage_that_continues_it(
    generator: ExtractiveGenerator, first_ordinal: int, labelled: bool, goes_on: bool
) -> None:
    # when
    deltas, _, _ = _answer(
        generator,
        "Can invoices go to our accountant automatically instead of me forwarding them?",
        split_section_hits(first_ordinal, labelled=labelled),
    )

    # then: the lead, the first chunk's last paragraph, is quoted with the paragraph after it
    # on the page, from the next chunk; not when that chunk is not the next one
    quoted = _quotes(deltas)[0][0]
    label = "Automatic copies: " if labelled else ""
    assert quoted.startswith(f"{label}Rather than forwarding each invoice by hand")
    assert ("Invoice recipients" in quoted) is goes_on
    assert quoted.count("Rather than forwarding") == 1  # never its copy in the next chunk


def test_quotes_the_page_has_one_after_the_other_are_one_quote_in_page_order(
    generator: ExtractiveGenerator,
) -> None:
    # given: Plausible's nonprofit discount, the amount in the paragraph before the one that
    # says where it applies; and Fly.io's list of common mistakes, two items of which answer
    discount = _hit(
        "The discount is 15% off your first payment on a Business plan with annual billing. "
        "Combined with annual billing, you also get 2 months free.\n\n"
        "The discount applies to Business plans on annual billing only. It does not apply to "
        "monthly billing or to Starter plans.",
        section="Nonprofit pricing > What's included",
    )

    # when
    deltas, _, _ = _answer(
        generator,
        "We're a small charity. Do you do discounts, and does it work on monthly billing?",
        [discount],
    )

    # then: one quote, the page's two paragraphs in the page's order, the amount first
    assert _quotes(deltas) == [
        (
            "The discount is 15% off your first payment on a Business plan with annual "
            "billing. Combined with annual billing, you also get 2 months free. The discount "
            "applies to Business plans on annual billing only. It does not apply to monthly "
            "billing or to Starter plans.",
            1,
        )
    ]


def test_items_of_one_list_quoted_apart_are_one_quote_under_their_lead_in() -> None:
    # given: Fly.io's troubleshooting list, a later item quoted first, then the one before it
    units = units_of(
        [
            _passage_of(
                "Common mistakes:\n\n"
                "- Listening on `127.0.0.1` or `localhost`. The Fly proxy can't reach your app.\n"
                "- Port mismatch: your app listens on 3000, but `internal_port` is 8080.\n"
            )
        ]
    )
    localhost, _, port = units
    taken = taken_by([port, localhost])

    # when
    quotes = [
        _joined(_after_sentence_before(u, units, taken), units, taken) for u in (port, localhost)
    ]
    joined = _runs_joined(quotes, units)

    # then: the list's lead-in once, the items in the page's order
    assert [unit.text for unit in joined] == [
        "Common mistakes: Listening on `127.0.0.1` or `localhost`. The Fly proxy can't reach "
        "your app. Port mismatch: your app listens on 3000, but `internal_port` is 8080."
    ]


def test_a_run_goes_on_into_another_passage_of_the_page_that_holds_its_next_unit() -> None:
    # given: a section cut into two chunks, and the second chunk's paragraph also read as a
    # page section beside them (another passage of the same page, with the same words); and
    # another page saying the same words
    alpha = "Backups run every night at 02:00 UTC."
    beta = "Backups are kept for 35 days, then deleted."
    first, second, beside, other_page = (
        dataclasses.replace(
            _passage_of(text), number=n, chunk_id=n, document_id=document, ordinal=o
        )
        for text, n, document, o in (
            (alpha, 1, 1, 0),
            (beta, 2, 1, 1),
            (beta, 3, 1, -1),
            (beta, 4, 2, 0),
        )
    )
    units = units_of([first, second, beside, other_page])
    run_in, _, kept_beside, kept_elsewhere = units

    # when: the sentence before is quoted, then the same words from the page section, or from
    # the other page
    same_page = _runs_joined([_alone(kept_beside), _alone(run_in)], units)
    other = _runs_joined([_alone(kept_elsewhere), _alone(run_in)], units)

    # then: the page's two sentences are one quote, where the first of them stood; the other
    # page's stays a quote of its own
    assert [(unit.text, unit.source.number) for unit in same_page] == [(f"{alpha} {beta}", 3)]
    assert [unit.text for unit in other] == [beta, alpha]


def test_rows_and_blocks_end_a_run_of_quotes() -> None:
    # given: a table's rows, one after the other, and a sentence after a code block
    units = units_of(
        [
            _passage_of(
                "| Plan | Price |\n|---|---|\n| Starter | $9 |\n| Growth | $29 |\n\n"
                "Run this to upgrade your plan today:\n\n```sh\nacme upgrade\n```\n\n"
                "The upgrade takes effect at once for every member."
            )
        ]
    )
    starter, growth, command, effect = units

    # when
    quotes = [_alone(unit) for unit in (growth, starter, command, effect)]
    joined = _runs_joined(quotes, units)

    # then: each row stays a quote under its header, and nothing is quoted after a block
    assert [unit.text for unit in joined] == [growth.text, starter.text, command.text, effect.text]
    assert joined[2].code == "acme upgrade"


def test_a_unit_that_joins_a_quote_takes_no_place_of_its_own(
    generator: ExtractiveGenerator,
) -> None:
    # given: a backup page's schedule, one paragraph after another, and its encryption; the
    # question asks for all of them
    hits = [
        _hit(
            "Backups run every night at 02:00 UTC.\n\n"
            "Each backup is copied to a second region.\n\n"
            "Backups are kept for 35 days, then deleted.",
            section="Backups > Schedule",
        ),
        _hit("Backups are encrypted with AES-256 at rest.", number=2, section="Backups > Security"),
    ]

    # when
    deltas, _, _ = _answer(
        generator, "backups: schedule, retention, encryption, storage location?", hits
    )

    # then: the schedule's first paragraph, close to the question too, joins the quote that
    # its next paragraph opens, instead of being left out for want of a place
    assert _quotes(deltas) == [
        (
            "Backups run every night at 02:00 UTC. Each backup is copied to a second region. "
            "Backups are kept for 35 days, then deleted.",
            1,
        ),
        ("Backups are encrypted with AES-256 at rest.", 2),
    ]


def test_the_lead_is_quoted_with_the_rest_of_its_paragraph(
    generator: ExtractiveGenerator,
) -> None:
    # given: a page that restates the customer's problem, then its cause and its fix in the
    # same paragraph, then how to apply the fix
    hit = _hit(
        "Even after you paste the snippet into your theme, checkout and thank-you pages are "
        "not tracked. They are rendered outside your theme's layout. A custom pixel is "
        "needed for them.\n\n"
        "To add one, go to Settings > Customer events and click Add custom pixel.\n\n"
        "Pixels run in a sandbox, so they cannot read your theme's scripts.",
        section="Shop integration > Checkout pages",
    )

    # when
    deltas, _, _ = _answer(
        generator,
        "I pasted the snippet into my theme but checkout and thank-you pages aren't tracked",
        [hit],
    )

    # then: the lead reads on to its paragraph's end, where the fix is, and on into the unit
    # after it, as any quote does; nothing past that
    assert _quotes(deltas)[0] == (
        "Even after you paste the snippet into your theme, checkout and thank-you pages are "
        "not tracked. They are rendered outside your theme's layout. A custom pixel is "
        "needed for them. To add one, go to Settings > Customer events and click Add custom "
        "pixel.",
        1,
    )
    assert "sandbox" not in "".join(deltas)


def test_a_sentence_of_the_lead_s_paragraph_takes_no_place_of_its_own(
    generator: ExtractiveGenerator,
) -> None:
    # given: a paragraph whose first and third sentences are both close to the question, and
    # whose last sentence, far from it, says what happens next
    hit = _hit(
        "You can export your invoices as a CSV file from the Invoices page. Exports cover the "
        "period you pick. Your invoices export as a CSV file with at most 10,000 rows. Larger "
        "exports are split into several files. Each file is emailed to you within an hour.",
        section="Invoices > Exporting",
    )

    # when
    deltas, _, _ = _answer(generator, "How do I export my invoices as a CSV file?", [hit])

    # then: the third sentence is read on to in the lead's quote, not chosen as a quote of its
    # own (which would have brought only the sentence after it), so the paragraph is whole
    assert _quotes(deltas) == [
        (
            "You can export your invoices as a CSV file from the Invoices page. Exports cover "
            "the period you pick. Your invoices export as a CSV file with at most 10,000 rows. "
            "Larger exports are split into several files. Each file is emailed to you within an "
            "hour.",
            1,
        )
    ]
