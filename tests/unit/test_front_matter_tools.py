"""Specification of front matter as the static-site tools write it (issue 15).

Each fixture is written here in the syntax of one tool (Hugo YAML/TOML/JSON, Jekyll, MkDocs,
Docusaurus): what the tool accepts loads, its keys map to ours, and what cannot be read at all is
still an error naming the file and the line.
"""

from __future__ import annotations

import datetime

import pytest

from kb.parsing import DocumentParseError, ParsedDocument, parse_document, parse_warnings
from kb.services.sync.report import SyncReport
from kb.services.sync.sources import sources_parse


def parse(text: str, *, path: str = "guides/install.md") -> ParsedDocument:
    return parse_document(path=path, raw=text.encode())


def parse_error(text: str, *, path: str = "guides/install.md") -> DocumentParseError:
    with pytest.raises(DocumentParseError) as caught:
        parse_document(path=path, raw=text.encode())
    return caught.value


# --- Hugo: TOML, JSON and tab-indented YAML -----------------------------------------------------

HUGO_TOML = """\
+++
title = "Installing the agent"
description = "Put the agent on a server"
date = 2025-03-02T10:00:00+01:00
lastmod = 2025-06-30
draft = true
weight = 20
aliases = ["/old/install/"]

[params]
icon = "download"
+++
# Installing

Download the package.
"""


def test_hugo_toml_front_matter_maps_to_our_fields() -> None:
    document = parse(HUGO_TOML)

    assert (document.title, document.description, document.status) == (
        "Installing the agent",
        "Put the agent on a server",
        "draft",
    )
    assert document.updated_on == datetime.date(2025, 6, 30)  # lastmod wins over date
    assert document.body == "# Installing\n\nDownload the package.\n"


def test_hugo_toml_keys_are_kept_as_metadata_and_only_unknown_ones_listed() -> None:
    document = parse(HUGO_TOML)

    assert document.metadata == {
        "weight": 20,
        "aliases": ["/old/install/"],
        "params": {"icon": "download"},
    }
    assert document.unknown_keys == ()  # Hugo's params are what its `param` shortcode prints


def test_invalid_toml_names_the_line_in_the_file() -> None:
    error = parse_error('+++\ntitle = "Install"\nweight = = 3\n+++\nText.\n')

    assert error.line == 3
    assert error.message.startswith("front matter: invalid TOML")


def test_unclosed_toml_front_matter_is_an_error() -> None:
    assert parse_error('+++\ntitle = "Install"\n\n# Install\n').line == 1


def test_a_misspelt_audience_in_toml_is_refused_at_its_line() -> None:
    error = parse_error('+++\ntitle = "Escalations"\naudiance = "internal"\n+++\n')

    assert error.line == 3
    assert "did you mean 'audience'?" in error.message


HUGO_JSON = """\
{
  "title": "Rate limits",
  "date": "2024-11-05",
  "tags": ["api", "limits"],
  "toc": true
}
The API allows 100 requests a minute.
"""


def test_hugo_json_front_matter_is_read() -> None:
    document = parse(HUGO_JSON)

    assert (document.title, document.updated_on) == ("Rate limits", datetime.date(2024, 11, 5))
    assert document.metadata == {"tags": ["api", "limits"], "toc": True}
    assert document.unknown_keys == ("toc",)
    assert document.body == "The API allows 100 requests a minute.\n"


def test_invalid_json_front_matter_names_its_line() -> None:
    error = parse_error('{\n  "title": "Rate limits",\n  "draft": tru\n}\nText.\n')

    assert (error.line, error.message) == (3, "front matter: invalid JSON (Expecting value)")


def test_a_repeated_json_key_is_an_error() -> None:
    assert (
        "'audience' is given twice"
        in parse_error('{"audience": "internal", "audience": "public"}\nText.\n').message
    )


def test_a_page_opening_with_a_shortcode_is_not_json() -> None:
    document = parse("{{< hint info >}}\nRead this first.\n{{< /hint >}}\n")

    assert document.metadata == {} and document.body.startswith("{{< hint")


HUGO_TABS = (
    "---\n"
    "title: Proxy settings\n"
    "menu:\n"
    "\tdocs:\n"
    "\t\tparent: admin\n"
    "\t\tweight: 3\n"
    "tags:\n"
    "\t- network\n"
    "---\n"
    "Text.\n"
)


def test_tab_indented_yaml_that_hugo_accepts_is_read() -> None:
    document = parse(HUGO_TABS)

    assert document.title == "Proxy settings"
    assert document.metadata == {
        "menu": {"docs": {"parent": "admin", "weight": 3}},
        "tags": ["network"],
    }


def test_a_tab_after_the_colon_is_accepted() -> None:
    assert parse("---\ntitle:\tProxy settings\n---\n").title == "Proxy settings"


def test_yaml_that_is_broken_beyond_tabs_is_still_an_error_at_its_line() -> None:
    error = parse_error("---\ntitle: Proxy\nmenu:\n\tdocs: [admin\n---\n")

    assert error.line is not None and error.line >= 4
    assert error.message.startswith("front matter: invalid YAML")


# --- Jekyll, MkDocs, Docusaurus YAML ------------------------------------------------------------


def test_jekyll_date_with_a_space_before_the_offset_is_a_date() -> None:
    document = parse("---\nlayout: page\ndate: 2023-08-14 09:12:00 +0200\n---\n")

    assert document.updated_on == datetime.date(2023, 8, 14)
    assert document.unknown_keys == ("layout",)


def test_docusaurus_last_update_mapping_gives_the_updated_date() -> None:
    document = parse(
        "---\nsidebar_position: 2\nlast_update:\n  date: 2025-01-09\n  author: Ana\n---\n"
    )

    assert document.updated_on == datetime.date(2025, 1, 9)
    assert document.metadata == {"sidebar_position": 2}
    assert document.unknown_keys == ()


def test_a_docusaurus_mdx_page_is_a_document() -> None:
    document = parse(
        "---\nsidebar_label: Thunks\n---\nimport Tabs from '@theme/Tabs';\n\nWrite a thunk.\n",
        path="usage/writing-thunks.mdx",
    )

    assert (document.path, document.title) == ("usage/writing-thunks.mdx", "Writing thunks")


def test_our_updated_key_wins_over_the_tools_dates() -> None:
    document = parse("---\nupdated: 2026-02-01\ndate: 2020-01-01\nlastmod: 2021-01-01\n---\n")

    assert document.updated_on == datetime.date(2026, 2, 1)


def test_mkdocs_description_and_tags_are_read() -> None:
    document = parse("---\ndescription: How to pay\ntags:\n  - billing\n---\n# Paying\n")

    assert (document.title, document.description) == ("Paying", "How to pay")
    assert document.metadata == {"tags": ["billing"]}


def test_draft_false_keeps_the_page_published() -> None:
    assert parse("---\ndraft: false\n---\n").status == "published"


def test_draft_true_with_another_status_is_a_contradiction() -> None:
    error = parse_error("---\ndraft: true\nstatus: published\n---\n")

    assert (error.line, error.message) == (
        2,
        "front matter: 'draft: true' contradicts 'status: published' (remove one)",
    )


def test_draft_that_is_not_true_or_false_is_an_error() -> None:
    assert parse_error("---\ndraft: maybe\n---\n").message == (
        "front matter: 'draft' must be true or false (got 'maybe')"
    )


def test_a_tool_date_that_is_not_a_date_is_an_error_naming_its_key() -> None:
    error = parse_error("---\ntitle: X\nlastmod: soon\n---\n")

    assert (error.line, error.message) == (3, "front matter: 'lastmod' is not a date (got 'soon')")


def test_near_misses_of_our_guarded_keys_are_still_refused_beside_kept_unknown_keys() -> None:
    error = parse_error("---\nlayout: docs\nStatus: draft\n---\n")

    assert "unknown key 'Status' (did you mean 'status'?)" in error.message


# --- one report per sync ------------------------------------------------------------------------


def test_unknown_keys_are_listed_once_for_the_whole_sync() -> None:
    documents = [
        parse("---\nlayout: page\ntoc: true\n---\n", path="a.md"),
        parse("---\nlayout: page\n---\n", path="b.md"),
        parse("---\ntags: [x]\n---\n", path="c.md"),
    ]

    assert parse_warnings(documents) == [
        "front matter keys kept as metadata, not used: layout (2 files), toc (1 file)"
    ]


def test_markup_warnings_are_listed_per_file() -> None:
    documents = [parse('Intro.\n\n{{% include "shared/note.md" %}}\n', path="a.md")]

    assert parse_warnings(documents) == [
        'a.md: line 3: {{% include "shared/note.md" %}} not resolved (its text is not included)'
    ]


def test_one_unreadable_file_never_stops_the_other_files_of_a_sync() -> None:
    # given a Hugo folder where one page's front matter cannot be read at all

    files = {
        "a.md": b'+++\ntitle = "A"\nlayout = "x"\n+++\nText.\n',
        "b.md": b"---\ntitle: [B\n---\n",
        "c.md": b"---\ntitle: C\nlayout: y\nmenu:\n\tmain: 1\n---\n",
    }
    report = SyncReport()

    # when it is parsed
    _present, parsed, _files = sources_parse(
        [(path, lambda raw=raw: raw) for path, raw in files.items()], origin="x", report=report
    )

    # then the other two load, the bad one is named, and the unknown key is listed once
    assert [document.path for document in parsed] == ["a.md", "c.md"]
    assert [failure.path for failure in report.failed] == ["b.md"]
    assert report.failed[0].message.startswith("b.md:2: front matter: invalid YAML")
    assert report.warnings == [
        "front matter keys kept as metadata, not used: layout (2 files), menu (1 file)"
    ]


def test_a_markup_warning_names_the_line_of_the_file_not_of_the_body() -> None:
    document = parse('+++\ntitle = "X"\n+++\n\n{{% include "a.md" %}}\n')

    assert document.warnings == (
        'line 5: {{% include "a.md" %}} not resolved (its text is not included)',
    )


def test_mkdocs_material_status_badges_label_a_published_page() -> None:
    document = parse("---\nstatus: deprecated\n---\n")

    assert (document.status, document.metadata) == ("published", {"status": "deprecated"})


@pytest.mark.parametrize("label", ["alpha", "beta", "Beta", "stable", "experimental", "preview"])
def test_a_maturity_label_in_status_is_a_badge_on_a_published_page(label: str) -> None:
    # as documentation sites mark a feature's stage (status: beta on a guide); a draft stays one
    document = parse(f"---\nstatus: {label}\n---\n")
    draft = parse(f"---\nstatus: {label}\ndraft: true\n---\n")

    assert (document.status, document.metadata) == ("published", {"status": label})
    assert draft.status == "draft"


def test_a_status_that_is_neither_ours_nor_a_badge_is_still_refused() -> None:
    assert "'status' must be one of" in parse_error("---\nstatus: retierd\n---\n").message


def test_mkdocs_material_blog_date_mapping_gives_the_updated_date() -> None:
    document = parse("---\ndate:\n  created: 2026-02-18\n  updated: 2026-04-13\n---\n")

    assert document.updated_on == datetime.date(2026, 4, 13)


# --- Earlier addresses: Hugo `aliases`, Jekyll `redirect_from` ----------------------------------


def test_hugo_aliases_become_docs_paths_absolute_and_relative_to_the_page() -> None:
    document = parse(
        '+++\ntitle = "Install"\naliases = ["/old/install/", "setup", "/docs/get-started"]\n'
        "+++\nText.\n"
    )

    # "/old/install/" is a server path; "setup" sits beside the page, as Hugo resolves it
    assert document.aliases == ("old/install", "guides/setup", "get-started")
    assert document.metadata["aliases"] == ["/old/install/", "setup", "/docs/get-started"]


def test_jekyll_redirect_from_as_one_string_is_an_alias() -> None:
    document = parse("---\ntitle: Install\nredirect_from: /2019/05/install.html\n---\nText.\n")

    assert document.aliases == ("2019/05/install.html",)
    assert document.unknown_keys == ()


def test_an_alias_that_is_not_a_path_is_left_out_with_a_warning() -> None:
    document = parse(
        "---\ntitle: Install\naliases:\n  - https://example.com/install\n  - 7\n  - /ok/\n---\n"
    )

    assert document.aliases == ("ok",)
    assert len(document.warnings) == 2
    assert all("is not a path, ignored" in warning for warning in document.warnings)


def test_an_alias_of_the_docs_index_itself_is_left_out_saying_so() -> None:
    # hugoDocs' about/_index.md lists `/docs/`: here that is the index of every page, not one
    document = parse("---\ntitle: About\naliases: [/about-us/, /docs/]\n---\n")

    assert document.aliases == ("about-us",)
    assert document.warnings == (
        "front matter: 'aliases' entry '/docs/' is the /docs/ index itself, ignored",
    )


def test_docusaurus_and_mkdocs_keys_are_kept_as_written() -> None:
    document = parse(
        "---\nslug: /install-guide\nsidebar_position: 3\ntags: [setup, agent]\n"
        "hide_table_of_contents: true\n---\n# Install\n"
    )

    assert document.metadata == {
        "slug": "/install-guide",
        "sidebar_position": 3,
        "tags": ["setup", "agent"],
        "hide_table_of_contents": True,
    }
    assert document.unknown_keys == ("hide_table_of_contents",)
    assert document.aliases == ()
