"""What an import works from, read before it writes anything: the parsed sources, the stored
rows, and what this run may write of them (a folder sync only what its folder may change, see
``provenance``; any import only what the acting user may), everything else reported."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kb.actors import Actor
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.parsing import ParsedDocument
from kb.services.documents import DocumentPermissionDenied, document_lifecycle_check
from kb.services.sync.provenance import (
    MissingPage,
    Provenance,
    folder_plan,
    from_folder,
    pages_missing,
)
from kb.services.sync.report import SyncFailure, SyncRefused, SyncReport
from kb.services.sync.sources import Source, sources_parse


@dataclass
class ImportPlan:
    """What one import works from, all read before it writes anything."""

    parsed: list[ParsedDocument]  # what this run may write, in the order of the sources
    present: set[str]  # every path the sources hold, parsed or not
    existing: dict[str, Document]  # every stored row by path (bodies deferred)
    provenances: dict[str, Provenance]  # by path: where each written row says it came from
    missing: dict[str, MissingPage]  # files whose synced page a person has moved or deleted
    current_ids: set[int]  # documents whose chunks are current in the embedding model
    stored_audiences: dict[str, str]  # as stored: the writes update ``existing`` in place


def import_plan(
    *,
    sources: Sequence[Source],
    origin: str,
    actor: Actor,
    folder: str | None,
    overwrite: bool,
    allow_prune_all: bool,
    embedding_model: EmbeddingModel,
    report: SyncReport,
) -> ImportPlan:
    """Parse the sources and decide what this run may write; what it may not is reported
    (a parse error, a folder conflict, a change the actor may not make)."""
    present, parsed, files = sources_parse(sources, origin=origin, report=report)
    existing = {
        doc.path: doc
        for doc in Document.objects.select_related("superseded_by").defer(
            "body", "superseded_by__body"
        )
    }
    if folder is not None:
        _emptied_folder_refuse(
            present=present,
            existing=existing,
            folder=folder,
            origin=origin,
            allow_prune_all=allow_prune_all,
        )
    current_ids = set(
        DocumentIndexState.objects.current_in(embedding_model).values_list("document_id", flat=True)
    )
    missing: dict[str, MissingPage] = {}
    if folder is not None:
        new_paths = {d.path for d in parsed if d.path not in existing}
        missing = pages_missing(paths=new_paths, existing=existing, folder=folder)
        parsed = folder_plan(
            parsed=parsed,
            existing=existing,
            files=files,
            missing=missing,
            folder=folder,
            overwrite=overwrite,
            current_ids=current_ids,
            report=report,
        )
        provenances = {
            d.path: Provenance(Document.Origin.FOLDER, folder, files[d.path]) for d in parsed
        }
    else:
        provenances = {d.path: Provenance(Document.Origin.IMPORT) for d in parsed}
    return ImportPlan(
        parsed=_permitted(parsed, existing, actor, report),
        present=present,
        existing=existing,
        provenances=provenances,
        missing=missing,
        current_ids=current_ids,
        stored_audiences={path: row.audience for path, row in existing.items()},
    )


def _emptied_folder_refuse(
    *,
    present: set[str],
    existing: dict[str, Document],
    folder: str,
    origin: str,
    allow_prune_all: bool,
) -> None:
    """A folder that holds no Markdown never removes the documents synced from it unless asked:
    an unmounted volume or a wrong path looks just like that."""
    if present or allow_prune_all:
        return
    synced_from_folder = sum(from_folder(doc, folder) for doc in existing.values())
    if synced_from_folder:
        raise SyncRefused(
            f"{origin} has no Markdown files but the index holds {synced_from_folder} documents "
            "synced from it; refusing to remove them all (pass --allow-prune-all if that is what "
            "you want)"
        )


def _permitted(
    parsed: list[ParsedDocument], existing: dict[str, Document], actor: Actor, report: SyncReport
) -> list[ParsedDocument]:
    """The documents ``actor`` may write as their files say; the others are reported failed
    before anything is embedded. ``document_save`` checks again as each one is written."""
    permitted = []
    for document in parsed:
        try:
            document_lifecycle_check(
                actor=actor,
                document=existing.get(document.path) or Document(path=document.path),
                status=document.status,
                successor_path=document.superseded_by,
            )
        except DocumentPermissionDenied as exc:
            report.failed.append(SyncFailure(document.path, str(exc)))
        else:
            permitted.append(document)
    return permitted
