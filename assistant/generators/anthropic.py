"""Claude through Anthropic's official SDK, streamed.

The client is made once (it holds the connection pool) with the settings' timeout and retries.
The SDK retries 408/409/429/5xx (529 "overloaded" included) and connection failures itself,
honouring ``retry-after``; it can only retry before the first byte of the answer, so a failure
in the middle of a stream surfaces here and ends the answer with a `GenerationError`. Every
failure becomes one line a person can act on, with the API key scrubbed from it.

The SDK (2.14.0) sends the key as ``Authorization: Bearer …`` rather than ``x-api-key``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import structlog

from assistant.generators.base import (
    GenerationDone,
    GenerationError,
    GenerationEvent,
    Prompt,
    TextDelta,
)
from kb.errors import DETAIL_CHARS, REASON_CHARS, shortened

log = structlog.get_logger("groundwork.assistant")


class AnthropicGenerator:
    """Streams an answer from the Messages API; any failure is a one-line `GenerationError`."""

    quoted = False

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        max_tokens: int,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        streaming: bool = True,
    ) -> None:
        # The SDK would fall back to ANTHROPIC_API_KEY or a credentials file for an empty key;
        # a misconfigured deployment should fail here instead, naming the problem.
        if not api_key:
            raise ValueError("AnthropicGenerator needs a non-empty api_key")
        if max_tokens < 1 or timeout <= 0 or max_retries < 0:
            raise ValueError(
                "AnthropicGenerator needs max_tokens >= 1, timeout > 0 and max_retries >= 0"
            )
        self.name = f"anthropic/{model}"
        self.model = model
        self.max_tokens = max_tokens
        self.streaming = streaming
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._where = base_url or "the Anthropic API"
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def __repr__(self) -> str:  # never the key
        return f"AnthropicGenerator(model={self.model!r}, base_url={self._where!r})"

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        started = time.monotonic()
        produced = 0
        try:
            events = self._streamed(prompt) if self.streaming else self._whole(prompt)
            for event in events:
                if isinstance(event, TextDelta):
                    produced += len(event.text)
                    yield event
                else:
                    self._log(started, produced=produced, stop_reason=event.stop_reason)
                    yield event
        except GenerationError as exc:
            self._log(started, produced=produced, error=str(exc))
            raise
        except Exception as exc:
            reason = self._scrub(self._reason(exc))
            self._log(started, produced=produced, error=reason)
            raise GenerationError(reason) from exc

    def _streamed(self, prompt: Prompt) -> Iterator[GenerationEvent]:
        with self._client.messages.stream(**self._request(prompt)) as stream:
            for event in stream:
                if (
                    event.type == "content_block_delta"
                    and event.delta.type == "text_delta"
                    and event.delta.text
                ):
                    yield TextDelta(event.delta.text)
            message = stream.get_final_message()
        yield self._done(message.stop_reason)

    def _whole(self, prompt: Prompt) -> Iterator[GenerationEvent]:
        message = self._client.messages.create(**self._request(prompt))
        text = "".join(block.text for block in message.content if block.type == "text")
        if text:
            yield TextDelta(text)
        yield self._done(message.stop_reason)

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        if not prompt.messages or prompt.messages[-1].get("role") != "user":
            raise GenerationError("the prompt must end with the customer's question")
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": prompt.system,
            "messages": prompt.messages,
        }

    def _done(self, stop_reason: str | None) -> GenerationDone:
        if not stop_reason:
            # No message_delta arrived: the stream ended before the model said it was done.
            raise GenerationError("the Anthropic API ended the answer early (no stop reason)")
        return GenerationDone.for_stop_reason(stop_reason)

    def _reason(self, exc: Exception) -> str:
        """One line for people: what failed, where, and whether retrying was already tried."""
        retries = f"after {self._max_retries} retries" if self._max_retries else "no retries"
        if isinstance(exc, anthropic.APITimeoutError):
            return f"the Anthropic API did not answer within {self._timeout:g}s ({retries})"
        if isinstance(exc, httpx2.TimeoutException):  # mid-stream: the SDK cannot retry that
            return (
                f"the Anthropic API went quiet for {self._timeout:g}s in the middle of the answer"
            )
        if isinstance(exc, anthropic.APIConnectionError):
            cause = type(exc.__cause__ or exc).__name__
            return f"could not reach {self._where} ({cause}; {retries})"
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            detail = shortened(_error_message(exc), limit=DETAIL_CHARS)
            if status == 200:  # an `event: error` in the middle of a stream
                return f"the Anthropic API failed while answering: {detail}"
            if status in (401, 403):
                return f"the Anthropic API rejected the API key (HTTP {status}): {detail}"
            if status == 429:
                return f"the Anthropic API is rate-limiting us (HTTP 429, {retries}): {detail}"
            if status == 529:
                return f"the Anthropic API is overloaded (HTTP 529, {retries}): {detail}"
            if status >= 500:
                return f"the Anthropic API failed (HTTP {status}, {retries}): {detail}"
            return f"the Anthropic API refused the request (HTTP {status}): {detail}"
        if isinstance(exc, httpx2.HTTPError):
            return f"the connection to {self._where} broke mid-answer ({type(exc).__name__})"
        # The SDK parses events without guarding: bad JSON, events out of order, bad indexes.
        return f"the Anthropic API sent a malformed response ({type(exc).__name__})"

    def _log(
        self,
        started: float,
        *,
        produced: int,
        stop_reason: str | None = None,
        error: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            "model": self.model,
            "streaming": self.streaming,
            "characters": produced,
            "ms": round((time.monotonic() - started) * 1000),
        }
        if error is None:
            log.info("generation_finished", stop_reason=stop_reason, **fields)
        else:
            log.warning("generation_failed", error=error, **fields)

    def _scrub(self, text: str) -> str:
        return shortened(text.replace(self._api_key, "[redacted]"), limit=REASON_CHARS)


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    return exc.message
