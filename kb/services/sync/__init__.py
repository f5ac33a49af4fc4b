"""Making the documents match a folder of Markdown files (kb_sync) or an upload (admin import).

``importing`` decides what each file needs (nothing, metadata, a new text) and writes it, from
what ``planning`` read first;
``inline`` chunks, embeds and writes kb_sync's changed documents itself; ``sources`` reads the
files; ``rows`` turns a parsed file into its document row; ``report`` says what was done.
"""

from kb.services.sync.importing import corpus_sync, documents_import
from kb.services.sync.report import SyncFailure, SyncRefused, SyncReport
from kb.services.sync.sources import Source

__all__ = ["Source", "SyncFailure", "SyncRefused", "SyncReport", "corpus_sync", "documents_import"]
