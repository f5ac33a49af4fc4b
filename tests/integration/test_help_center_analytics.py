"""The help-center analytics page: its numbers equal a count made here, plainly, from the stored
messages, votes and support requests (over a few hundred generated questions across days,
audiences, categories, votes and hand-offs, edge cases included), and stay equal after later
changes; only staff who may read questions see it; the daily table downloads as CSV."""

from __future__ import annotations

import csv
import datetime
import io
import random
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from assistant.analytics.models import QuestionDayStale
from assistant.analytics.rollup import rollup_refresh
from assistant.analytics.selectors import AnalyticsFilters, question_days
from assistant.models import Conversation, Feedback, Message, SupportRequest
from assistant.services import pending_answers_expire
from kb.models import Document

pytestmark = pytest.mark.django_db

COUNTS = (
    "asked",
    "answered",
    "refused",
    "unserved",
    "handed_to_support",
    "thumbs_up",
    "thumbs_down",
    "deflected_confirmed",
    "deflected_assumed",
)
DAYS = 12
HOUR = datetime.timedelta(hours=1)
QUESTIONS = [
    "How do I get a refund?",
    "Can I cancel my plan?",
    "Where are my invoices?",
    "What is the API rate limit?",
    "Do you accept bitcoin?",
    "How do I change my card?",
]


# --- The independent count: what each number means, in plain Python over the stored rows ------


@dataclass(frozen=True)
class Stored:
    messages: list[dict]
    votes: list[dict]
    requests: list[dict]
    categories: dict[int, str]  # document id -> category


def stored() -> Stored:
    return Stored(
        messages=list(
            Message.objects.values(
                "id",
                "conversation_id",
                "status",
                "audience",
                "citations",
                "created_at",
                "answered_at",
            )
        ),
        votes=list(Feedback.objects.values("message_id", "vote")),
        requests=list(SupportRequest.objects.values("conversation_id", "created_at")),
        categories=dict(Document.objects.values_list("pk", "category")),
    )


def expected_counts(
    rows: Stored, *, day: datetime.date, audience: str | None = None, category: str | None = None
) -> dict[str, int]:
    zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)
    counts = dict.fromkeys(COUNTS, 0)
    for message in rows.messages:
        if message["created_at"].astimezone(zone).date() != day:
            continue
        if audience is not None and message["audience"] != audience:
            continue
        cited = {
            rows.categories[c["document_id"]]
            for c in message["citations"]
            if c["document_id"] in rows.categories
        }
        if category is not None and category not in cited:
            continue
        answered = message["status"] == "answered"
        up = any(v["vote"] == "up" for v in rows.votes if v["message_id"] == message["id"])
        down = any(v["vote"] == "down" for v in rows.votes if v["message_id"] == message["id"])
        answer_time = message["answered_at"] or message["created_at"]
        handed = any(
            r["conversation_id"] == message["conversation_id"]
            and message["created_at"]
            <= r["created_at"]
            <= answer_time + datetime.timedelta(hours=24)
            for r in rows.requests
        )
        counts["asked"] += 1
        counts["answered"] += answered
        counts["refused"] += message["status"] == "not_in_docs"
        counts["unserved"] += message["status"] not in ("answered", "not_in_docs")
        counts["handed_to_support"] += handed
        counts["thumbs_up"] += up
        counts["thumbs_down"] += down
        counts["deflected_confirmed"] += answered and up and not handed
        counts["deflected_assumed"] += answered and not handed
    return counts


def page_counts(filters: AnalyticsFilters) -> dict[datetime.date, dict[str, int]]:
    rollup_refresh()
    return {
        day.start: {name: getattr(day, name) for name in COUNTS} for day in question_days(filters)
    }


# --- Generated data ------------------------------------------------------------------------------


@pytest.fixture
def documents() -> list[Document]:
    specs = [
        ("billing/invoices.md", "billing"),
        ("billing/cards.md", "billing"),
        ("policies/refunds.md", "policies"),
        ("api/limits.md", "api"),
        ("misc/about.md", ""),
    ]
    return [
        Document.objects.create(path=path, title=path, category=category, body="# x\n\ny")
        for path, category in specs
    ]


def _message(
    conversation: Conversation,
    *,
    created_at: datetime.datetime,
    status: str,
    audience: str = "public",
    cites: list[Document] = (),
    answered_after: datetime.timedelta | None = datetime.timedelta(seconds=3),
) -> Message:
    message = Message.objects.create(
        conversation=conversation,
        question=random.choice(QUESTIONS),
        status=status,
        audience=audience,
        citations=[{"document_id": d.pk, "path": d.path} for d in cites],
    )
    answered_at = None if answered_after is None else created_at + answered_after
    Message.objects.filter(pk=message.pk).update(created_at=created_at, answered_at=answered_at)
    message.created_at, message.answered_at = created_at, answered_at
    return message


def _support(conversation: Conversation | None, *, at: datetime.datetime) -> SupportRequest:
    request = SupportRequest.objects.create(
        conversation=conversation, client_key_hash="c", email="a@example.com", message="help"
    )
    SupportRequest.objects.filter(pk=request.pk).update(created_at=at)
    return request


@pytest.fixture
def generated(documents: list[Document]) -> Iterator[datetime.datetime]:
    """~300 questions over the last DAYS days (the day boundaries included), in conversations
    of 1-3 questions, with votes from one or two clients and support requests before, soon
    after, 23 h and 25 h after an answer, and from no conversation at all."""
    rng = random.Random(28)
    random.seed(28)
    now = timezone.now().replace(microsecond=0)
    statuses = ["answered"] * 6 + ["not_in_docs"] * 2 + ["flagged", "failed", "pending"]
    for number in range(130):
        conversation = Conversation.objects.create(client_key_hash=f"client-{number}")
        start = now - datetime.timedelta(days=rng.randrange(DAYS), minutes=rng.randrange(1440))
        if number % 17 == 0:  # right at a UTC midnight, and just before it
            start = start.replace(hour=0, minute=0, second=0) - datetime.timedelta(
                seconds=number % 2
            )
        audience = "internal" if rng.random() < 0.3 else "public"
        last = None
        for turn in range(rng.randint(1, 3)):
            status = rng.choice(statuses)
            cites = (
                rng.sample(documents, rng.randint(1, 2))
                if status in ("answered", "flagged")
                else []
            )
            last = _message(
                conversation,
                created_at=start + datetime.timedelta(minutes=5 * turn),
                status=status,
                audience=audience,
                cites=cites,
                answered_after=None if status == "pending" else datetime.timedelta(seconds=4),
            )
            for client in range(rng.choice([0, 0, 1, 1, 2])):
                Feedback.objects.create(
                    message=last, client_key_hash=f"voter-{client}", vote=rng.choice(["up", "down"])
                )
        offset = rng.choice([None, None, None, -2 * HOUR, HOUR, 23 * HOUR, 25 * HOUR, 50 * HOUR])
        if offset is not None and last is not None:
            _support(conversation, at=(last.answered_at or last.created_at) + offset)
    _support(None, at=now - HOUR)  # sent without a conversation: no question's hand-off
    yield now


def _period(now: datetime.datetime, **filters: str | None) -> AnalyticsFilters:
    today = timezone.localdate(now)
    return AnalyticsFilters(start=today - datetime.timedelta(days=DAYS + 1), end=today, **filters)


@pytest.mark.parametrize("time_zone", ["UTC", "America/New_York"])
def test_every_number_equals_a_direct_count_of_the_stored_questions(
    generated, settings, time_zone: str
) -> None:
    # given: the rollup counted in UTC first, then the site's time zone set
    rollup_refresh()
    settings.TIME_ZONE = time_zone

    for audience in (None, "public", "internal"):
        for category in (None, "billing", "policies", "api", ""):
            # when
            filters = _period(generated, audience=audience, category=category)
            shown = page_counts(filters)

            # then
            rows = stored()
            for day, counts in shown.items():
                assert counts == expected_counts(
                    rows, day=day, audience=audience, category=category
                ), (day, audience, category)
    assert sum(counts["asked"] for counts in page_counts(_period(generated)).values()) == (
        Message.objects.count()
    )


def test_the_numbers_follow_later_votes_hand_offs_deletions_and_category_changes(
    generated,
) -> None:
    # given: the page read once
    filters = _period(generated)
    page_counts(filters)
    answered = Message.objects.filter(status="answered").order_by("id")
    first, second, third = answered[0], answered[1], answered[2]

    # when: votes change, a hand-off arrives, a question is deleted, a page changes category,
    # and a pending question expires
    Feedback.objects.update_or_create(
        message=first, client_key_hash="late", defaults={"vote": "up"}
    )
    Feedback.objects.filter(message=second).update(vote="down")
    _support(third.conversation, at=third.answered_at + HOUR)
    Message.objects.filter(pk=answered[3].pk).delete()
    Document.objects.filter(category="api").update(category="developers")
    Message.objects.filter(status="pending").update(created_at=generated - 2 * HOUR)
    pending_answers_expire()

    # then
    rows = stored()
    for day, counts in page_counts(filters).items():
        assert counts == expected_counts(rows, day=day), day
    for day, counts in page_counts(_period(generated, category="developers")).items():
        assert counts == expected_counts(rows, day=day, category="developers"), day


def test_hand_off_within_24_hours_of_the_answer_counts_and_thumbs_up_then_support_is_no_deflection(
    documents,
) -> None:
    # given: three answered questions on one day, two days ago
    asked = timezone.now().replace(microsecond=0) - datetime.timedelta(days=2)
    asked = asked.replace(hour=1)
    at_23 = Conversation.objects.create(client_key_hash="a")
    at_25 = Conversation.objects.create(client_key_hash="b")
    liked = Conversation.objects.create(client_key_hash="c")
    answer_23 = _message(at_23, created_at=asked, status="answered", cites=[documents[0]])
    answer_25 = _message(at_25, created_at=asked, status="answered", cites=[documents[0]])
    answer_liked = _message(liked, created_at=asked, status="answered", cites=[documents[0]])
    Feedback.objects.create(message=answer_liked, client_key_hash="c", vote="up")

    # when
    _support(at_23, at=answer_23.answered_at + 23 * HOUR)
    _support(at_25, at=answer_25.answered_at + 25 * HOUR)
    _support(liked, at=answer_liked.answered_at + HOUR)

    # then: 23 h is a hand-off, 25 h is not; thumbs up then support is neither deflection
    day = timezone.localdate(asked)
    counts = page_counts(AnalyticsFilters(start=day, end=day))[day]
    assert counts["asked"] == 3 and counts["answered"] == 3
    assert counts["handed_to_support"] == 2  # the 23 h one and the liked one
    assert counts["thumbs_up"] == 1
    assert counts["deflected_assumed"] == 1  # only the 25 h one
    assert counts["deflected_confirmed"] == 0  # the thumbs up was followed by a hand-off
    assert counts == expected_counts(stored(), day=day)


# --- The page ------------------------------------------------------------------------------------


def _staff(*, may_read_questions: bool) -> User:
    user = User.objects.create_user("staffer", password="x", is_staff=True)
    if may_read_questions:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label="assistant", codename="view_message")
        )
    return user


def test_only_staff_who_may_read_questions_see_the_page() -> None:
    anonymous = Client().get("/admin/analytics/")
    customer = Client()
    customer.force_login(User.objects.create_user("customer", password="x"))
    staff_without = Client()
    staff_without.force_login(_staff(may_read_questions=False))

    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    assert customer.get("/admin/analytics/").status_code == 302  # the admin's own staff check
    assert staff_without.get("/admin/analytics/").status_code == 403
    assert staff_without.get("/admin/analytics/?format=csv").status_code == 403


def test_page_shows_totals_charts_tables_and_topics(generated) -> None:
    client = Client()
    client.force_login(_staff(may_read_questions=True))

    page = client.get("/admin/analytics/?days=30&audience=internal")

    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('<svg class="chart"') == 3
    assert "<script" not in html.split('id="content-main"')[1]
    assert 'id="analytics-table"' in html and "Top topics" in html
    assert "Unanswered topics" in html
    expected_internal = Message.objects.filter(audience="internal").count()
    assert f"<dd>{expected_internal}</dd>" in html

    # a year is charted and tabled by week
    year = client.get("/admin/analytics/?days=365").content.decode()
    assert "The numbers per week" in year and year.count('<svg class="chart"') == 3
    assert f"<dd>{Message.objects.count()}</dd>" in year


def test_a_filter_the_page_does_not_offer_is_a_clear_error() -> None:
    client = Client()
    client.force_login(_staff(may_read_questions=True))

    page = client.get("/admin/analytics/?days=13")
    other = client.get("/admin/analytics/?audience=everyone")

    assert (
        page.status_code == 400
        and "The period must be one of 7, 30, 90, 365" in page.content.decode()
    )
    assert (
        other.status_code == 400 and "audience must be public or internal" in other.content.decode()
    )


def test_daily_table_downloads_as_csv_equal_to_the_direct_count(generated) -> None:
    client = Client()
    client.force_login(_staff(may_read_questions=True))

    response = client.get("/admin/analytics/?days=30&audience=public&category=billing&format=csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment;" in response["Content-Disposition"]
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(table) == 30
    assert list(table[0]) == ["day", *COUNTS]
    rows = stored()
    for line in table:
        day = datetime.date.fromisoformat(line["day"])
        wanted = expected_counts(rows, day=day, audience="public", category="billing")
        assert {name: int(line[name]) for name in COUNTS} == wanted, day
    assert sum(int(line["asked"]) for line in table) > 0


def test_each_question_records_who_asked_it() -> None:
    # given: a customer and a staff member who may read internal pages
    staff = User.objects.create_user("reader", password="x", is_staff=True)
    staff.user_permissions.add(
        Permission.objects.get(content_type__app_label="kb", codename="view_document")
    )
    customer, colleague = Client(), Client()
    colleague.force_login(staff)

    # when: each asks on the chat page (htmx: the question is stored, answered by the stream)
    for client in (customer, colleague):
        response = client.post("/ask", {"question": "How do refunds work?"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200

    # then
    assert list(Message.objects.order_by("id").values_list("audience", flat=True)) == [
        "public",
        "internal",
    ]


@pytest.mark.django_db(transaction=True)
def test_a_question_asked_while_a_refresh_is_open_neither_waits_nor_loses_its_mark() -> None:
    # given: a day already marked, and a refresher that has cleared its marks and not committed
    conversation = Conversation.objects.create(client_key_hash="a")
    Message.objects.create(conversation=conversation, question="How do refunds work?")
    refresher = connections.create_connection("default")
    try:
        refresher.set_autocommit(False)
        with refresher.cursor() as cursor:
            cursor.execute("DELETE FROM assistant_questiondaystale")

        # when: another question arrives (a writer blocked by the refresher would time out)
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = '2s'")
        Message.objects.create(conversation=conversation, question="And for a yearly plan?")
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = 0")
        refresher.commit()
    finally:
        refresher.close()

    # then: the new question's mark survived the refresher's delete, and is counted
    assert QuestionDayStale.objects.exists()
    rollup_refresh()
    today = timezone.localdate()
    assert page_counts(AnalyticsFilters(start=today, end=today))[today]["asked"] == 2


def test_saving_a_cited_page_without_changing_its_category_marks_no_day(documents) -> None:
    # given: an answer citing a page, counted
    conversation = Conversation.objects.create(client_key_hash="a")
    _message(conversation, created_at=timezone.now(), status="answered", cites=[documents[0]])
    rollup_refresh()
    page = Document.objects.get(pk=documents[0].pk)

    # when: the page is edited and saved (every column written), its category unchanged
    page.title = "Invoices, explained"
    page.save()

    # then
    assert not QuestionDayStale.objects.exists()
    page.category = "money"
    page.save()
    assert QuestionDayStale.objects.exists()
