"""reStructuredText pages (Sphinx) read into documents: each construct as a reader sees it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.chunking.lines import markup_left
from kb.chunking.structure import BlockKind, split_sections
from kb.parsing import ParsedDocument
from kb.rendering import document_render
from kb.rst import RstPages, rst_pages_read
from kb.services.sync.sources import FolderFile


def _read(tmp_path: Path, files: dict[str, str]) -> RstPages:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    pages = {name: text.encode() for name, text in files.items() if name.endswith(".rst")}
    reader = FolderFile(tmp_path.resolve(), "").read_in_folder
    return rst_pages_read(pages, read_file=reader)


def _page(tmp_path: Path, text: str, path: str = "page.rst") -> ParsedDocument:
    pages = _read(tmp_path, {path: text})
    assert pages.failures == {}
    return pages.documents[path]


def _visible(document: ParsedDocument) -> str:
    """What a reader and the embedder get: every block's text, headings as their path."""
    return "\n".join(
        " > ".join(section.path) + "\n" + "\n".join(block.text for block in section.blocks)
        for section in split_sections(document.body)
    )


def test_sections_nest_by_the_order_their_adornments_first_appear(tmp_path: Path) -> None:
    # given a page whose adornments run ~, *, - (any order is valid reStructuredText)
    document = _page(
        tmp_path,
        "Guide\n~~~~~\n\nIntro.\n\nSetup\n*****\n\nSet up.\n\nProxy\n-----\n\nA proxy.\n\n"
        "Usage\n*****\n\nUse it.\n",
    )

    # then the title is the page's and the sections nest under it as written
    assert document.title == "Guide"
    paths = [section.path for section in split_sections(document.body)]
    assert paths == [
        ("Guide",),
        ("Guide", "Setup"),
        ("Guide", "Setup", "Proxy"),
        ("Guide", "Usage"),
    ]


def test_a_field_list_at_the_top_is_the_pages_front_matter(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        ":audience: internal\n:category: billing\n:updated: 2026-11-02\n:orphan:\n\n"
        "Refunds\n=======\n\nText.\n",
    )

    assert (document.audience, document.category, str(document.updated_on)) == (
        "internal",
        "billing",
        "2026-11-02",
    )
    assert ":audience:" not in document.body and "internal" not in _visible(document)
    assert document.unknown_keys == ()  # `orphan` is Sphinx's own


def test_a_near_miss_of_a_guarded_field_is_refused_with_its_line(tmp_path: Path) -> None:
    pages = _read(tmp_path, {"page.rst": "Refunds\n=======\n\n:audiance: internal\n\nText.\n"})

    assert str(pages.failures["page.rst"]) == (
        "page.rst:4: front matter: unknown key 'audiance' (did you mean 'audience'?)"
    )


def test_admonitions_are_our_admonitions_with_their_title(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Page\n====\n\n.. note:: Save first.\n\n.. warning::\n\n   Never share it.\n\n"
        "   - not by mail\n\n.. admonition:: Before you start\n\n   Have a key.\n\n"
        ".. seealso:: The billing page.\n",
    )

    blocks = [block.text for section in split_sections(document.body) for block in section.blocks]
    assert blocks == [
        "Note",
        "Save first.",
        "Warning",
        "Never share it.",
        "- not by mail",
        "Before you start",
        "Have a key.",
        "See also",
        "The billing page.",
    ]
    assert markup_left(_visible(document)) == []


def test_literal_blocks_and_code_blocks_are_code(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Page\n====\n\nRun this::\n\n   pip install acme\n   # not a heading\n\n"
        ".. code-block:: python\n   :linenos:\n   :caption: ``hello.py``\n\n   print('hi')\n",
    )

    blocks = split_sections(document.body)[0].blocks
    assert [(block.kind, block.text) for block in blocks] == [
        (BlockKind.PARAGRAPH, "Run this:"),
        (BlockKind.CODE, "```\npip install acme\n# not a heading\n```"),
        (BlockKind.PARAGRAPH, "**`hello.py`**"),
        (BlockKind.CODE, "```python\nprint('hi')\n```"),
    ]


LITERAL_BLOCKS = (
    "Page\n====\n\nFor example::\n\n   app.config['DEBUG'] = True\n\n"
    "In the shell::\n\n   >>> app.name\n   'acme'\n\n"
    "Then::\n\n   $ flask run\n\n"
    ".. highlight:: console\n\nFrom here on::\n\n   flask --app hello run\n\n"
    ".. code-block::\n\n   pip install acme\n"
)


@pytest.mark.parametrize(
    ("conf", "fences"),
    [
        # Sphinx's "default": Python where the block reads as Python, else no language
        ("", ["```python", "```pycon", "```", "```console", "```console"]),
        (
            'highlight_language = "python3"\n',
            ["```python", "```pycon", "```python", "```console", "```console"],
        ),
        ('highlight_language = "none"\n', ["```", "```", "```", "```console", "```console"]),
    ],
)
def test_a_literal_block_is_in_the_language_sphinx_highlights_it_in(
    tmp_path: Path, conf: str, fences: list[str]
) -> None:
    # when
    pages = _read(tmp_path, {"conf.py": conf, "page.rst": LITERAL_BLOCKS})

    # then
    blocks = split_sections(pages.documents["page.rst"].body)[0].blocks
    assert [
        block.text.split("\n", 1)[0] for block in blocks if block.kind == BlockKind.CODE
    ] == fences


def test_ref_and_doc_link_to_the_docs_page_and_section_the_label_names(tmp_path: Path) -> None:
    # given two pages, one with a label on a section
    pages = _read(
        tmp_path,
        {
            "guide/refunds.rst": "Refunds\n=======\n\n.. _refund-window:\n\nTime limits\n"
            "-----------\n\nThirty days.\n",
            "index.rst": "Home\n====\n\nSee :ref:`refund-window`, :ref:`the limits "
            "<refund-window>` and :doc:`guide/refunds`.\n",
        },
    )

    # then each role is a link to the target's /docs page, with its title as the text
    home = pages.documents["index.rst"]
    assert (
        "See [Time limits](/docs/guide/refunds.rst#refund-window), [the limits]"
        "(/docs/guide/refunds.rst#refund-window) and [Refunds](/docs/guide/refunds.rst)."
    ) in home.body
    # and the anchor is where the target page's heading is
    target = pages.documents["guide/refunds.rst"]
    rendered = document_render(body=target.body, title=target.title, path=target.path)
    assert [heading.anchor for heading in rendered.headings] == ["refund-window"]
    assert home.warnings == ()


def test_a_reference_to_no_label_is_its_text_and_reported(tmp_path: Path) -> None:
    document = _page(
        tmp_path, "Home\n====\n\nSee :ref:`nowhere`, :doc:`missing` and :doc:`werkzeug:test`.\n"
    )

    assert "See nowhere, missing and werkzeug:test." in document.body
    assert document.warnings == (
        "line 4: :ref:`nowhere` names no page or label in the folder: kept as its text",
        "line 4: :doc:`missing` names no page or label in the folder: kept as its text",
        "line 4: :doc:`werkzeug:test` names a page of another project (werkzeug): kept as its text",
    )


def test_sphinx_roles_read_as_their_text_with_no_docutils_error(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Home\n====\n\nClick :guilabel:`&Save`, press :kbd:`Ctrl+S`, pick :menuselection:`File "
        "--> Export`, see :term:`workspace`, run :code:`acme sync`, edit :file:`~/.acme/{name}` "
        "and call :meth:`~acme.Client.sync`.\n",
    )

    assert (
        "Click Save, press `Ctrl+S`, pick File \u203a Export, see workspace, run `acme sync`, "
        "edit `~/.acme/name` and call `sync()`."
    ) in document.body
    assert document.warnings == ()
    assert "problematic" not in document.body and "Unknown" not in document.body


def test_an_unknown_role_is_its_text_and_reported(tmp_path: Path) -> None:
    document = _page(tmp_path, "Home\n====\n\nAsk :team:`billing <billing-team>` now.\n")

    assert "Ask billing now." in document.body
    assert document.warnings == (
        'line 4: unknown role ":team:" (:team:`billing <billing-team>`): read as its text',
    )


def test_a_toctree_is_navigation_not_text(tmp_path: Path) -> None:
    pages = _read(
        tmp_path,
        {
            "index.rst": "Home\n====\n\n.. toctree::\n   :maxdepth: 2\n\n   install\n"
            "   Billing <billing>\n   https://acme.example\n",
            "install.rst": "Install\n=======\n\nText.\n",
            "billing.rst": "Billing\n=======\n\nText.\n",
        },
    )

    home = pages.documents["index.rst"]
    assert home.body == "# Home\n"
    assert home.metadata["toctree"] == ["install.rst", "billing.rst"]


def test_images_and_figures_keep_their_alt_text_and_caption(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Home\n====\n\n.. image:: shot.png\n   :alt: The main screen\n\n"
        ".. figure:: form.png\n   :alt: The refund form\n\n   Where to ask for a refund.\n",
    )

    assert "![The main screen](shot.png)" in document.body
    assert "![The refund form](form.png)\n\nWhere to ask for a refund." in document.body


def test_an_include_inside_the_folder_is_part_of_the_page(tmp_path: Path) -> None:
    # given a page including another .rst file of the folder
    pages = _read(
        tmp_path,
        {
            "guide/install.rst": "Install\n=======\n\n.. include:: _requirements.rst\n",
            "guide/_requirements.rst": "You need Python 3.10.\n",
        },
    )

    # then its text is the page's, and the included file is no page of its own
    assert "You need Python 3.10." in pages.documents["guide/install.rst"].body
    assert pages.part_of == {"guide/_requirements.rst": "guide/install.rst"}
    assert "guide/_requirements.rst" not in pages.documents


def test_an_include_outside_the_folder_is_refused_and_reported(tmp_path: Path) -> None:
    # given a file next to the folder, and a page that tries to include it and /etc/passwd
    folder = tmp_path / "docs"
    folder.mkdir()
    (tmp_path / "secret.rst").write_text("The admin password is hunter2.\n")
    pages = _read(
        folder,
        {
            "page.rst": "Page\n====\n\n.. include:: ../secret.rst\n\n"
            ".. literalinclude:: /../../../../etc/passwd\n\nEnd.\n",
        },
    )

    document = pages.documents["page.rst"]
    assert "hunter2" not in document.body and "root:" not in document.body
    assert document.warnings == (
        "line 4: include ../secret.rst: outside the folder, refused (a sync publishes only "
        "what the folder holds)",
        "line 6: include /../../../../etc/passwd: outside the folder, refused (a sync "
        "publishes only what the folder holds)",
    )


def test_an_include_through_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (tmp_path / "secret.txt").write_text("hunter2\n")
    (folder / "notes.txt").symlink_to(tmp_path / "secret.txt")
    pages = _read(folder, {"page.rst": "Page\n====\n\n.. include:: notes.txt\n"})

    document = pages.documents["page.rst"]
    assert "hunter2" not in document.body
    assert len(document.warnings) == 1
    assert "a link to a file outside the folder" in document.warnings[0]


def test_an_admonition_inside_a_block_quote_is_a_box_the_quote_can_hold(tmp_path: Path) -> None:
    # an indented block is a block quote in reStructuredText; a MkDocs box (`!!! note`) inside
    # a Markdown quote is not read as one, and its marks were left in 31 of SQLAlchemy's
    # chunks ("> !!! note "See also"")
    document = _page(
        tmp_path,
        "Page\n====\n\nText:\n\n    Quoted.\n\n    .. note::\n\n        Mind the gap.\n",
    )

    assert document.body == (
        "# Page\n\nText:\n\n> Quoted.\n>\n> [!note] Note\n>\n> Mind the gap.\n"
    )
    visible = _visible(document)
    assert "Mind the gap." in visible and "!!!" not in visible and "[!note]" not in visible
    assert markup_left(visible) == []


def test_an_unknown_directive_with_prose_is_read_as_its_text(tmp_path: Path) -> None:
    # a project's own box (Python's docs have `impl-detail`, SQLAlchemy's `change`): the site
    # shows its text, which had been left out with the directive
    document = _page(
        tmp_path,
        "Page\n====\n\nBefore.\n\n.. implementation-note::\n\n"
        "   The reference build caches up to 256 widgets per process.\n\n"
        ".. change::\n   :tags: bug, sql\n\n"
        "   fixed the regexp that filters out warnings for non reflected directives\n\n"
        ".. deprecated-removed:: 3.4 3.6\n   Use ``make_widget()`` instead.\n\n"
        "After.\n",
    )

    assert document.body == (
        "# Page\n\nBefore.\n\nThe reference build caches up to 256 widgets per process.\n\n"
        "fixed the regexp that filters out warnings for non reflected directives\n\n"
        "*Deprecated removed:* 3.4 3.6 Use `make_widget()` instead.\n\nAfter.\n"
    )
    assert document.warnings == tuple(
        f'line {line}: unknown directive ".. {name}::": its content is read as text'
        for line, name in ((6, "implementation-note"), (10, "change"), (15, "deprecated-removed"))
    )


def test_an_unknown_directive_whose_argument_is_a_sentence_shows_it(tmp_path: Path) -> None:
    # written with an argument and never with content, it is not a cross-reference target when
    # the argument is a sentence: Sphinx's page shows it under the directive's name
    pages = _read(
        tmp_path,
        {
            "a.rst": "A\n=\n\n.. availability:: Unix, not WASI.\n\nText.\n",
            "b.rst": "B\n=\n\n.. availability:: Linux >= 4.5.\n",
        },
    )

    assert pages.documents["a.rst"].body == "# A\n\n*Availability:* Unix, not WASI.\n\nText.\n"
    assert "*Availability:* Linux >= 4.5." in pages.documents["b.rst"].body


def test_an_unknown_directive_with_commands_or_code_is_read_as_code(tmp_path: Path) -> None:
    # a shell session (sphinx-prompt, a project's `console`), code a build runs: the site
    # shows them as code, never as a sentence
    document = _page(
        tmp_path,
        "Page\n====\n\n.. console::\n\n   $ python -m pip install widgetkit\n\n"
        ".. prompt:: bash $\n\n   pip install widgetkit\n\n"
        ".. exec-code::\n\n   total = sum([1, 2])\n   print(total)\n",
    )

    assert document.body == (
        "# Page\n\n```\n$ python -m pip install widgetkit\n```\n\n"
        "```\npip install widgetkit\n```\n\n```python\ntotal = sum([1, 2])\nprint(total)\n```\n"
    )
    assert document.warnings == tuple(
        f'line {line}: unknown directive ".. {name}::": its content is read as code'
        for line, name in ((4, "console"), (8, "prompt"), (12, "exec-code"))
    )


def test_a_diagram_is_a_picture_not_text(tmp_path: Path) -> None:
    document = _page(
        tmp_path, "Page\n====\n\nBefore.\n\n.. mermaid::\n\n   graph TD; A-->B\n\nAfter.\n"
    )

    assert document.body == "# Page\n\nBefore.\n\nAfter.\n"
    assert document.warnings == ()


def test_another_domains_object_is_read_under_its_signature(tmp_path: Path) -> None:
    # sphinxcontrib-httpdomain's endpoints, as Sphinx's own domains describe their objects
    document = _page(
        tmp_path,
        "API\n===\n\n.. http:get:: /api/v2/project/\n\n"
        "   Retrieve a list of all projects\n\n   .. change::\n\n      Paged by 10.\n",
    )

    assert document.body == (
        "# API\n\n## `/api/v2/project/`\n\nRetrieve a list of all projects\n\nPaged by 10.\n"
    )
    assert document.warnings == (
        'line 4: unknown directive ".. http:get::": read as the description of its argument',
        'line 8: unknown directive ".. change::": its content is read as text',
    )


def test_a_projects_own_object_type_is_read_under_its_signature(tmp_path: Path) -> None:
    # Python's docs describe coroutines and opcodes with directives of their own extension:
    # the signature is the entry's heading, as a `py:function`'s is
    document = _page(
        tmp_path,
        "Tasks\n=====\n\n.. coroutinefunction:: sleep(delay, result=None)\n\n"
        "   Block for *delay* seconds.\n\n.. opcode:: NOP\n\n   Do nothing code.\n\n"
        ".. legacy:: function\n\n   Use the newer form.\n",
    )

    assert document.body == (
        "# Tasks\n\n## `sleep(delay, result=None)`\n\nBlock for *delay* seconds.\n\n"
        "## `NOP`\n\nDo nothing code.\n\nUse the newer form.\n"
    )
    assert document.warnings == (
        'line 4: unknown directive ".. coroutinefunction::": read as the description of its '
        "argument",
        'line 8: unknown directive ".. opcode::": read as the description of its argument',
        'line 12: unknown directive ".. legacy::": its content is read as text',
    )


def test_an_unknown_directive_without_content_is_reported_and_left_out(tmp_path: Path) -> None:
    # what it shows is built by the extension (Scrapy's `settingslist`, a plot from a file)
    document = _page(tmp_path, "Page\n====\n\nBefore.\n\n.. settingslist::\n\nAfter.\n")

    assert document.body == "# Page\n\nBefore.\n\nAfter.\n"
    assert document.warnings == (
        'line 6: unknown directive ".. settingslist::": it has no content in the page; '
        "what it shows is left out",
    )


def test_a_projects_own_cross_reference_types_are_targets_and_references(tmp_path: Path) -> None:
    # given: Scrapy marks each stat it documents with `.. stat:: name` (a type its extension adds
    # with Sphinx's add_crossref_type) and refers to it with :stat:`name`; Sphinx shows nothing
    # for the mark and the reference as code
    pages = _read(
        tmp_path,
        {
            "stats.rst": (
                "Stats\n=====\n\n.. stat:: downloader/exception_count\n\n"
                "``downloader/exception_count``\n    Number of exceptions.\n"
            ),
            "use.rst": (
                "Use\n===\n\nWatch :stat:`downloader/exception_count` and :stat:`the depth "
                "<depth/max>`.\n\n.. console::\n\n   $ scrapy crawl quotes\n"
            ),
        },
    )

    stats, use = pages.documents["stats.rst"], pages.documents["use.rst"]
    # then: the mark is no text and no warning, the references read as code
    assert stats.body == "# Stats\n\n**`downloader/exception_count`**\n\nNumber of exceptions.\n"
    assert stats.warnings == ()
    assert "Watch `downloader/exception_count` and `the depth`." in use.body
    # and: a directive written with content, or with no argument, is still unknown
    assert use.warnings == (
        'line 6: unknown directive ".. console::": its content is read as code',
    )


def test_autodoc_directives_are_reported_as_text_built_from_code(tmp_path: Path) -> None:
    document = _page(tmp_path, "API\n===\n\n.. autofunction:: acme.sync\n")

    assert document.body == "# API\n"
    assert document.warnings == (
        "line 4: .. autofunction:: acme.sync is written from the code by Sphinx (autodoc); "
        "its text is not in the folder and is left out",
    )


def test_object_descriptions_head_their_text(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Config\n======\n\n.. data:: SECRET_KEY\n\n   Signs the session cookie.\n\n"
        "   .. versionchanged:: 2.0\n      Now required.\n",
    )

    sections = split_sections(document.body)
    assert sections[1].path == ("Config", "`SECRET_KEY`")
    assert [block.text for block in sections[1].blocks] == [
        "Signs the session cookie.",
        "*Changed in version 2.0:* Now required.",
    ]


def test_a_description_with_no_text_before_its_own_section_is_a_target(tmp_path: Path) -> None:
    # given Scrapy's settings page: `.. setting:: X` marks the section about X that follows it
    # (a cross-reference target, invisible in Sphinx), 200 times
    document = _page(
        tmp_path,
        "Settings\n========\n\n.. setting:: AWS_KEY\n\nAWS_KEY\n-------\n\nDefault: ``None``\n\n"
        ".. setting:: BOT_NAME\n\nBOT_NAME\n--------\n\nThe bot's name.\n\n"
        ".. option:: --verbose\n\nBelow.\n",
    )

    # then each section is headed once, not by an empty heading first
    assert [section.path for section in split_sections(document.body)] == [
        ("Settings",),
        ("Settings", "AWS_KEY"),
        ("Settings", "BOT_NAME"),
        # a description with no text that no section of its name follows is still shown
        ("Settings", "BOT_NAME", "`--verbose`"),
    ]


def test_sphinx_domains_and_extensions_are_read_as_sphinx_shows_them(tmp_path: Path) -> None:
    # Sphinx's C, C++, JavaScript and reST domains describe objects as its Python domain does
    # (Sphinx's own docs: 156 `rst:directive`/`rst:role` entries), `sphinx.ext.doctest` shows
    # its code, and a diagram is a picture: none of it was read before, their text was lost
    document = _page(
        tmp_path,
        "API\n===\n\n"
        ".. c:function:: PyObject *PyList_New(Py_ssize_t len)\n\n   Return a new list.\n\n"
        ".. js:function:: $.getJSON(href, callback)\n\n   Fetch JSON from *href*.\n\n"
        ".. rst:directive:: .. toctree::\n\n   Lists the pages below this one.\n\n"
        ".. cpp:namespace-push:: acme\n\n"
        ".. testcode::\n\n   print(1 + 1)\n\n"
        ".. testoutput::\n\n   2\n\n"
        ".. graphviz::\n\n   digraph { a -> b }\n\n"
        ".. version-added:: 8.1\n",
    )

    sections = split_sections(document.body)
    assert [section.path[-1] for section in sections[1:]] == [
        "`PyObject *PyList_New(Py_ssize_t len)`",
        "`$.getJSON(href, callback)`",
        "`.. toctree::`",
    ]
    assert [block.text for block in sections[1].blocks] == ["Return a new list."]
    assert [block.text for block in sections[2].blocks] == ["Fetch JSON from *href*."]
    assert [block.text for block in sections[3].blocks] == [
        "Lists the pages below this one.",
        "```python\nprint(1 + 1)\n```",
        "```none\n2\n```",
        "*Added in version 8.1.*",
    ]
    assert "digraph" not in document.body and "acme" not in document.body
    assert document.warnings == ()


def test_prose_that_looks_like_markdown_stays_prose(tmp_path: Path) -> None:
    # given paragraphs (escaped in reStructuredText) that would open a block in Markdown
    document = _page(
        tmp_path,
        "Page\n====\n\n\\# not a heading, a_b and 2 * 3\n\n\\- not a list\n\n"
        "\\1. not a list either\n\n\\| not a table\n\n<!-- not a comment -->\n",
    )

    # then each stays a paragraph and reads as written
    blocks = split_sections(document.body)[0].blocks
    assert [block.kind for block in blocks] == [BlockKind.PARAGRAPH] * 5
    html = document_render(body=document.body, title=document.title).html
    for text in ("# not a heading, a_b and 2 * 3", "- not a list", "1. not a list either"):
        assert f"<p>{text}</p>" in html
    assert "<p>| not a table</p>" in html
    assert "<p>&lt;!-- not a comment --&gt;</p>" in html


def test_conf_py_gives_the_default_role_and_extlinks(tmp_path: Path) -> None:
    pages = _read(
        tmp_path,
        {
            "conf.py": 'import os\ndefault_role = "code"\n'
            'extlinks = {"issue": ("https://t.example/%s", "#%s")}\nx = os.getcwd()\n',
            "page.rst": "Page\n====\n\nRun `acme sync`; see :issue:`42`.\n",
        },
    )

    assert "Run `acme sync`; see [#42](https://t.example/42)." in pages.documents["page.rst"].body


def test_conf_py_gives_every_page_its_epilog_and_version(tmp_path: Path) -> None:
    # given: Read the Docs names its two products in rst_epilog and uses the names on 33 pages;
    # Sphinx defines |version| and |release| from conf.py
    pages = _read(
        tmp_path,
        {
            "conf.py": 'version = "4.2"\nrelease = "4.2.1"\n'
            'rst_epilog = """\n.. |org| replace:: Acme Community\n"""\n'
            'rst_prolog = ".. |com| replace:: Acme Business"\n',
            "page.rst": (
                "Page\n====\n\n|org| and |com| run |version| (|release|).\n\n"
                ".. tabs::\n\n   .. tab:: |org|\n\n      Free.\n\n"
                "   .. tab:: ``acme`` CLI\n\n      Paid.\n"
            ),
            "own.rst": "Own\n===\n\nThis is |version|.\n\n.. |version| replace:: 5.0\n",
        },
    )

    page, own = pages.documents["page.rst"], pages.documents["own.rst"]
    # then: each substitution reads as the site shows it, in a tab's label too
    assert "Acme Community and Acme Business run 4.2 (4.2.1)." in page.body
    assert "**Acme Community**\n\nFree." in page.body
    assert "**`acme` CLI**\n\nPaid." in page.body
    assert page.warnings == ()
    # and: a page that defines its own keeps it
    assert "This is 5.0." in own.body and own.warnings == ()


def test_a_substitution_defined_nowhere_is_reported(tmp_path: Path) -> None:
    # docutils reports it while it transforms the tree, beside the tree: it had gone unsaid
    document = _page(tmp_path, "Page\n====\n\nVersion |version|, by |brand|.\n")

    assert "Version |version|, by |brand|." in document.body
    assert document.warnings == (
        "line 4: |version| is not defined for this page: shown as written",
        "line 4: |brand| is not defined for this page: shown as written",
    )


def test_sphinx_issues_roles_link_to_the_tracker(tmp_path: Path) -> None:
    # given: a changelog written with the sphinx-issues extension (pytest's: 1,600 uses)
    pages = _read(
        tmp_path,
        {
            "conf.py": 'extensions = ["sphinx.ext.intersphinx", "sphinx_issues"]\n'
            'issues_github_path = "acme/billing"\n',
            "page.rst": (
                "Changes\n=======\n\nFixed :issue:`42` and :issue:`12,13` (:pr:`58`, "
                ":issue:`other/tool#7`), thanks to :user:`ada` and :user:`Grace <ghopper>`; "
                "in :commit:`6bb9124d5e9dbb2f7b52864c3d8af7feb1b69403` with :pypi:`requests`.\n"
            ),
        },
    )

    document = pages.documents["page.rst"]
    # then: each reads as the site shows it, a link to the issue, the pull request, the person,
    # the commit, the package
    assert (
        "Fixed [#42](https://github.com/acme/billing/issues/42) and "
        "[#12](https://github.com/acme/billing/issues/12), "
        "[#13](https://github.com/acme/billing/issues/13) "
        "([#58](https://github.com/acme/billing/pull/58), "
        "[other/tool#7](https://github.com/other/tool/issues/7)), thanks to "
        "[@ada](https://github.com/ada) and [Grace](https://github.com/ghopper); in "
        "[@6bb9124](https://github.com/acme/billing/commit/6bb9124d5e9dbb2f7b52864c3d8af7feb1b69403)"
        " with [requests](https://pypi.org/project/requests)."
    ) in " ".join(document.body.split())
    assert document.warnings == ()


def test_sphinx_issues_roles_follow_a_trackers_own_addresses(tmp_path: Path) -> None:
    # given: a project on GitLab sets the addresses and the prefix itself
    pages = _read(
        tmp_path,
        {
            "conf.py": 'extensions = ["sphinx_issues"]\n'
            'issues_default_group_project = "team/app"\n'
            'issues_uri = "https://gitlab.example/{group}/{project}/-/issues/{issue}"\n'
            'issues_prefix = "GL-"\n'
            'issues_user_uri = "https://gitlab.example/{user}"\n',
            "page.rst": "Changes\n=======\n\nFixed :issue:`7` (:user:`ada`).\n",
        },
    )

    assert (
        "Fixed [GL-7](https://gitlab.example/team/app/-/issues/7) "
        "([@ada](https://gitlab.example/ada))."
    ) in pages.documents["page.rst"].body


def test_sphinx_issues_roles_are_unknown_without_the_extension(tmp_path: Path) -> None:
    document = _page(tmp_path, "Changes\n=======\n\nFixed :issue:`42`.\n")

    assert "Fixed 42." in document.body
    assert document.warnings == ('line 4: unknown role ":issue:" (:issue:`42`): read as its text',)


def test_tables_are_pipe_tables(tmp_path: Path) -> None:
    document = _page(
        tmp_path,
        "Page\n====\n\n.. list-table:: Plans\n   :header-rows: 1\n\n   * - Plan\n     - Price\n"
        "   * - Pro\n     - 10 | month\n",
    )

    blocks = split_sections(document.body)[0].blocks
    assert blocks[0].text == "**Plans**"
    assert (blocks[1].kind, blocks[1].text) == (
        BlockKind.TABLE,
        "| Plan | Price |\n| --- | --- |\n| Pro | 10 \\| month |",
    )


def test_a_table_without_a_header_keeps_its_first_row_as_a_row(tmp_path: Path) -> None:
    # given: a simple table with no header, as Flask lists its URL converters (Sphinx shows
    # every row alike; the first names no column)
    document = _page(
        tmp_path,
        "Page\n====\n\n"
        "========== ==========================================\n"
        "``string`` (default) accepts any text without a slash\n"
        "``path``   like ``string`` but also accepts slashes\n"
        "========== ==========================================\n",
    )

    # then: a pipe table needs a header row, so its header is empty, and the rows read alone
    blocks = split_sections(document.body)[0].blocks
    assert (blocks[0].kind, blocks[0].text) == (
        BlockKind.TABLE,
        "|   |   |\n| --- | --- |\n"
        "| `string` | (default) accepts any text without a slash |\n"
        "| `path` | like `string` but also accepts slashes |",
    )


def test_a_page_that_docutils_reads_with_errors_never_shows_them(tmp_path: Path) -> None:
    document = _page(tmp_path, "Page\n==\n\nA *broken emphasis and `x.\n")

    assert "System Message" not in document.body and "ERROR" not in document.body
    assert document.warnings and all(re.match(r"line \d+: ", w) for w in document.warnings)


_RST_PIECES = st.sampled_from(
    [
        "Title\n=====\n", "Sub\n---\n", "text *em* **strong** ``code``", ":ref:`x`", ":doc:`y`",
        ":unknown:`z`", "`default`", ".. note::\n\n   boxed\n", ".. toctree::\n\n   a\n",
        ".. include:: other.rst\n", ".. include:: ../../etc/passwd\n", "::\n\n   literal\n",
        ".. code-block:: python\n\n   x = 1\n", ".. mystery:: arg\n\n   body\n", "- a\n- b\n",
        "+---+\n| a |\n+---+\n", ":field: value\n", ".. _label:\n", "`broken", "*open",
        "| line\n", "  indented\n", "[1]_\n\n.. [1] note\n", "\\\\", "<!-- x -->", "{#id}",
    ]
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(_RST_PIECES, max_size=12), noise=st.text(max_size=40))
def test_any_page_loads_or_is_refused_and_never_carries_docutils_output(
    pieces: list[str], noise: str
) -> None:
    text = "\n\n".join([*pieces, noise])
    pages = rst_pages_read({"page.rst": text.encode("utf-8", "surrogatepass")}, read_file=None)

    if "page.rst" in pages.failures:
        return  # refused with a message (a bad field, undecodable text): nothing published
    body = pages.documents["page.rst"].body
    assert "\x00" not in body
    assert "System Message" not in body and "Unknown directive" not in body
    assert "mystery" not in body and "passwd" not in body


def test_a_literal_block_python_cannot_parse_without_running_out_of_depth_is_no_python(
    tmp_path: Path,
) -> None:
    # given: blocks that make Python's parser recurse too deep or run out of memory
    page = "Page\n====\n\nOne::\n\n   x" + ".a" * 3_000 + "\n\nTwo::\n\n   " + "-" * 9_000 + "1\n"

    # when
    pages = _read(tmp_path, {"page.rst": page})

    # then: the page is read, its blocks as code without a language
    blocks = split_sections(pages.documents["page.rst"].body)[0].blocks
    assert [block.text[:4] for block in blocks if block.kind == BlockKind.CODE] == ["```\n"] * 2


def test_a_line_longer_than_docutils_default_limit_is_read_not_dropped_with_its_page(
    tmp_path: Path,
) -> None:
    # given: a paragraph written on one line of 12,500 characters (docutils drops the whole page
    # past 10,000 and leaves only an error)
    long_line = "The refund reaches the card within ten days. " * 280

    # when
    document = _page(tmp_path, f"Page\n====\n\nIntro.\n\n{long_line}\n\nAfter.\n")

    # then
    assert "Intro." in document.body and "After." in document.body
    assert document.body.count("The refund reaches the card within ten days.") == 280
    assert document.warnings == ()
