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


# --- The same subject: passages of the sample corpus the attention page once paired -------------
# (corpus/eval-sets/contradictions/sample.jsonl has the labels and how each was judged)

TRIAL_REMINDERS = (  # plans/free-trial.md > When the trial ends
    "Paused trial accounts that are never activated are deleted according to our "
    "[data retention policy](../account/account-deletion-and-data-retention.md): 90 days after "
    "the trial ends.\n\n"
    "We send reminder emails to the account Owner **7 days** and **1 day** before the trial ends."
)
DELETION_REMINDERS = (  # account/account-deletion-and-data-retention.md > Retention after ...
    "The same 90-day period applies to trial accounts that end without choosing a plan.\n\n"
    "We email the Owner **14 days** and **1 day** before the deletion date."
)
TRIAL_WILL_END = (  # webhooks/events.md > Event types
    "| `customer.subscription.trial_will_end` | **3 days** before a trial ends. | `id` |\n"
)
INVOICE_UPCOMING = (  # api/invoices.md > Webhook events
    "| `invoice.upcoming` | Sent before a subscription renews (7 days before by default). |\n"
)
MONTHLY_2023 = (  # policies/refunds-2023.md > Monthly subscriptions
    "You may request a refund of your **first monthly payment within 14 days** of the payment "
    "date. After 14 days, monthly payments are non-refundable."
)
MONTHLY_NOW = (  # policies/refunds.md > Monthly plans
    "If you're not satisfied, you can get a **full refund of your first monthly charge** if you "
    "request it **within 30 days of that charge**. The 30 days are counted from the date on the "
    "invoice, not from the start of your trial."
)
CANCELLATION_SUMMARY = (  # policies/cancellation.md > Refunds
    "If your charge is still within a refund window (30 days after the first monthly charge, or "
    "60 days after an annual charge), you can request a refund separately."
)
REPLY_2023 = "Email **billing@acmebilling.com**.\n\nWe reply within 3 business days."
REVIEW_NOW = "We review refund requests within **2 business days** and email you the decision."
ARRIVAL_2023 = (
    "Approved refunds are returned to the original payment method and can take **up to 15 "
    "business days** to appear on your statement."
)
ARRIVAL_NOW = (
    "They usually appear on your statement within **5\u201310 business days**, depending on "
    "your bank or card issuer."
)


def _differ(first: str, second: str, *, headings: tuple[str, str] = ("", "")) -> list[str]:
    return [
        d.kind
        for d in disagreements(
            quantities_in(first, heading=headings[0]), quantities_in(second, heading=headings[1])
        )
    ]


def test_days_before_two_different_deadlines_are_not_a_contradiction() -> None:
    # the reminder emails before a trial ends and before an account's deletion: both "days
    # before", both sent to the Owner, counted from different things
    assert (
        _differ(
            TRIAL_REMINDERS,
            DELETION_REMINDERS,
            headings=("When the trial ends", "Retention after cancellation"),
        )
        == []
    )
    assert (
        _differ(TRIAL_WILL_END, INVOICE_UPCOMING, headings=("Event types", "Webhook events")) == []
    )


def test_the_same_window_stated_with_two_values_is_a_contradiction() -> None:
    assert _differ(MONTHLY_2023, MONTHLY_NOW) == ["duration"]
    assert _differ(MONTHLY_2023, CANCELLATION_SUMMARY) == ["duration"]
    assert _differ(ARRIVAL_2023, ARRIVAL_NOW) == ["business days"]
    # said in other words, under the same heading
    heading = "How to request a refund"
    assert _differ(REPLY_2023, REVIEW_NOW, headings=(heading, heading)) == ["business days"]


def test_a_value_is_marked_only_when_the_other_passage_states_one_about_its_subject() -> None:
    (found,) = disagreements(quantities_in(MONTHLY_2023), quantities_in(CANCELLATION_SUMMARY))
    assert [CANCELLATION_SUMMARY[q.start : q.end] for q in found.second_only] == [
        "30 days",
        "60 days",
    ]


def test_an_anchor_word_with_nothing_after_it_points_back_to_what_came_before() -> None:
    (upcoming,) = quantities_in(INVOICE_UPCOMING)
    assert upcoming.anchor == {"sent", "subscription", "renew"}
    (first,) = quantities_in("Refunds arrive within 14 days of the payment date.")
    assert first.anchor == {"payment", "date"}


def test_prices_per_different_units_are_not_a_contradiction() -> None:
    # superfly/docs: a plan's monthly price against storage per GB; rootfs per GB per month
    # against additional RAM per 30 days per GB (corpus/eval-sets/contradictions/fly.jsonl)
    plans = "| Plan | Monthly Price |\n| --- | --- |\n| Basic | $38.00 |\n| Starter | $72.00|\n"
    storage = "Database storage is priced at **$0.28 per GB for a 30-day month**."
    assert _differ(plans, storage, headings=("Pricing", "Pricing")) == []
    rootfs = "Stopped Machines are billed on their rootfs usage by $0.15 per GB per month."
    ram = "The price of a running Machine is the preset's, plus about $5 per 30 days per GB of RAM."
    assert _differ(rootfs, ram) == []
    # the same rate, two values: still a contradiction
    assert _differ(storage, "Storage is priced at $0.15 per GB for a month.") == ["USD"]
