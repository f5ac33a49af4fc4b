"""Generators, one module per provider; the configured one is built once per process here."""

from __future__ import annotations

import functools

from django.conf import settings

from assistant.generators.base import (
    GenerationDone,
    GenerationError,
    GenerationEvent,
    Generator,
    Prompt,
    Source,
    TextDelta,
    Turn,
)

__all__ = [
    "GENERATOR_CHOICES",
    "GenerationDone",
    "GenerationError",
    "GenerationEvent",
    "Generator",
    "Prompt",
    "Source",
    "TextDelta",
    "Turn",
    "generator_for",
    "get_generator",
]

GENERATOR_CHOICES = ("anthropic", "extractive")


@functools.cache
def get_generator() -> Generator:
    """The generator named by ``settings.GENERATOR``, made once per process."""
    return generator_for(settings.GENERATOR)


def generator_for(
    choice: str, *, anthropic_api_key: str | None = None, anthropic_base_url: str | None = None
) -> Generator:
    """A new generator of kind ``choice`` ("anthropic" or "extractive"); the Anthropic key and
    base URL default to the settings' (an eval may point one run at a stub)."""
    if choice == "anthropic":
        from assistant.generators.anthropic import AnthropicGenerator

        return AnthropicGenerator(
            api_key=anthropic_api_key or settings.ANTHROPIC_API_KEY,
            model=settings.ANTHROPIC_MODEL,
            max_tokens=settings.ANTHROPIC_MAX_TOKENS,
            base_url=anthropic_base_url or settings.ANTHROPIC_BASE_URL,
            timeout=settings.ANTHROPIC_TIMEOUT,
            max_retries=settings.ANTHROPIC_MAX_RETRIES,
        )
    if choice == "extractive":
        from assistant.generators.extractive import ExtractiveGenerator

        return ExtractiveGenerator()
    raise GenerationError(f"unknown generator {choice!r} (settings.GENERATOR)")
