"""Which pages are answered from, and for whom: the one owner of the rule, in its SQL form.

A page is *current* when it is published and superseded by nothing: a draft is not written yet,
a retired page is never retrieved, quoted or cited, and a superseded page's successor speaks for
it. A current page is *visible* to a reader when its audience is one of the reader's
(``kb.selectors.access.audiences_for`` decides those).

The rule has two forms, because its callers speak two languages:

- the ORM form, ``Document.objects.current()`` and ``Document.objects.visible_to(audiences)``
  (``kb.models.DocumentQuerySet``, built on ``kb.models.CURRENT_DOCUMENT``, which is also the
  condition of the partial index ``kb_document_searchable``);
- the SQL form below, for the hand-written statements of retrieval and of the attention pages.

``tests/integration/test_visibility.py`` runs both forms on the same pages, in every status and
audience, so neither can change alone. (Which pages a reader may *open* is a wider rule:
retired pages stay reachable by their old links, see ``kb.selectors``.)

The status is written into the SQL as a literal, not bound: a prepared statement's generic plan
can use the partial index only when the query spells out the index's predicate.
"""

from __future__ import annotations

from django.db.models import Field

from kb.models import Document


def _column(field_name: str) -> str:
    field = Document._meta.get_field(field_name)
    assert isinstance(field, Field) and field.column
    return field.column


def current_document_sql(*, alias: str) -> str:
    """The SQL form of ``Document.objects.current()``: a condition on the documents table
    joined as ``alias``. It binds nothing."""
    published = Document.Status.PUBLISHED.value
    return (
        f"{alias}.{_column('status')} = '{published}' "
        f"AND {alias}.{_column('superseded_by')} IS NULL"
    )


def visible_document_sql(*, alias: str, audiences: str = "audiences") -> str:
    """The SQL form of ``Document.objects.visible_to(audiences)``: a condition on the documents
    table joined as ``alias`` that binds the audiences as the named parameter ``audiences``
    (a list of audience values: ``%(audiences)s``)."""
    return (
        f"{current_document_sql(alias=alias)} "
        f"AND {alias}.{_column('audience')} = ANY(%({audiences})s::text[])"
    )
