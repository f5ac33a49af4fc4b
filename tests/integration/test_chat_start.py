"""How the empty chat page starts: a greeting a policy steward writes in admin, and, on a new
help center, the greeting and suggested questions of the folder's ``chat-start.json`` (the demo
reads ``corpus/``'s), each of which the sample corpus really answers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from assistant.models import ChatGreeting, Message, SuggestedQuestion
from assistant.services.chat_start import (
    CHAT_START_FILE,
    ChatStart,
    ChatStartError,
    GreetingPermissionDenied,
    chat_greeting_save,
    chat_start_add,
    chat_start_read,
)
from kb.actors import SYSTEM
from kb.services.sync import corpus_sync
from tests.conftest import CORPUS_DIR, CachedEmbedder

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

GREETINGS = "/admin/assistant/chatgreeting/"


def _greeting(html: str) -> str | None:
    found = re.search(r'<p id="greeting" class="chat-greeting">(.*?)</p>', html, re.S)
    return found.group(1) if found else None


def _suggestions(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="question" value="([^"]*)"', html)


def test_the_empty_chat_page_has_no_greeting_until_one_is_written() -> None:
    assert _greeting(Client().get("/").content.decode()) is None


def test_a_steward_writes_the_greeting_in_admin_and_a_doc_writer_may_not(
    writer_client: Client, steward_client: Client, steward: User
) -> None:
    form = {"text": "Hello <b>there</b>!\nAsk us anything.", "active": "on"}

    assert writer_client.post(f"{GREETINGS}add/", form).status_code == 403
    assert _greeting(Client().get("/").content.decode()) is None

    assert steward_client.post(f"{GREETINGS}add/", form).status_code == 302
    # shown as written: text, never markup, its line break kept
    assert _greeting(Client().get("/").content.decode()) == (
        "Hello &lt;b&gt;there&lt;/b&gt;!<br>Ask us anything."
    )
    assert ChatGreeting.objects.get().updated_by == steward


def test_the_newest_active_greeting_is_shown_and_only_on_the_empty_page(steward: User) -> None:
    for text, active in (("Old hello.", True), ("New hello.", True), ("Draft hello.", False)):
        chat_greeting_save(greeting=ChatGreeting(text=text, active=active), actor=steward)
    client = Client()

    assert _greeting(client.get("/").content.decode()) == "New hello."

    conversation_page = client.post("/ask", {"question": "Hello?"}, follow=True)
    assert _greeting(conversation_page.content.decode()) is None


def test_only_a_steward_may_save_a_greeting(writer: User) -> None:
    with pytest.raises(GreetingPermissionDenied, match="policy steward"):
        chat_greeting_save(greeting=ChatGreeting(text="Hi"), actor=writer)
    assert not ChatGreeting.objects.exists()


def test_a_new_help_center_starts_from_its_file_once_and_a_stewards_changes_stand(
    steward: User,
) -> None:
    start = ChatStart(greeting="Hi!", suggested_questions=("First?", "Second?"))

    # the first start fills the empty page, in the file's order, approved
    added = chat_start_add(chat_start=start)
    assert (added.greeting, added.suggested_questions) == (True, 2)
    html = Client().get("/").content.decode()
    assert _greeting(html) == "Hi!" and _suggestions(html) == ["First?", "Second?"]

    # a steward deletes one suggestion and rewrites the greeting; the next start adds nothing
    SuggestedQuestion.objects.filter(question="First?").delete()
    greeting = ChatGreeting.objects.get()
    greeting.text = "Welcome!"
    chat_greeting_save(greeting=greeting, actor=steward)
    again = chat_start_add(chat_start=start)

    assert (again.greeting, again.suggested_questions) == (False, 0)
    html = Client().get("/").content.decode()
    assert _greeting(html) == "Welcome!" and _suggestions(html) == ["Second?"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps(["How?"]), "expected"),
        (json.dumps({"greeting": "Hi", "questions": []}), "no other keys"),
        (json.dumps({"greeting": ""}), "the greeting must be text"),
        (json.dumps({"greeting": "x" * 501}), "the greeting must be text of 1 to 500"),
        (json.dumps({"suggested_questions": "How?"}), "must be a list"),
        (json.dumps({"suggested_questions": ["How?", 3]}), "3 is not a question"),
        (json.dumps({"suggested_questions": ["a" * 121]}), "longer than a button holds"),
        (json.dumps({"suggested_questions": ["How?", "how? "]}), "given twice"),
    ],
)
def test_a_bad_chat_start_file_is_refused_whole(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / CHAT_START_FILE).write_text(content)

    with pytest.raises(ChatStartError, match=message):
        chat_start_read(directory=tmp_path)


def test_every_question_the_sample_corpus_suggests_is_answered_from_it(
    tmp_path: Path, cached_embedder: CachedEmbedder
) -> None:
    # given the demo's help center: corpus/ loaded, its chat page started from its file
    report = corpus_sync(directory=CORPUS_DIR, embedder=cached_embedder, actor=SYSTEM)
    assert not report.failed, report.failed
    chat_start = chat_start_read(directory=CORPUS_DIR)
    assert chat_start is not None and chat_start.greeting
    chat_start_add(chat_start=chat_start)
    html = Client().get("/").content.decode()
    assert _suggestions(html) == list(chat_start.suggested_questions)
    assert len(chat_start.suggested_questions) >= 3

    # when a newcomer clicks each suggestion (a fresh visitor each time)
    for question in chat_start.suggested_questions:
        Client().post("/ask", {"question": question}, follow=True)

    # then each was answered from the pages, citing one, never refused
    for question in chat_start.suggested_questions:
        message = Message.objects.get(question=question)
        assert message.status == Message.Status.ANSWERED, (question, message.status)
        assert message.citations, question
