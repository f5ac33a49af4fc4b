"""What a passage states as numbers, durations and amounts, and when two passages disagree."""

from __future__ import annotations

from fractions import Fraction

from kb.attention.quantities import Quantity, disagreements, quantities_in

DAY = 86400


def _stated(text: str) -> list[tuple[str, Fraction, str]]:
    return [(q.kind, q.value, text[q.start : q.end]) for q in quantities_in(text)]


def test_durations_are_read_with_their_unit_and_compared_in_one_unit() -> None:
    text = "Refunds within **14 days**; webhooks retry for 72 hours; a 12-month term; thirty days."
    assert _stated(text) == [
        ("duration", Fraction(14 * DAY), "14 days"),
        ("duration", Fraction(3 * DAY), "72 hours"),
        ("months", Fraction(12), "12-month"),
        ("duration", Fraction(30 * DAY), "thirty days"),
    ]


def test_business_days_are_not_calendar_days() -> None:
    assert [q.kind for q in quantities_in("within 5 business days, or 5 days")] == [
        "business days",
        "duration",
    ]


def test_a_range_or_list_of_values_states_each_of_them() -> None:
    en_dash = "\u2013"
    assert [q.value for q in quantities_in(f"usually within 5{en_dash}10 business days")] == [5, 10]
    assert [q.value / DAY for q in quantities_in("retried 1, 3, 5 and 7 days on")] == [1, 3, 5, 7]
    assert [q.value / DAY for q in quantities_in("a window of 7, 14 or 21 days")] == [7, 14, 21]


def test_money_percentages_and_counts() -> None:
    text = "You paid $990 (USD 20 tax, 20% VAT) for 5 seats and up to 4 retries."
    assert _stated(text) == [
        ("USD", Fraction(990), "$990"),
        ("USD", Fraction(20), "USD 20"),
        ("percent", Fraction(20), "20%"),
        ("count of seat", Fraction(5), "5 seats"),
        ("count of retry", Fraction(4), "4 retries"),
    ]


def test_code_dates_years_and_links_state_no_quantity() -> None:
    text = (
        "Updated 2023-05-02, on 1 March 2026 at 10:30. Call `sleep(30 seconds)`; "
        "see [Cancellation](policies/30-days.md).\n```\nretry after 5 minutes\n```\n"
    )
    assert quantities_in(text) == []


def test_values_are_marked_where_they_stand() -> None:
    text = "You may request a refund within 14 days of the payment date."
    (quantity,) = quantities_in(text)
    assert text[quantity.start : quantity.end] == "14 days"


def test_different_values_of_one_kind_disagree() -> None:
    old = quantities_in("a refund of your first monthly payment within 14 days")
    new = quantities_in("a full refund of your first monthly charge within 30 days")
    (found,) = disagreements(old, new)
    assert found.kind == "duration"
    assert [q.value / DAY for q in found.first_only] == [14]
    assert [q.value / DAY for q in found.second_only] == [30]


def test_saying_more_is_not_a_disagreement() -> None:
    # The second passage states every value of the first and adds one: elaboration.
    summary = quantities_in("monthly charges within 30 days, annual ones within 60 days")
    monthly = quantities_in("a refund if you request it within 30 days")
    assert disagreements(monthly, summary) == []
    assert disagreements(summary, monthly) == []


def test_equal_durations_in_other_units_agree() -> None:
    assert disagreements(quantities_in("retried for 3 days"), quantities_in("for 72 hours")) == []


def test_values_of_different_kinds_never_disagree() -> None:
    days = quantities_in("within 14 days")
    business_days = quantities_in("within 3 business days")
    money: list[Quantity] = quantities_in("a $14 fee")
    assert disagreements(days, business_days) == []
    assert disagreements(days, money) == []
