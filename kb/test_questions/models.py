"""A page's test questions and every stored answer to them (see ``kb.test_questions``). The page
is named by its label, not imported: ``kb.models`` imports this module to register them."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

MAX_FACTS = 3
FACT_MAX_CHARS = 200
QUESTION_MAX_CHARS = 500


class TestQuestion(models.Model):
    """A question a right answer to which must state ``facts`` (all, or any one of them) and
    cite this page: answered again each time the page is indexed (``TestQuestionRun``)."""

    __test__ = False  # not a pytest class, whatever the test module that imports it

    class Match(models.TextChoices):
        ALL = "all", "all of the facts"
        ANY = "any", "any one of the facts"

    document = models.ForeignKey(
        "kb.Document", on_delete=models.CASCADE, related_name="test_questions"
    )
    question = models.CharField(max_length=QUESTION_MAX_CHARS)
    facts = ArrayField(
        models.CharField(max_length=FACT_MAX_CHARS),
        size=MAX_FACTS,
        help_text="What a right answer states: 1 to 3 short phrases, one per line.",
    )
    match = models.CharField(max_length=3, choices=Match.choices, default=Match.ALL)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["document_id", "id"]

    def __str__(self) -> str:
        return self.question


class TestQuestionRun(models.Model):
    """One answering of a test question by the real answer pipeline, as it was: the answer,
    what it cited, whether it stated the facts, whether it was refused. ``flags`` say why it
    is worse than ``baseline``, the last run that passed (the "before" shown beside it)."""

    __test__ = False

    class Trigger(models.TextChoices):
        INDEXED = "indexed", "the page was indexed"
        QUESTION = "question", "the question was added or changed"

    test_question = models.ForeignKey(TestQuestion, on_delete=models.CASCADE, related_name="runs")
    document = models.ForeignKey("kb.Document", on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    content_hash = models.CharField(
        max_length=64, help_text="The page's text it was answered from."
    )
    history_id = models.BigIntegerField(
        null=True, blank=True, help_text="The page's saved version (its history entry) then."
    )
    question = models.CharField(max_length=QUESTION_MAX_CHARS)  # as asked, and the facts as given
    facts = ArrayField(models.CharField(max_length=FACT_MAX_CHARS), size=MAX_FACTS)
    match = models.CharField(max_length=3, choices=TestQuestion.Match.choices)
    answer = models.TextField()
    status = models.CharField(max_length=20)  # the answer's status (assistant.Message.Status)
    citations = models.JSONField(default=list)  # [{"path", "section", "document_id"}], in order
    facts_stated = models.BooleanField()
    cites_document = models.BooleanField()
    refused = models.BooleanField()
    passed = models.BooleanField()  # states the facts, cites this page, not refused
    baseline = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    flags = ArrayField(models.CharField(max_length=500), default=list, blank=True)
    ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["test_question_id", "-created_at", "-id"]
        indexes = [
            models.Index(fields=["test_question", "-created_at"], name="kb_tqrun_question_latest"),
            models.Index(fields=["document", "history_id"], name="kb_tqrun_document_version"),
        ]

    def __str__(self) -> str:
        outcome = "flagged" if self.flags else "passed" if self.passed else "failed"
        return f"{self.question} ({outcome})"

    @property
    def cited_paths(self) -> list[str]:
        return list(dict.fromkeys(citation.get("path", "") for citation in self.citations))
