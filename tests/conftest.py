"""Fixtures every layer's tests share: the real embedder, the sample corpus, the tiny help
center, and named users (as healthchecks' test base has alice, bob and charlie).

- ``writer``: staff in "Doc writers" (drafts and edits documents).
- ``steward``: staff in "Policy stewards" (publishes, retires, manages embedding models).
- ``customer``: a signed-up reader, not staff.
- ``writer_client`` / ``steward_client`` / ``customer_client``: a ``Client`` signed in as one.
- ``help_center``: the tiny help center of ``tests.support.chat``, indexed; returns its folder.
- ``local_embedder``: the real embedder; ``counting_embedder`` counts what it embeds;
  ``cached_embedder`` remembers vectors across tests, for fixtures that index the same pages.
  The code under test gets the local model's remembered vectors too, for texts embedded before
  (``tests/support/remembered_vectors.py``); ``local_embedder`` itself always runs the model.

Users have no password: tests sign in with ``force_login``, and hashing one costs ~0.5 s.
``member(...)`` and ``signed_in(...)`` build other users and clients the same way. The groups
come from the migrations. A transactional test's flush empties every table, groups included
(and under ``pytest -n`` a worker may run one before a ``django_db`` test), so after each flush
``_restore_groups`` puts them back as the migrations left them, as Django puts back the
permissions.
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.core.cache import cache
from django.db.models import Q
from django.db.models.signals import post_migrate
from django.test import Client

from assistant.generators.extractive import UNIT_VECTORS
from kb.actors import SYSTEM
from kb.embedders import LOCAL_MODEL_KEY, Embedder, embedder_for
from kb.embedders.local import LocalMiniLMEmbedder
from kb.services.sync import corpus_sync
from tests.support.chat import index_help_center
from tests.support.live_server import stop_shared_server
from tests.support.remembered_vectors import (
    REAL_MODEL,
    vector_file,
    vector_read,
    vector_write,
    vectors_remembered,
    vectors_seeded,
)

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"
BENCH_DIR = Path(__file__).resolve().parent / "bench"
E2E_DIR = Path(__file__).resolve().parent / "e2e"
DOC_WRITERS = "Doc writers"
POLICY_STEWARDS = "Policy stewards"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bench", action="store_true", help="also collect tests/bench (make bench passes it)"
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The load test in tests/bench runs under ``make bench``, not with every ``make test``."""
    if collection_path == BENCH_DIR and not config.getoption("--bench"):
        return True
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The e2e tests share a server process (``tests/support/live_server.py``); every other
    test runs without it, as if no e2e test had run before it in this worker."""
    if E2E_DIR not in item.path.parents:
        stop_shared_server()


class CountingEmbedder:
    """The real embedder, counting what it is asked to embed (and able to fail on demand)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.key = inner.key
        self.provider = inner.provider
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.max_input_tokens = inner.max_input_tokens
        self.embedded_texts: list[str] = []
        self.failure: Exception | None = None

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.failure is not None:
            raise self.failure
        self.embedded_texts.extend(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if self.failure is not None:
            raise self.failure
        return self._inner.embed_query(text)


class CachedEmbedder:
    """The real embedder, remembering each text's vector for later tests and parallel workers.

    For fixtures that index the same pages test after test (the sample pages of the e2e tests
    take ~15 s to embed on 2 cores): the first test embeds them for real, later ones reuse the
    vectors the model gave. The vectors are kept in memory and in ``directory`` (one file per
    text, named by the model and the text's hash), so the workers of ``pytest -n`` and later runs
    share them. Tests of embedding itself (batching, reuse, counts) use ``local_embedder``,
    which always runs the model.
    """

    def __init__(self, inner: Embedder, directory: Path | None = None) -> None:
        self._inner = inner
        self.key = inner.key
        self.provider = inner.provider
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.max_input_tokens = inner.max_input_tokens
        self._directory = directory
        self._documents: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def _remembered(self, kind: str, text: str, memory: dict[str, np.ndarray]) -> bool:
        if text in memory:
            return True
        if self._directory is None:
            return False
        vector = vector_read(vector_file(self._directory, self.key, kind, text))
        if vector is None:
            return False
        memory[text] = vector
        return True

    def _remember(self, kind: str, text: str, vector: np.ndarray, memory: dict) -> None:
        memory[text] = vector
        if self._directory is not None:
            vector_write(vector_file(self._directory, self.key, kind, text), vector)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(
            dict.fromkeys(
                text for text in texts if not self._remembered("d", text, self._documents)
            )
        )
        if missing:
            for text, vector in zip(missing, self._inner.embed_documents(missing), strict=True):
                self._remember("d", text, vector, self._documents)
        if not texts:
            return self._inner.embed_documents([])
        return np.stack([self._documents[text] for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if not self._remembered("q", text, self._queries):
            self._remember("q", text, self._inner.embed_query(text), self._queries)
        return self._queries[text].copy()


def pages_written_and_synced(folder: Path, pages: dict[str, str], embedder: Embedder) -> Path:
    """Write ``pages`` (path -> Markdown) under ``folder`` and sync it; returns ``folder``."""
    for relative, text in pages.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    corpus_sync(directory=folder, embedder=embedder, actor=SYSTEM)
    return folder


def corpus_pages_indexed(folder: Path, pages: Sequence[str], embedder: Embedder) -> None:
    """Copy these pages of the sample corpus into ``folder`` and sync it, every page indexed."""
    for relative in pages:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS_DIR / relative, target)
    report = corpus_sync(directory=folder, embedder=embedder, actor=SYSTEM)
    assert not report.failed, report.failed


def _shared_embedding_cache() -> Path:
    # Beside the workers' data directories (.data/test/<worker>), so all workers share it.
    data_dir = Path(settings.DATA_DIR)
    shared = data_dir.parent if os.environ.get("PYTEST_XDIST_WORKER") else data_dir
    return shared / "embedding-cache"


@pytest.fixture(scope="session", autouse=True)
def _local_vectors_remembered() -> Iterator[None]:
    """The code under test gets the local model's vectors of a text it embedded before from
    memory (``tests/support/remembered_vectors.py``); ``local_embedder`` always runs it. A
    fresh clone starts from the sample help center's vectors when this machine's model gives
    the seed's probe vector, to the last places of float32 arithmetic (``vectors_seeded``)."""
    if settings.EMBEDDING_MODEL == LOCAL_MODEL_KEY:
        vectors_seeded(_shared_embedding_cache())
    with vectors_remembered(_shared_embedding_cache()):
        yield


@pytest.fixture(autouse=True)
def _answer_unit_vectors_forgotten() -> None:
    """Each test starts with the offline answerer keeping no unit vectors from another
    (``assistant.generators.extractive._UnitVectors``): a test that counts what is embedded
    must not depend on which tests ran before it."""
    UNIT_VECTORS.clear()


@pytest.fixture(scope="session")
def local_embedder() -> Embedder:
    """The configured embedder, an instance of its own that always runs the model (never the
    remembered vectors the code under test gets). A shallow copy of the one ``embedder_for``
    built: it shares that instance's loaded model, so a worker holds the model once."""
    embedder = copy.copy(embedder_for(settings.EMBEDDING_MODEL))
    if isinstance(embedder, LocalMiniLMEmbedder):
        REAL_MODEL.add(embedder)
    return embedder


@pytest.fixture(scope="session")
def cached_embedder(local_embedder: Embedder) -> CachedEmbedder:
    return CachedEmbedder(local_embedder, _shared_embedding_cache())


@pytest.fixture
def counting_embedder(local_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(local_embedder)


@pytest.fixture
def help_center(tmp_path: Path, cached_embedder: CachedEmbedder) -> Path:
    return index_help_center(tmp_path / "docs", embedder=cached_embedder)


@pytest.fixture
def empty_cache() -> Iterator[None]:
    """The shared Redis cache empty before and after the test: no cached answer, rate count or
    circuit state of another test is read (``pytest.mark.usefixtures("empty_cache")``)."""
    cache.clear()
    yield
    cache.clear()


# --- Named users ----------------------------------------------------------------------------------


# Each group's permissions as the migrations left them, read once the test database is built.
_GROUPS_AS_MIGRATED: dict[str, list[tuple[str, str]]] = {}


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        for group in Group.objects.prefetch_related("permissions__content_type"):
            _GROUPS_AS_MIGRATED[group.name] = [
                (permission.content_type.app_label, permission.codename)
                for permission in group.permissions.all()
            ]


def _restore_groups(sender: Any, **kwargs: Any) -> None:
    """After a flush, the groups exist again as the migrations made them.

    A flush sends post_migrate once per app, in order; by the last app's signal every app's
    permissions are back, so the groups are restored then.
    """
    if not _GROUPS_AS_MIGRATED or sender.label != list(apps.get_app_configs())[-1].label:
        return
    database = kwargs["using"]
    for name, permissions in _GROUPS_AS_MIGRATED.items():
        group, created = Group.objects.using(database).get_or_create(name=name)
        if created and permissions:
            wanted = Q()
            for app_label, codename in permissions:
                wanted |= Q(content_type__app_label=app_label, codename=codename)
            group.permissions.set(Permission.objects.using(database).filter(wanted))


post_migrate.connect(_restore_groups, dispatch_uid="tests.restore_groups")


def member(
    username: str, group: str | None = None, *, is_staff: bool = True, **flags: bool
) -> User:
    """A user (staff unless told otherwise) in ``group``, if one is given."""
    user = User.objects.create_user(username=username, is_staff=is_staff, **flags)
    if group is not None:
        user.groups.add(Group.objects.get(name=group))
    return user


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def writer(db: None) -> User:
    return member("writer", DOC_WRITERS)


@pytest.fixture
def steward(db: None) -> User:
    return member("steward", POLICY_STEWARDS)


@pytest.fixture
def customer(db: None) -> User:
    return member("customer", is_staff=False)


@pytest.fixture
def writer_client(writer: User) -> Client:
    return signed_in(writer)


@pytest.fixture
def steward_client(steward: User) -> Client:
    return signed_in(steward)


@pytest.fixture
def customer_client(customer: User) -> Client:
    return signed_in(customer)
