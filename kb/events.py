"""What kb tells the apps built on it, as Django signals sent once the change has committed.

kb imports none of those apps (they import kb): the assistant answers a page's test questions
when told that the page was indexed or that its questions changed, by connecting here
(``assistant.receivers``). A receiver only sends its own work to a queue: it runs in the
sender's process, after the commit, and must be quick.
"""

from __future__ import annotations

from django.dispatch import Signal

# The pages' chunks in the active (live) model were rewritten, and that committed. Sent with
# ``document_ids``, by every indexing path (the background task, a batch, kb_sync): once for the
# documents one write committed (a sync's window is one write of up to hundreds of pages).
documents_indexed = Signal()

# Test questions of the page were added or changed (``question_ids``), and that committed.
test_questions_changed = Signal()
