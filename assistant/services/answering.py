"""The answer pipeline for one pending message: the same code serves the streaming chat, the page
without JavaScript and the latency benchmark.

question → cache (first questions only) → ``retrieve`` (a question that leans on the one before
is searched alone and with it, and the better evidence wins: `assistant.follow_ups`) → no
answer in the evidence: "not in our docs", without asking the generator → prompt → generator
stream (deltas go out as they come) → citation check, sources renumbered in order of first
citation → the message is stored with what the customer saw and the evidence behind it.

Every failure ends in a stored message a customer can read: retrieval or generation down is an
apology with a way to reach support, never a traceback.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import structlog
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from assistant.citations import (
    CitationCheck,
    StreamRenumberer,
    check_citations,
    citations_renumber,
    says_not_covered,
)
from assistant.follow_ups import follow_up_search
from assistant.generators import (
    GenerationDone,
    GenerationError,
    Generator,
    Prompt,
    Source,
    TextDelta,
    Turn,
    get_generator,
)
from assistant.languages import LanguageSupport, language_support, not_served_answer
from assistant.models import Message
from assistant.no_answer import no_answer_decide
from assistant.prompting import ANSWER_PASSAGES, build_prompt, prompt_with_best_lines
from assistant.services.answer_cache import (
    CachedAnswer,
    answer_cache_get,
    answer_cache_key,
    answer_cache_put,
)
from assistant.services.evidence import (
    AnswerSnapshot,
    GenerationEvidence,
    cited_sources,
    retrieval_snapshot,
)
from assistant.services.quotes import citations_with_quotes
from assistant.services.shown_sources import quoted_sources_only
from assistant.units import best_lines
from kb.attention.contradictions import contradicting_chunks
from kb.errors import REASON_CHARS, one_line
from kb.selectors.index_version import index_version
from search.results import RetrievalResult, RetrievalUnavailable
from search.services import PUBLIC_AUDIENCES, retrieve, with_page_sections

log = structlog.get_logger("groundwork.assistant")

NOT_IN_DOCS_ANSWER = (
    "I couldn't find an answer to that in our help center. Our support team can help you "
    "with it directly."
)
RETRIEVAL_FAILED_ANSWER = (
    "Sorry, we can't answer right now: our help-center search is unavailable. Please try again "
    "in a minute, or contact our support team."
)
GENERATION_FAILED_ANSWER = (
    "Sorry, something went wrong while writing your answer. Please try again in a minute, or "
    "contact our support team."
)
STILL_WORKING_ANSWER = (
    "This answer is taking longer than usual. Please reload the page in a moment to see it."
)

# Earlier exchanges given to the generator with a follow-up: enough for "and for annual plans?".
MAX_HISTORY_TURNS = 3
HISTORY_STATUSES = (Message.Status.ANSWERED, Message.Status.FLAGGED, Message.Status.NOT_IN_DOCS)
# A stream that claimed a message and then died leaves it pending; after this long another
# reader (a reconnect, a reload) may answer it again.
CLAIM_STALE_AFTER = datetime.timedelta(minutes=3)
# How long a second reader of a message being answered elsewhere waits for it.
WAIT_FOR_OTHER_READER_SECONDS = 90.0
WAIT_POLL_SECONDS = 0.25
# What a later asking of the same first question may reuse: not degraded (a leg was down),
# not failed, and not flagged (a model that lost its citations once may not the next time).
CACHEABLE_STATUSES = (Message.Status.ANSWERED, Message.Status.NOT_IN_DOCS)
# A failure's reason as stored in the snapshot: room for a provider's full one-line message.
STORED_FAILURE_CHARS = 500


@dataclass(frozen=True)
class AnswerDelta:
    """Answer text as it is produced (unchecked: the final message replaces it)."""

    text: str


@dataclass(frozen=True)
class AnswerReady:
    """The stored message: checked answer, status, cited sources, snapshot."""

    message: Message


AnswerEvent = AnswerDelta | AnswerReady


def answer_stream(
    *,
    message: Message,
    audiences: Sequence[str] = PUBLIC_AUDIENCES,
    generator: Generator | None = None,
    use_cache: bool = True,
) -> Iterator[AnswerEvent]:
    """Answer a pending message: ``AnswerDelta`` events while the answer is written, then one
    ``AnswerReady``. A message that is already answered yields only its ``AnswerReady`` (a
    reconnecting reader gets the final answer again instead of a second one).

    If the reader goes away mid-answer the answer is still finished and stored, so a reload
    shows it and the evidence is kept. ``use_cache=False`` neither reads nor files the answer in
    the answer cache: a test question must get this index's own answer, and an answer to a
    draft that was never saved must never reach a customer."""
    events = _answer_events(
        message=message, audiences=tuple(audiences), generator=generator, use_cache=use_cache
    )
    try:
        # Not ``yield from``: that would close ``events`` too when the reader closes this one.
        for event in events:  # noqa: UP028
            yield event
    except GeneratorExit:
        for _ in events:
            pass
        raise


def answer_complete(
    *,
    message: Message,
    audiences: Sequence[str] = PUBLIC_AUDIENCES,
    generator: Generator | None = None,
    use_cache: bool = True,
) -> Message:
    """The whole answer at once (the page without JavaScript, a test question)."""
    for event in answer_stream(
        message=message, audiences=audiences, generator=generator, use_cache=use_cache
    ):
        if isinstance(event, AnswerReady):
            return event.message
    raise AssertionError("answer_stream ended without AnswerReady")  # pragma: no cover


def _answer_events(
    *,
    message: Message,
    audiences: tuple[str, ...],
    generator: Generator | None,
    use_cache: bool = True,
) -> Iterator[AnswerEvent]:
    if not _claim(message):
        yield AnswerReady(_wait_for_other_reader(message))
        return
    yield from AnswerRun(
        message=message, audiences=audiences, generator=generator, use_cache=use_cache
    ).events()


class _StageFailed(Exception):
    """A step of the run could not go on: the answer ends with ``answer``, an apology. Raised
    and caught inside ``AnswerRun`` only, after the step has logged the cause."""

    def __init__(self, stage: str, *, answer: str, cause: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.answer = answer
        self.cause = cause


class AnswerRun:
    """One answering of one claimed message, in steps: the cache, ``retrieve``, ``generate``
    (prompt, stream, citation check) and ``finish`` (store, cache, log). Each step adds what it
    learnt to ``snapshot``; a step that fails raises ``_StageFailed`` and the run ends with the
    stored apology instead."""

    def __init__(
        self,
        *,
        message: Message,
        audiences: tuple[str, ...],
        generator: Generator | None,
        use_cache: bool = True,
    ) -> None:
        self.message = message
        self.audiences = audiences
        self.started = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.history, anchors = _conversation_context(message)
        self.anchor = anchors[-1] if anchors else None
        message.retrieval_query = message.question  # until a follow-up is searched otherwise
        self.snapshot = AnswerSnapshot(
            retrieval_query=message.question,
            audiences=list(audiences),
            history_turns=len(self.history),
            threshold=settings.NO_ANSWER_THRESHOLD,
        )
        self.cache_key: str | None = None
        self.use_cache = use_cache
        self._generator = generator
        self.language: LanguageSupport | None = None  # known once retrieval has run

    def events(self) -> Iterator[AnswerEvent]:
        try:
            generator = self._generator_ready()
            cached = self._cached(generator)
            if cached is not None:
                yield from self._finish_from_cache(cached)
                return
            result = self._retrieve(generator)
            self.language = language_support(
                question=self.message.question,
                embedding_model=result.embedding_model,
                writes=not generator.quoted,
            )
            self.snapshot.language = self.language.as_json()
            decision = no_answer_decide(
                query=self.message.retrieval_query, result=result, audiences=self.audiences
            )
            self.snapshot.no_answer = decision.as_json()
            if decision.refuse:
                yield from self._finish_not_in_docs(reason=decision.reason or "")
                return
            yield from self._generate(generator, result)
        except _StageFailed as failure:
            yield self._finish_failed(failure)

    def _generator_ready(self) -> Generator:
        try:
            return self._generator or get_generator()
        except Exception as exc:  # a misconfigured provider is an outage, not a crash
            log.exception("generator_unavailable", error=one_line(exc))
            raise _StageFailed("generator", answer=GENERATION_FAILED_ANSWER, cause=exc) from exc

    def _cached(self, generator: Generator) -> CachedAnswer | None:
        """The cached answer to this question, for first questions only (a follow-up means
        what it means after its conversation)."""
        message = self.message
        if self.history or self.anchor or not self.use_cache:
            return None
        lookup_started = time.perf_counter()
        self.cache_key = answer_cache_key(
            question=message.question,
            audiences=self.audiences,
            generator=generator.name,
            version=index_version(),  # read before retrieval: never file new text under it
        )
        cached = answer_cache_get(key=self.cache_key)
        self.timings["cache_lookup"] = _ms_since(lookup_started)
        return cached

    def _retrieve(self, generator: Generator) -> RetrievalResult:
        retrieval_started = time.perf_counter()
        try:
            searched = follow_up_search(
                question=self.message.question,
                anchor=self.anchor,
                search=lambda query: retrieve(
                    question=query, audiences=self.audiences, limit=ANSWER_PASSAGES
                ),
            )
        except RetrievalUnavailable as exc:
            log.warning("answer_retrieval_unavailable", error=str(exc)[:REASON_CHARS])
            raise _StageFailed("retrieval", answer=RETRIEVAL_FAILED_ANSWER, cause=exc) from exc
        except Exception as exc:  # anything else in retrieval: same apology, traceback in the log
            log.exception("answer_retrieval_failed", error=one_line(exc))
            raise _StageFailed("retrieval", answer=RETRIEVAL_FAILED_ANSWER, cause=exc) from exc
        self.timings["retrieval"] = _ms_since(retrieval_started)
        result = searched.result
        self.message.retrieval_query = self.snapshot.retrieval_query = searched.query
        self.snapshot.follow_up = searched.evidence()
        self.timings.update({f"retrieval_{stage}": ms for stage, ms in result.timings_ms.items()})
        self.snapshot.retrieval = retrieval_snapshot(result)
        self.message.degraded = result.degraded
        self.message.generator = generator.name
        self.message.quoted = generator.quoted
        return result

    def _generate(self, generator: Generator, result: RetrievalResult) -> Iterator[AnswerEvent]:
        prompt = self._prompt(generator, result)
        parts: list[str] = []
        done = yield from self._stream(generator, prompt, parts=parts)
        check = check_citations(
            answer="".join(parts), sources=prompt.sources, question=self.message.question
        )
        self.snapshot.generation = GenerationEvidence.of(check=check, done=done)
        self._settle(check, done, prompt.sources, generator=generator)
        self._finish()
        yield AnswerReady(self.message)

    def _prompt(self, generator: Generator, result: RetrievalResult) -> Prompt:
        """The prompt for this question, timed, with what it holds recorded in the snapshot."""
        message = self.message
        prompt_started = time.perf_counter()
        # The hits, then more sections of the first pages they come from: the answer is often
        # in another section of the page a question matched (search.services.SECTION_PAGES).
        passages = with_page_sections(result, audiences=self.audiences)
        self.snapshot.retrieval = retrieval_snapshot(result, hits=passages)
        prompt = build_prompt(
            question=message.question,
            hits=passages,
            history=self.history,
            search_query=message.retrieval_query,
            term_idfs=result.term_idfs,
            language=None if self.language is None or self.language.english else self.language.name,
        )
        if not generator.quoted:  # a writing model reads the likeliest answer first
            prompt = prompt_with_best_lines(
                prompt,
                lines=best_lines(
                    question=message.question, sources=prompt.sources, idfs=result.term_idfs
                ),
            )
        self.timings["prompt"] = _ms_since(prompt_started)
        self.snapshot.prompt_sources = len(prompt.sources)
        self.snapshot.neutralised = prompt.neutralised
        self.snapshot.source_numbers = {source.chunk_id: source.number for source in prompt.sources}
        return prompt

    def _stream(
        self, generator: Generator, prompt: Prompt, *, parts: list[str]
    ) -> collections.abc.Generator[AnswerEvent, None, GenerationDone | None]:
        """Stream the generator's text out renumbered, collecting it as written into ``parts``;
        returns how generation stopped (None when the generator did not say)."""
        generation_started = time.perf_counter()
        done: GenerationDone | None = None
        # What streams out already carries the numbers the stored answer will (1 cited first).
        renumberer = StreamRenumberer(valid=[source.number for source in prompt.sources])
        try:
            for event in generator.stream(question=self.message.question, prompt=prompt):
                if isinstance(event, TextDelta):
                    if not event.text:
                        continue
                    if not parts:
                        self.timings["generation_first_delta"] = _ms_since(generation_started)
                    parts.append(event.text)
                    shown = renumberer.feed(event.text)
                    if shown:
                        yield AnswerDelta(shown)
                elif isinstance(event, GenerationDone):
                    done = event
            rest = renumberer.finish()
            if rest:
                yield AnswerDelta(rest)
        except GenerationError as exc:
            log.warning(
                "answer_generation_failed", generator=generator.name, error=str(exc)[:REASON_CHARS]
            )
            raise _StageFailed("generation", answer=GENERATION_FAILED_ANSWER, cause=exc) from exc
        except Exception as exc:  # a provider bug must not reach the customer as a traceback
            log.exception(
                "answer_generation_crashed", generator=generator.name, error=one_line(exc)
            )
            raise _StageFailed("generation", answer=GENERATION_FAILED_ANSWER, cause=exc) from exc
        self.timings["generation"] = _ms_since(generation_started)
        return done

    def _settle(
        self,
        check: CitationCheck,
        done: GenerationDone | None,
        sources: Sequence[Source],
        *,
        generator: Generator,
    ) -> None:
        """Status and shown text from the citation check and how generation stopped."""
        message = self.message
        if not check.cited and check.text.strip() and says_not_covered(check.text):
            # The generator read the sources and found no answer in them.
            message.status = Message.Status.NOT_IN_DOCS
            # A quoting answerer writes nothing of its own, so its refusal reads like ours.
            message.answer = self._refusal() if generator.quoted else check.text.strip()
            message.citations = []
            self.snapshot.not_in_docs_reason = "generator found no answer in the sources"
            return
        flags = [check.flag] if check.flag else []
        if done is None:
            flags.append("generation ended without a stop reason")
        elif done.refused:
            flags.append("the model refused")
        elif done.truncated:
            flags.append("the answer was cut off at the length limit")
        message.status = Message.Status.FLAGGED if flags else Message.Status.ANSWERED
        message.answer = citations_renumber(text=check.text, cited=check.cited).strip()
        cited = [source for source in sources if source.number in check.cited]
        message.citations = citations_with_quotes(
            answer=message.answer,
            citations=cited_sources(
                sources=sources,
                cited=check.cited,
                contradicting=contradicting_chunks(chunk_ids=[s.chunk_id for s in cited]),
            ),
        )
        if generator.quoted:
            message.answer, message.citations = quoted_sources_only(
                answer=message.answer, citations=message.citations
            )
        self.snapshot.flags = flags

    def _finish_not_in_docs(self, *, reason: str) -> Iterator[AnswerEvent]:
        """Nothing retrieved is about the question: say so, without asking the generator."""
        message = self.message
        message.answer = self._refusal()
        message.status = Message.Status.NOT_IN_DOCS
        message.citations = []
        self.snapshot.not_in_docs_reason = reason
        yield AnswerDelta(message.answer)
        self._finish()
        yield AnswerReady(message)

    def _refusal(self) -> str:
        """The refusal in the asker's language: "not in our docs", or for a question retrieval
        cannot read, that questions are read in English only (`assistant.languages`)."""
        if self.language is None:
            return NOT_IN_DOCS_ANSWER
        return not_served_answer(self.language, not_in_docs=NOT_IN_DOCS_ANSWER)

    def _finish_failed(self, failure: _StageFailed) -> AnswerReady:
        message = self.message
        message.status = Message.Status.FAILED
        message.answer = failure.answer
        message.citations = []
        self.snapshot.failed_stage = failure.stage
        self.snapshot.failure = one_line(failure.cause)[:STORED_FAILURE_CHARS]
        self.cache_key = None
        self._finish()
        return AnswerReady(message)

    def _finish_from_cache(self, cached: CachedAnswer) -> Iterator[AnswerEvent]:
        """A cached answer becomes a message of its own (cached=True), so feedback, content gaps
        and the admin see every asking, with the evidence of the answer it reused."""
        message = self.message
        message.answer = cached.answer
        message.status = cached.status
        message.citations = cached.citations
        message.generator = cached.generator
        message.quoted = cached.quoted
        message.degraded = False
        message.cached = True
        self.snapshot = dataclasses.replace(
            cached.snapshot,
            cached=True,
            cached_from=cached.message_id,
            original_timings_ms=cached.snapshot.timings_ms,
        )
        self.cache_key = None
        yield AnswerDelta(message.answer)
        self._finish()
        yield AnswerReady(message)

    def _finish(self) -> None:
        """Store the message with its evidence, file it in the cache when it may be reused."""
        message, snapshot = self.message, self.snapshot
        self.timings["total"] = _ms_since(self.started)
        snapshot.timings_ms = {name: round(ms, 2) for name, ms in self.timings.items()}
        message.snapshot = snapshot.as_json()
        message.answered_at = timezone.now()
        message.save(
            update_fields=[
                "retrieval_query",
                "answer",
                "status",
                "citations",
                "generator",
                "quoted",
                "cached",
                "degraded",
                "snapshot",
                "answered_at",
            ]
        )
        if self.cache_key and not message.degraded and message.status in CACHEABLE_STATUSES:
            answer_cache_put(
                key=self.cache_key,
                cached=CachedAnswer(
                    message_id=str(message.public_id),
                    answer=message.answer,
                    status=message.status,
                    citations=message.citations,
                    generator=message.generator,
                    quoted=message.quoted,
                    snapshot=dataclasses.replace(snapshot),
                ),
            )
        log.info(
            "question_answered",
            message=str(message.public_id),
            status=message.status,
            cached=message.cached,
            degraded=message.degraded,
            generator=message.generator,
            cited=len(message.citations),
            confidence=snapshot.confidence,
            total_ms=snapshot.timings_ms["total"],
        )


def _claim(message: Message) -> bool:
    """Take the message for answering; False when another reader is answering it (or it is
    answered already)."""
    now = timezone.now()
    claimed = (
        Message.objects.filter(pk=message.pk, status=Message.Status.PENDING)
        .filter(
            Q(answering_started_at__isnull=True)
            | Q(answering_started_at__lt=now - CLAIM_STALE_AFTER)
        )
        .update(answering_started_at=now)
    )
    if claimed:
        message.answering_started_at = now
    return bool(claimed)


def _wait_for_other_reader(message: Message) -> Message:
    deadline = time.monotonic() + WAIT_FOR_OTHER_READER_SECONDS
    while True:
        message.refresh_from_db()
        if not message.is_pending or time.monotonic() >= deadline:
            break
        time.sleep(WAIT_POLL_SECONDS)
    if message.is_pending:
        message.answer = STILL_WORKING_ANSWER  # shown, not saved: the other reader will save
    return message


def _conversation_context(message: Message) -> tuple[list[Turn], list[str]]:
    """Earlier turns for the generator, and the earlier standalone questions a follow-up may
    lean on (a follow-up of a follow-up still leans on the question that set the topic)."""
    earlier = list(
        Message.objects.filter(
            conversation_id=message.conversation_id, created_at__lte=message.created_at
        )
        .exclude(pk=message.pk)
        .exclude(status=Message.Status.PENDING)
        .order_by("created_at", "id")
        .values("question", "answer", "status", "retrieval_query")
    )
    turns = [
        Turn(question=row["question"], answer=row["answer"])
        for row in earlier
        if row["status"] in HISTORY_STATUSES
    ][-MAX_HISTORY_TURNS:]
    anchors = [row["question"] for row in earlier if row["retrieval_query"] == row["question"]]
    return turns, anchors


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
