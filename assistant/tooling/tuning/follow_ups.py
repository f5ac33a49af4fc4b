"""The follow-up rules of the offline answerer measured on an answer eval set (issue #24): the
sets hold no conversations, so each answerable case is asked as the follow-up of another case
answered by the same page, asked first, and its facts are scored with the rules
(``assistant.generators.extractive.FollowedQuestion`` and the drift of ``_as_asked``) and
without them. The follow-up is searched joined to the question it follows, as the pipeline
searches one whose wording leans back (``assistant.follow_ups.joined_query``)."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from assistant.follow_ups import joined_query
from assistant.generators.base import TextDelta, Turn
from assistant.generators.extractive import ExtractiveGenerator
from assistant.prompting import ANSWER_PASSAGES, build_prompt
from assistant.tooling.evaluation import HALVES, AnswerCase, lead_sentence
from kb.embedders import Embedder
from search.services import retrieve, with_page_sections


@dataclass
class PairScore:
    asked: int = 0
    stated: int = 0  # the follow-up's answer states its facts
    lead: int = 0  # its first quote does
    stated_before: int = 0  # the answer it follows stated them already


def follow_up_pairs(cases: Sequence[AnswerCase]) -> list[tuple[AnswerCase, AnswerCase]]:
    """(earlier, follow-up) pairs: each answerable case after the one before it among the
    cases answered by the same page (the first after the page's last)."""
    by_page: dict[str, list[AnswerCase]] = collections.defaultdict(list)
    for case in cases:
        if case.answerable and case.path:
            by_page[case.path].append(case)
    return [
        (group[index - 1], case)
        for group in by_page.values()
        if len(group) > 1
        for index, case in enumerate(group)
    ]


def follow_ups_score(
    pairs: Iterable[tuple[AnswerCase, AnswerCase]],
    *,
    embedder: Embedder | None = None,
    progress: Callable[[list], Iterable] = iter,
) -> dict[tuple[bool, str], PairScore]:
    """(rules on, half) -> the follow-ups' scores, with the answerer's follow-up rules and
    without them, over the same searches and the same earlier answers."""
    answerers = {
        rules: ExtractiveGenerator(embedder=embedder, follow_up_rules=rules)
        for rules in (True, False)
    }
    scores = {(rules, half): PairScore() for rules in (True, False) for half in HALVES}
    for earlier, case in progress(list(pairs)):
        before = _answer(answerers[True], earlier.question)
        query = joined_query(question=case.question, anchor=earlier.question)
        for rules, answerer in answerers.items():
            text = _answer(
                answerer,
                case.question,
                history=[Turn(question=earlier.question, answer=before)],
                query=query,
            )
            score = scores[(rules, case.half)]
            score.asked += 1
            score.stated += case.stated_in(text)
            score.lead += case.stated_in(lead_sentence(text, quoted=True))
            score.stated_before += case.stated_in(before)
    return scores


def _answer(
    answerer: ExtractiveGenerator,
    question: str,
    *,
    history: Sequence[Turn] = (),
    query: str | None = None,
) -> str:
    result = retrieve(question=query or question, limit=ANSWER_PASSAGES)
    prompt = build_prompt(
        question=question,
        hits=with_page_sections(result),
        history=history,
        search_query=query,
        term_idfs=result.term_idfs,
    )
    return "".join(
        event.text
        for event in answerer.stream(question=question, prompt=prompt)
        if isinstance(event, TextDelta)
    )


def follow_ups_report(scores: dict[tuple[bool, str], PairScore]) -> list[str]:
    lines = [f"{'half':<12} {'rules':<8} {'asked':>6} {'stated':>7} {'lead':>6} {'before':>7}"]
    for half in HALVES:
        for rules in (False, True):
            score = scores[(rules, half)]
            lines.append(
                f"{half:<12} {'on' if rules else 'off':<8} {score.asked:>6} {score.stated:>7} "
                f"{score.lead:>6} {score.stated_before:>7}"
            )
    return lines
