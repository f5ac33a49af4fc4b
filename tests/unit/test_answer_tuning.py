"""The answer lab's replay (``assistant.tooling.tuning.quotes``) chooses what the offline
answerer would quote: weights are fitted on replays, so a replay that drifted from the answerer
would fit constants for another answerer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from assistant.generators.extractive import ExtractiveGenerator
from assistant.prompting import build_prompt
from assistant.tooling.tuning.quotes import (
    EXTRA_QUOTE_MARGIN,
    FRONTIER_MARGINS,
    FRONTIER_PLACES,
    MAX_QUOTES,
    QuoteChoice,
    dumped_units,
    length_frontier,
    length_frontier_report,
    replay,
    replay_score,
)
from assistant.units import FEATURES, UnitWeights
from kb.embedders import Embedder
from search.results import Hit
from tests.unit.test_answer_units import FACTORY_STEPS
from tests.unit.test_extractive_generator import (
    CASES,
    DISTRACTORS,
    _answer,
    _hit,
    _passage,
    _quotes,
    split_section_hits,
)


def _replayed_and_quoted(
    embedder: Embedder, question: str, hits: list[Hit]
) -> tuple[list[str], list[str]]:
    """What the replay quotes from the dumped units of ``hits``, and what the answerer quotes."""
    prompt = build_prompt(question=question, hits=hits)
    row = {
        "question": question,
        "units": dumped_units(
            question=question, sources=prompt.sources, idfs={}, embedder=embedder
        ),
    }
    replayed = replay(row, QuoteChoice(weights=UnitWeights()))
    deltas, _, _ = _answer(ExtractiveGenerator(embedder=embedder), question, hits)
    return [str(unit["text"]) for unit in replayed], [sentence for sentence, _ in _quotes(deltas)]


@pytest.mark.parametrize(("question", "path", "passage", "expected"), CASES)
def test_the_replay_quotes_what_the_answerer_quotes(
    cached_embedder: Embedder, question: str, path: str, passage: str, expected: str
) -> None:
    # given: the answering passage among two others, as the answerer's own tests ask it
    hits = [
        _passage(cached_embedder, *DISTRACTORS[0]),
        _passage(cached_embedder, path, passage),
        _passage(cached_embedder, *DISTRACTORS[1]),
    ]

    # when
    replayed, quoted = _replayed_and_quoted(cached_embedder, question, hits)

    # then: the same quotes, the lead first
    assert replayed == quoted


# What a quote brings with it (docs/answers.md, round twenty-two), as the answerer's own tests
# ask it: an item's sentence that points back, a definition's sentence read under its term,
# the units that go on from the one a quote brings, and the rest of the lead's paragraph.
BRINGS = [
    (
        "Why is index.php?article=12&page=3 reported as index.php in Top Pages?",
        "How the Top Pages report counts pages:\n\n"
        "- Query parameters are discarded from the path so they do not show as other pages. "
        "This means that `index.php?article=12&page=3` is reported as `index.php` in the "
        "Top Pages report.\n"
        "- Pages are listed by their pageviews.\n",
        "Query parameters are discarded from the path",
    ),
    (
        "Where do I put favicon.ico and robots.txt so they end up in my site?",
        "`static`\n: The `static` directory holds files that are copied to `public` when you "
        "build. For example: `favicon.ico` and `robots.txt` files.\n",
        "`static`: The `static` directory holds files",
    ),
    (
        "With the app factory pattern I have no celery_app object to decorate task functions.",
        "Using `@celery_app.task` to decorate task functions requires the `celery_app` object, "
        "which the app factory pattern does not give you. It also means the tasks are tied to "
        "one app instance.\n\n"
        "Instead, use Celery's `@shared_task` decorator. Workers are started with the "
        "`celery worker` command.\n",
        "Instead, use Celery's `@shared_task` decorator.",
    ),
    (
        "I pasted the snippet into my theme but checkout and thank-you pages aren't tracked",
        "Even after you paste the snippet into your theme, checkout and thank-you pages are "
        "not tracked. They are rendered outside your theme's layout. A custom pixel is "
        "needed for them.\n\n"
        "To add one, go to Settings > Customer events and click Add custom pixel.\n",
        "A custom pixel is needed for them. To add one, go to Settings",
    ),
    (
        "How do I export my invoices as a CSV file?",
        "You can export your invoices as a CSV file from the Invoices page. Exports cover the "
        "period you pick. Your invoices export as a CSV file with at most 10,000 rows. Larger "
        "exports are split into several files. Each file is emailed to you within an hour.\n",
        "Larger exports are split into several files. Each file is emailed to you",
    ),
]


@pytest.mark.parametrize(("question", "passage", "brought"), BRINGS)
def test_the_replay_brings_with_a_quote_what_the_answerer_brings(
    cached_embedder: Embedder, question: str, passage: str, brought: str
) -> None:
    # given
    hits = [_hit(passage, section="Guide > How it works")]

    # when
    replayed, quoted = _replayed_and_quoted(cached_embedder, question, hits)

    # then: the same quotes, and the first holds the unit it brought
    assert replayed == quoted
    assert brought in quoted[0]


def test_the_replay_does_not_go_on_into_another_term_as_the_answerer_does(
    cached_embedder: Embedder,
) -> None:
    # given: a definition list of search tools, the third definition opening with "This gist"
    hits = [
        _hit(
            "hugo-lunr\n: A simple way to add site search to a static site with lunr.js.\n\n"
            "hugo-lunr-zh\n: A bit like hugo-lunr, with Chinese keywords separated.\n\n"
            "Fuse.js gist\n: This gist builds a JSON index that Fuse.js reads.\n",
            section="Tools > Search",
        )
    ]

    # when
    replayed, quoted = _replayed_and_quoted(
        cached_embedder, "How can I add site search with lunr.js?", hits
    )

    # then: the same quotes; the lead brings the next term's sentence, and stops before the
    # one whose "This" is its own term
    assert replayed == quoted
    assert quoted[0] == (
        "hugo-lunr: A simple way to add site search to a static site with lunr.js. "
        "hugo-lunr-zh: A bit like hugo-lunr, with Chinese keywords separated."
    )


@pytest.mark.parametrize("labelled", [False, True])
def test_the_replay_goes_on_into_the_passage_that_continues_a_quote_as_the_answerer_does(
    cached_embedder: Embedder, labelled: bool
) -> None:
    # when: a section cut into two chunks, both among the passages (its first chunk's last
    # paragraph under a bold label that the second's copy of it lacks, or not)
    replayed, quoted = _replayed_and_quoted(
        cached_embedder,
        "Can invoices go to our accountant automatically instead of me forwarding them?",
        split_section_hits(labelled=labelled),
    )

    # then
    assert replayed == quoted
    assert "Invoice recipients" in quoted[0]
    assert quoted[0].count("Rather than forwarding") == 1


def test_the_replay_goes_on_after_a_numbered_list_as_the_answerer_does(
    cached_embedder: Embedder,
) -> None:
    # when: a numbered list whose last item answers, the paragraph after the list
    replayed, quoted = _replayed_and_quoted(
        cached_embedder, "Does Flask create the instance folder for me?", [_hit(FACTORY_STEPS)]
    )

    # then: neither quotes the item again with the steps that hold it; both go on with the
    # paragraph after the list
    assert replayed == quoted
    assert quoted[0].count("os.makedirs") == 1
    assert "later in the tutorial" in quoted[0]


# Quotes the page has one after the other, quoted as one and taking one place (docs/answers.md,
# round twenty-eight): Plausible's nonprofit discount, its amount in the paragraph before the
# one that leads; four units close to the question, three of them paragraphs of one section.
RUNS = [
    (
        "We're a small charity. Do you do discounts, and does it work on monthly billing?",
        [
            _hit(
                "The discount is 15% off your first payment on a Business plan with annual "
                "billing. Combined with annual billing, you also get 2 months free.\n\n"
                "The discount applies to Business plans on annual billing only. It does not "
                "apply to monthly billing or to Starter plans.",
                section="Nonprofit pricing > What's included",
            )
        ],
        1,
        "The discount is 15% off",
    ),
    (
        "backups: schedule, retention, encryption, storage location?",
        [
            _hit(
                "Backups run every night at 02:00 UTC.\n\n"
                "Each backup is copied to a second region.\n\n"
                "Backups are kept for 35 days, then deleted.",
                section="Backups > Schedule",
            ),
            _hit(
                "Backups are encrypted with AES-256 at rest.",
                number=2,
                section="Backups > Security",
            ),
        ],
        2,
        "Backups run every night",
    ),
]


@pytest.mark.parametrize(("question", "hits", "quotes", "opening"), RUNS)
def test_the_replay_quotes_a_run_of_quotes_as_one_as_the_answerer_does(
    cached_embedder: Embedder, question: str, hits: list[Hit], quotes: int, opening: str
) -> None:
    # when
    replayed, quoted = _replayed_and_quoted(cached_embedder, question, hits)

    # then: the same quotes, the run's first paragraph on the page first
    assert replayed == quoted
    assert len(quoted) == quotes
    assert quoted[0].startswith(opening)


def test_the_replay_tells_whether_its_lead_is_a_unit_of_the_answering_section(
    cached_embedder: Embedder,
) -> None:
    # given: the refund question, its answering passage second among three, dumped twice: once
    # labelled as the dump labels it (the second passage is the answering section), once as if
    # the first were
    question, path, passage, expected = CASES[0]
    hits = [
        _passage(cached_embedder, *DISTRACTORS[0]),
        _passage(cached_embedder, path, passage),
        _passage(cached_embedder, *DISTRACTORS[1]),
    ]
    prompt = build_prompt(question=question, hits=hits)
    units = dumped_units(
        question=question, sources=prompt.sources, idfs={}, embedder=cached_embedder
    )

    def row(seen: list[bool]) -> dict:
        return {
            "question": question,
            "answerable": True,
            "refused": False,
            "facts": [expected],
            "match": "all",
            "sections_seen": seen,
            "units": units,
        }

    # when
    right = replay_score([row([False, True, False])], QuoteChoice(weights=UnitWeights()))
    other = replay_score([row([True, False, False])], QuoteChoice(weights=UnitWeights()))

    # then: the lead is a unit of the answering passage, and is counted as of the answering
    # section only where the dump says that passage is it; both saw the section
    assert right.lead_in_section == 1.0 and other.lead_in_section == 0.0
    assert right.sees_section == other.sees_section == 1.0


def test_a_unit_another_quote_brings_is_not_quoted_on_its_own(cached_embedder: Embedder) -> None:
    # given: a paragraph whose second sentence states the limit, right after the sentence that
    # a further quote would be; the third sentence leads
    hits = [
        _hit(
            "You can pin dashboards that you want to feature at the top of the Dashboards page. "
            "You can pin up to six dashboards. The most recently pinned dashboard will "
            "automatically appear at the top of your list, helping you sort your dashboards by "
            "how often you use them.\n\nTo pin a dashboard, open its menu and click Pin. To "
            "unpin it, click Unpin.",
            section="Dashboards > Pinning",
        )
    ]

    # when
    replayed, quoted = _replayed_and_quoted(
        cached_embedder, "How many dashboards can I pin to the top of my list?", hits
    )

    # then: the limit is quoted once, with the quote it belongs to, not as a quote of its own
    # (which took a place among the quotes and kept the lead from the sentence before it)
    assert replayed == quoted
    assert "You can pin up to six dashboards." not in quoted
    assert " ".join(quoted).count("up to six") == 1
    assert "up to six" in quoted[0]


def _dumped(source: int, text: str, similarity: float, axis: int) -> dict:
    """A dumped sentence alone in its passage, scored by its cosine only (no signal fires),
    with a vector of its own (orthogonal to the others: no two are repeats)."""
    vector = [0.0] * 384
    vector[axis] = 1.0
    return {
        "source": source,
        "position": 0,
        "kind": "sentence",
        "holds": [],
        "paragraph": 0,
        "label": "",
        "last": True,
        "section": "Deploy",
        "document": source,
        "ordinal": 0,
        "text": text,
        "similarity": similarity,
        "features": [0.0] * len(FEATURES),
        "vector": vector,
    }


def _deletes_row() -> dict:
    """A case whose lead states nothing the label asks, and whose fact is in a unit scoring 0.2
    below it: outside today's margin."""
    return {
        "id": "deletes",
        "question": "hugo deploy refuses to delete that many files, how do I get past it?",
        "half": "report",
        "answerable": True,
        "refused": False,
        "facts": ["more than 256"],
        "match": "all",
        "sections_seen": [False, True],
        "units": [
            _dumped(1, "Use the hugo deploy command to deploy your site to a bucket.", 0.8, 0),
            _dumped(2, "Hugo will not delete more than 256 remote files by default.", 0.6, 1),
        ],
    }


def test_the_length_frontier_replays_answers_longer_than_todays() -> None:
    # given: the unit that states the fact scores 0.2 below the lead, outside today's margin
    row = _deletes_row()

    # when
    points = length_frontier({"hugo": [row]})
    lines = length_frontier_report({"hugo": [row]})

    # then: today's setting quotes the lead alone; a margin past 0.2 quotes the fact too, in
    # a longer answer; the report marks today's line
    at = {(p.half, p.choice.margin, p.choice.max_quotes): p.scores["hugo"] for p in points}
    today, wider = at[("report", EXTRA_QUOTE_MARGIN, MAX_QUOTES)], at[("report", 0.22, MAX_QUOTES)]
    assert (today.stated, today.words) == (0, [12])
    assert (wider.stated, wider.lead, wider.words) == (1, 0, [23])
    assert at[("calibration", 0.22, MAX_QUOTES)].answerable == 0
    marked = [line for line in lines if line.startswith("*")]
    assert len(marked) == 2 and all(f"margin {EXTRA_QUOTE_MARGIN} " in line for line in marked)
    assert "hugo 100.0%/23" in next(line for line in lines if "report      margin 0.22 " in line)


def test_answer_tuning_frontier_prints_it_from_dump_files(tmp_path: Path) -> None:
    # given: a dump file, as `answer_tuning dump` writes one
    dump = tmp_path / "hugo.jsonl"
    dump.write_text(json.dumps(_deletes_row()) + "\n")
    out = io.StringIO()

    # when
    call_command("answer_tuning", "frontier", str(dump), stdout=out)

    # then: every setting of both halves, under the set's name (the file's)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 + 2 * len(FRONTIER_MARGINS) * len(FRONTIER_PLACES)
    assert "hugo 100.0%/23" in next(line for line in lines if "report      margin 0.22 " in line)


def test_the_length_frontier_replays_a_fourth_place() -> None:
    # given: four units close to one another, each in its own passage; the fourth states the fact
    texts = [
        "Plans renew every month on the day you subscribed.",
        "You can switch between monthly and yearly billing in your settings.",
        "Invoices are sent to the billing email address.",
        "Yearly billing saves two months compared with paying monthly.",
    ]
    row = {
        **_deletes_row(),
        "facts": ["saves two months"],
        "sections_seen": [False, False, False, True],
        "units": [
            _dumped(number + 1, text, 0.8 - 0.02 * number, number)
            for number, text in enumerate(texts)
        ],
    }

    # when
    points = length_frontier({"billing": [row]})

    # then: today's three places leave the fourth unit out; a fourth place quotes it
    at = {(p.half, p.choice.margin, p.choice.max_quotes): p.scores["billing"] for p in points}
    assert at[("report", EXTRA_QUOTE_MARGIN, MAX_QUOTES)].stated == 0
    assert at[("report", EXTRA_QUOTE_MARGIN, MAX_QUOTES + 1)].stated == 1
