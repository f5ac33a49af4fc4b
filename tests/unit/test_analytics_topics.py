"""Topic grouping on the analytics page: rephrasings of one need share a group, different needs
do not, and the same questions always give the same groups."""

from __future__ import annotations

from assistant.analytics.topics import _groups
from assistant.terms import terms

NEEDS = {
    "crypto": ["do you accept crypto payments", "can I pay invoices in crypto or bitcoin?"],
    "refund": ["how do I get a refund", "refund for my annual plan?", "when is my refund paid"],
    "invoice": ["where can I download my invoices", "download invoice as pdf"],
    "cancel": ["how do I cancel my subscription", "cancel subscription before renewal"],
}


def test_rephrasings_sharing_words_share_a_group_and_different_needs_never_do() -> None:
    questions = [(need, question) for need, asked in NEEDS.items() for question in asked]

    groups = _groups([terms(q) for _, q in questions], [1] * len(questions))

    needs_per_group = [{questions[index][0] for index in group} for group in groups]
    assert all(len(needs) == 1 for needs in needs_per_group), needs_per_group
    whole = sorted(
        questions[group[0]][0]
        for group in groups
        if len(group) == len(NEEDS[questions[group[0]][0]])
    )
    # The two crypto askings share one rare word in four: words alone keep them apart (the
    # content-gaps page, which embeds, is where such rephrasings meet).
    assert whole == ["cancel", "invoice", "refund"]


def test_the_same_questions_give_the_same_groups() -> None:
    asked = [q for questions in NEEDS.values() for q in questions]
    term_sets, counts = [terms(q) for q in asked], [3, 1, 2, 2, 1, 5, 1, 1, 4]

    # the grouping itself, not only two calls agreeing: sets iterate in an order that differs
    # between processes, so the weights are summed in sorted order
    assert _groups(term_sets, counts) == [[0], [1], [2, 3, 4], [5, 6], [7, 8]]
    reordered = [set(sorted(each, reverse=True)) for each in term_sets]
    assert _groups(reordered, counts) == _groups(term_sets, counts)
