"""A text's index terms computed in Python, as PostgreSQL's ``english`` configuration makes them:
words less the Snowball stop words, stemmed with Snowball English. The question's terms and
their IDF come from the index (``search.results.RetrievalResult.term_idfs``), and what holds
them is read here: a candidate's headings (the local ranking stage), an answer unit's words
(``assistant.units``), so both sides must stem alike."""

from __future__ import annotations

import functools
import re

import Stemmer

from search.keywords import ENGLISH_STOP_WORDS

WORD = re.compile(r"[^\W_]+", re.UNICODE)
_stemmer = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def lexemes(text: str) -> set[str]:
    """The index terms of ``text``: words less English stop words, Snowball-stemmed."""
    return {stem(word) for word in words(text) if word not in ENGLISH_STOP_WORDS}
