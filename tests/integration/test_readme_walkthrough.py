"""The README's five-minute walkthrough, run as written: its questions, admin steps and the facts
it promises are read from README.md itself (so the two cannot drift), and played on the demo's
set-up: ``corpus/`` loaded, the chat page started from ``corpus/chat-start.json``, the three
sign-ins of ``demo_logins_ensure``. Everything goes through the pages a newcomer uses: the chat
page's forms, the admin sign-in, the document's change form, the retire page. Indexing after
the edit runs the worker's task inline (``document_index_task.apply``), as the worker would."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from assistant.models import Message
from assistant.services.chat_start import chat_start_add, chat_start_read
from kb.actors import SYSTEM
from kb.models import Document, DocumentIndexState
from kb.services.demo_logins import demo_logins_ensure
from kb.services.sync import corpus_sync
from kb.tasks import document_index_task
from tests.conftest import CORPUS_DIR, CachedEmbedder

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Try it in five minutes"


@dataclass(frozen=True)
class Step:
    label: str
    text: str

    @property
    def code(self) -> list[str]:
        return re.findall(r"`([^`]+)`", self.text)

    @property
    def quoted(self) -> list[str]:
        return re.findall(r'"([^"]+)"', self.text)

    @property
    def promised(self) -> list[str]:
        """The facts the step says the answer states: its *italics* (not **bold**)."""
        return re.findall(r"(?<!\*)\*([^*]+)\*(?!\*)", self.text)


def walkthrough_steps() -> dict[str, Step]:
    """The numbered steps of the README's walkthrough, by their bold label ("Ask.")."""
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, f"README.md has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    items = re.findall(
        r"^\d+\. \*\*(?P<label>[^*]+)\*\*(?P<body>.*?)(?=^\d+\. |\n\n|\Z)",
        section,
        re.MULTILINE | re.DOTALL,
    )
    return {label: Step(label, " ".join(body.split())) for label, body in items}


class FormFields(HTMLParser):
    """The fields a browser would submit from the form with ``form_id``: inputs (checked
    boxes only), textareas and each select's selected options."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.fields: dict[str, list[str]] = {}
        self._inside = False
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._inside = attributes.get("id") == self.form_id
        if not self._inside or "name" not in attributes or "disabled" in attributes:
            if tag == "option" and self._select and "selected" in attributes:
                self.fields.setdefault(self._select, []).append(attributes.get("value", ""))
            return
        name = attributes["name"]
        kind = attributes.get("type", "text")
        if tag == "input" and kind not in ("submit", "button", "file", "image"):
            if kind not in ("checkbox", "radio") or "checked" in attributes:
                self.fields.setdefault(name, []).append(attributes.get("value", "on"))
        elif tag == "textarea":
            self._textarea = name
            self.fields[name] = [""]
        elif tag == "select":
            self._select = name
            self.fields.setdefault(name, [])

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.fields[self._textarea][0] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "form":
            self._inside = False


def _form_fields(html: str, form_id: str) -> dict[str, list[str]]:
    parser = FormFields(form_id)
    parser.feed(html)
    assert parser.fields, f"no form {form_id!r} on the page"
    # a textarea's first newline belongs to the markup, as browsers read it
    return {
        name: [value[1:] if value.startswith("\n") else value for value in values]
        for name, values in parser.fields.items()
    }


@pytest.fixture
def demo_help_center(tmp_path: Path, cached_embedder: CachedEmbedder) -> dict[str, str]:
    """What ``make demo`` sets up before it serves; returns the passwords it prints."""
    report = corpus_sync(directory=CORPUS_DIR, embedder=cached_embedder, actor=SYSTEM)
    assert not report.failed, report.failed
    chat_start = chat_start_read(directory=CORPUS_DIR)
    assert chat_start is not None
    chat_start_add(chat_start=chat_start)
    logins = demo_logins_ensure(data_dir=tmp_path)
    return {login.username: login.password or "" for login in logins}


def _ask(visitor: Client, question: str) -> Message:
    page = visitor.post("/ask", {"question": question}, follow=True)
    assert page.status_code == 200
    message = Message.objects.filter(question=question).latest("created_at")
    assert f"message-{message.public_id}" in page.content.decode()  # shown on the page
    return message


def _new_conversation(visitor: Client) -> None:
    assert visitor.post("/conversations/new").status_code in (200, 302, 303)


def _cited_titles(message: Message) -> list[str]:
    return [citation["title"] for citation in message.citations]


def _sign_in(client: Client, username: str, password: str) -> None:
    response = client.post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}
    )
    assert response.status_code == 302, f"{username} could not sign in with the printed password"


def _document(title: str) -> Document:
    return Document.objects.get(title=title)


def test_the_readme_walkthrough_runs_as_written(
    demo_help_center: dict[str, str], django_capture_on_commit_callbacks
) -> None:
    steps = walkthrough_steps()
    assert list(steps) == [
        "Ask.",
        "Follow up.",
        "Edit a policy.",
        "See the answer change.",
        "Retire a page.",
        "See it gone.",
    ]
    ask, follow_up, edit, changed, retire, gone = steps.values()
    question = ask.code[0]
    assert changed.code[0] == gone.code[0] == question  # "ask ... again"
    current_page, older_page = ask.quoted[:2]
    visitor = Client()

    # 1. the page greets and suggests; the question is answered from the current policy,
    # which is cited, and the older page is named beside it
    home = visitor.get("/").content.decode()
    assert 'id="greeting"' in home and home.count('class="suggestion"') == 4
    first = _ask(visitor, question)
    assert first.status == Message.Status.ANSWERED
    assert ask.promised[0] in first.answer, first.answer
    assert _cited_titles(first)[0] == current_page
    assert older_page in first.answer or older_page in _cited_titles(first), first.answer

    # 2. the follow-up is answered about annual plans
    second = _ask(visitor, follow_up.code[0])
    assert second.status == Message.Status.ANSWERED
    assert follow_up.promised[0] in second.answer, second.answer

    # 3. the writer edits the policy through the admin change form
    writer = Client()
    _sign_in(writer, edit.code[1], demo_help_center[edit.code[1]])
    edited_title = edit.quoted[0]
    document = _document(edited_title)
    change_url = f"/admin/kb/document/{document.pk}/change/"
    form = _form_fields(writer.get(change_url).content.decode(), "document_form")
    old_text, new_text = edit.code[2], edit.code[3]
    assert form["body"][0].count(old_text) == 1, f"{old_text!r} is not once in the body"
    form["body"] = [form["body"][0].replace(old_text, new_text)]
    form["_save"] = ["Save"]
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        saved = writer.post(change_url, form)
    assert saved.status_code == 302, saved.content.decode()[:3000]
    assert enqueued, "the save did not enqueue its indexing"
    # the worker's task, run here as the worker runs it
    document_index_task.apply(args=[document.pk]).get()
    state = DocumentIndexState.objects.get(document=document)
    assert state.status == edit.code[4]  # "indexed"

    # 4. a new conversation: the answer states the new fact
    _new_conversation(visitor)
    after_edit = _ask(visitor, question)
    assert after_edit.status == Message.Status.ANSWERED
    assert changed.promised[0] == new_text
    assert new_text in after_edit.answer and old_text not in after_edit.answer, after_edit.answer

    # 5. the steward retires the older page from its retire page, naming the successor
    steward = Client()
    older = _document(retire.quoted[0])
    assert writer.get(f"/admin/kb/document/{older.pk}/retire/").status_code == 403  # as it says
    _sign_in(steward, retire.code[0], demo_help_center[retire.code[0]])
    retired, successor = _document(retire.quoted[0]), _document(retire.quoted[2])
    assert retire.quoted[0] == older_page
    retire_url = f"/admin/kb/document/{retired.pk}/retire/"
    assert "Retire…" in steward.get(f"/admin/kb/document/{retired.pk}/change/").content.decode()
    assert steward.post(retire_url, {"successor": successor.pk}).status_code == 302

    # 6. asked again: the new fact stands and the retired page is neither cited nor named
    _new_conversation(visitor)
    last = _ask(visitor, question)
    assert last.status == Message.Status.ANSWERED
    assert gone.promised[0] in last.answer, last.answer
    assert older_page not in _cited_titles(last) and older_page not in last.answer, last.answer
    public_page = visitor.get(gone.code[1])
    assert public_page.status_code == 410
    assert gone.quoted[0] in public_page.content.decode()
