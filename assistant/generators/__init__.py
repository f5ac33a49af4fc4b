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
    "GenerationDone",
    "GenerationError",
    "GenerationEvent",
    "Generator",
    "Prompt",
    "Source",
    "TextDelta",
    "Turn",
    "get_generator",
]


@functools.cache
def get_generator() -> Generator:
    """The generator named by ``settings.GENERATOR``, made once per process."""
    choice = settings.GENERATOR
    if choice == "anthropic":
        from assistant.generators.anthropic import AnthropicGenerator

        return AnthropicGenerator(
            api_key=settings.ANTHROPIC_API_KEY,
            model=settings.ANTHROPIC_MODEL,
            max_tokens=settings.ANTHROPIC_MAX_TOKENS,
            base_url=settings.ANTHROPIC_BASE_URL,
            timeout=settings.ANTHROPIC_TIMEOUT,
            max_retries=settings.ANTHROPIC_MAX_RETRIES,
        )
    if choice == "extractive":
        from assistant.generators.extractive import ExtractiveGenerator

        return ExtractiveGenerator()
    raise GenerationError(f"unknown generator {choice!r} (settings.GENERATOR)")
