"""Which chunks are cross-references to another page (``search.references``)."""

from __future__ import annotations

import pytest

from search.references import referred_page

PAGES = {
    "errorhandling.rst",
    "logging.rst",
    "api/errors.md",
    "webhooks/retries.md",
    "faq.md",
    "configuration/ugly-urls.md",
}


@pytest.mark.parametrize(
    ("text", "path", "page"),
    [
        # a reST page's rendered link, and a Markdown page's relative one
        (
            "See [Logging](/docs/logging.rst) for information about how to log exceptions, "
            "such as by emailing them to admins.",
            "errorhandling.rst",
            "logging.rst",
        ),
        (
            "For more details, see [Retries](../webhooks/retries.md#schedule).",
            "api/errors.md",
            "webhooks/retries.md",
        ),
        ("Refer to [the FAQ](faq.md) when a sync fails.", "logging.rst", "faq.md"),
        (
            "  See also [Webhook retries](../webhooks/retries.md).\n",
            "api/errors.md",
            "webhooks/retries.md",
        ),
        # a Hugo page address, as Hugo's URL page writes it
        (
            "See [configure ugly URLs](/configuration/ugly-urls/).",
            "content-management/urls.md",
            "configuration/ugly-urls.md",
        ),
    ],
)
def test_a_one_sentence_chunk_that_sends_the_reader_to_another_page_names_it(
    text: str, path: str, page: str
) -> None:
    assert referred_page(text, path=path, pages=PAGES) == page


@pytest.mark.parametrize(
    ("text", "path"),
    [
        # a statement that links on the side states something itself
        ("Add `admin.enabled: false` to the ConfigMap (see [the FAQ](faq.md)).", "logging.rst"),
        # a list of related pages, and a link alone
        ("- [Logging](logging.rst)\n- [FAQ](faq.md)", "errorhandling.rst"),
        ("[Known issues](faq.md)", "logging.rst"),
        # more than the reference: the chunk says something of its own
        ("See [the FAQ](faq.md). Syncs retry three times before they fail.", "logging.rst"),
        # a page that is not among the candidates, the chunk's own page, a link to a site
        ("See [Billing](billing.md) for invoices.", "faq.md"),
        ("See [below](#retries) and [this page](faq.md) for the schedule.", "faq.md"),
        ("See [the Python docs](https://docs.python.org/3/library/logging.html).", "faq.md"),
        # a picture is not a link, even one whose file is named like a page
        ("See ![the sync diagram](faq.md) above.", "logging.rst"),
        # a sentence that only opens with the same letters
        ("Seems to fail? Check [the FAQ](faq.md).", "logging.rst"),
        ("", "faq.md"),
    ],
)
def test_other_chunks_name_no_page(text: str, path: str) -> None:
    assert referred_page(text, path=path, pages=PAGES) is None
