"""Specification of `kb.parsing`: a Markdown file's bytes become a document or a clear error."""

from __future__ import annotations

import datetime
import pickle

import pytest

from kb.parsing import (
    MAX_DOCUMENT_BYTES,
    MAX_METADATA_CHARS,
    DocumentParseError,
    ParsedDocument,
    parse_document,
)


def parse(text: str, *, path: str = "policies/refunds.md") -> ParsedDocument:
    return parse_document(path=path, raw=text.encode())


def parse_error(raw: bytes | str, *, path: str = "policies/refunds.md") -> DocumentParseError:
    data = raw.encode() if isinstance(raw, str) else raw
    with pytest.raises(DocumentParseError) as caught:
        parse_document(path=path, raw=data)
    return caught.value


FULL_FRONT_MATTER = """\
---
title: Refund Policy
category: Billing
audience: internal
status: retired
updated: 2026-01-15
review_by: "2026-07-01"
superseded_by: ./policies/refunds-2026.md
owner: billing-team
---
# Refunds

You can request a refund within 30 days.
"""


# --- front matter ------------------------------------------------------------------------------


def test_front_matter_fields_are_read() -> None:
    document = parse(FULL_FRONT_MATTER)
    assert document == ParsedDocument(
        path="policies/refunds.md",
        title="Refund Policy",
        category="Billing",
        audience="internal",
        status="retired",
        updated_on=datetime.date(2026, 1, 15),
        review_by=datetime.date(2026, 7, 1),
        superseded_by="policies/refunds-2026.md",
        body="# Refunds\n\nYou can request a refund within 30 days.\n",
        # issue 15: a key that is not ours is kept as metadata (and reported), not dropped
        metadata={"owner": "billing-team"},
        unknown_keys=("owner",),
        audience_stated=True,
    )


def test_missing_fields_take_their_defaults() -> None:
    document = parse("---\ntitle: Refunds\n---\nText.\n")
    assert (document.category, document.audience, document.status) == ("", "public", "published")
    assert (document.updated_on, document.review_by, document.superseded_by) == (None, None, None)


def test_body_is_the_text_after_the_closing_line_exactly() -> None:
    assert (
        parse("---\ntitle: Refunds\n---\n\n  Indented start.\n\n").body == "\n  Indented start.\n\n"
    )


def test_front_matter_may_close_with_three_dots() -> None:
    document = parse("---\ntitle: Refunds\n...\nText.")
    assert (document.title, document.body) == ("Refunds", "Text.")


def test_empty_front_matter_takes_every_default() -> None:
    document = parse("---\n---\n# Getting started\n")
    assert (document.title, document.body) == ("Getting started", "# Getting started\n")


# --- front matter that does not parse cleanly is refused, never published with defaults -------


def test_unclosed_front_matter_is_an_error_naming_the_opening_line() -> None:
    # an internal page whose closing line was lost would otherwise be a public page
    error = parse_error("---\naudience: internal\ntitle: Escalations\n\n# Escalations\n\nText.\n")

    assert str(error) == (
        "policies/refunds.md:1: front matter: the '---' on line 1 is never closed "
        "(end the front matter with a '---' line; a page cannot begin with a horizontal rule)"
    )


def test_a_page_cannot_open_with_a_horizontal_rule() -> None:
    assert parse_error("---\n\nA document that opens with a horizontal rule.\n").line == 1


def test_front_matter_after_blank_lines_is_an_error() -> None:
    error = parse_error("\n\n---\naudience: internal\n---\n# Escalations\n")

    assert error.line == 3
    assert "front matter must begin on the first line" in str(error)


def test_a_repeated_key_is_an_error_naming_both_lines() -> None:
    error = parse_error("---\naudience: internal\ntitle: Escalations\naudience: public\n---\n")

    assert str(error) == (
        "policies/refunds.md:4: front matter: 'audience' is given twice (lines 2 and 4)"
    )


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("Audience", "audience"),
        ("audiance", "audience"),
        ("STATUS", "status"),
        ("superseded", "superseded_by"),
        ("superseded-by", "superseded_by"),
    ],
)
def test_a_misspelt_audience_status_or_successor_key_is_an_error(key: str, meant: str) -> None:
    error = parse_error(f"---\ntitle: Escalations\n{key}: internal\n---\n")

    assert error.line == 3
    assert f"unknown key '{key}' (did you mean '{meant}'?)" in str(error)


def test_unknown_front_matter_keys_are_ignored() -> None:
    assert parse("---\ntitle: Refunds\ntags: [billing]\nowner: {team: billing}\n---\n").title == (
        "Refunds"
    )


def test_status_and_audience_are_read_case_insensitively() -> None:
    document = parse("---\nstatus: Draft\naudience: INTERNAL\n---\n")
    assert (document.status, document.audience) == ("draft", "internal")


def test_superseded_by_is_normalised_to_a_document_path() -> None:
    assert parse("---\nsuperseded_by: ' /policies/new.md '\n---\n").superseded_by == (
        "policies/new.md"
    )


def test_blank_superseded_by_means_none() -> None:
    assert parse("---\nsuperseded_by: ''\n---\n").superseded_by is None


def test_datetime_in_updated_is_read_as_its_date() -> None:
    assert parse("---\nupdated: 2026-01-15 09:30:00\n---\n").updated_on == datetime.date(
        2026, 1, 15
    )


# --- titles ------------------------------------------------------------------------------------


def test_file_without_front_matter_takes_its_title_from_the_first_h1() -> None:
    document = parse("Intro line.\n\n## Not this one\n\n# Refund Policy\n\nText.")
    assert document.title == "Refund Policy"
    assert document.body == "Intro line.\n\n## Not this one\n\n# Refund Policy\n\nText."


def test_h1_inside_a_code_fence_is_not_the_title() -> None:
    document = parse("```bash\n# install\n```\n\n# Installing\n", path="guides/setup.md")
    assert document.title == "Installing"


def test_h1_inside_a_comment_is_not_the_title() -> None:
    assert parse("<!--\n# Draft title\n-->\n# Real title\n").title == "Real title"


def test_title_falls_back_to_the_file_name() -> None:
    assert parse("No headings here.", path="guides/getting-started.md").title == "Getting started"


def test_file_name_title_turns_underscores_into_spaces() -> None:
    assert parse("", path="api_keys_and_tokens.markdown").title == "Api keys and tokens"


def test_empty_front_matter_title_falls_back_like_a_missing_one() -> None:
    assert parse("---\ntitle: '  '\n---\n# From the heading\n").title == "From the heading"


def test_front_matter_title_wins_over_the_first_heading() -> None:
    assert parse("---\ntitle: Refund Policy\n---\n# Refunds\n").title == "Refund Policy"


# --- encoding ----------------------------------------------------------------------------------


def test_utf8_byte_order_mark_is_dropped() -> None:
    document = parse_document(path="a.md", raw=b"\xef\xbb\xbf---\ntitle: Caf\xc3\xa9\n---\nText.")
    assert (document.title, document.body) == ("Café", "Text.")


def test_crlf_line_endings_are_normalised() -> None:
    document = parse_document(path="a.md", raw=b"---\r\ntitle: Refunds\r\n---\r\nOne.\r\nTwo.\r\n")
    assert (document.title, document.body) == ("Refunds", "One.\nTwo.\n")


def test_lone_carriage_returns_are_normalised() -> None:
    assert parse_document(path="a.md", raw=b"One.\rTwo.\r").body == "One.\nTwo.\n"


def test_invalid_utf8_is_reported_with_the_byte_and_offset() -> None:
    error = parse_error(b"Line one.\nCaf\xff.\n")
    assert str(error) == ("policies/refunds.md:2: not UTF-8 text (invalid byte 0xff at offset 13)")


def test_file_with_nul_bytes_is_binary() -> None:
    error = parse_error(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert error.message.startswith("binary file")


def test_utf16_file_is_named_as_such() -> None:
    error = parse_error("# Refunds\n".encode("utf-16"))
    assert "UTF-16" in error.message


def test_file_over_the_size_limit_is_rejected_with_its_size() -> None:
    error = parse_error(b"a" * (MAX_DOCUMENT_BYTES + 1))
    assert error.message == "file is too large (1,000,001 bytes; the limit is 1,000,000)"


def test_file_at_the_size_limit_is_accepted() -> None:
    assert (
        parse_document(path="a.md", raw=b"a" * MAX_DOCUMENT_BYTES).body == "a" * MAX_DOCUMENT_BYTES
    )


# --- front matter errors -----------------------------------------------------------------------


def test_malformed_yaml_is_reported_at_its_line_in_the_file() -> None:
    error = parse_error("---\ntitle: Refunds\nstatus: draft: final\n---\nText.")
    assert str(error) == (
        "policies/refunds.md:3: front matter: invalid YAML (mapping values are not allowed here)"
    )


def test_front_matter_that_is_a_list_is_an_error() -> None:
    error = parse_error("---\n- title\n- status\n---\n")
    assert str(error) == (
        "policies/refunds.md:2: front matter must be a mapping of keys to values (got a list)"
    )


def test_invalid_date_names_the_key_the_value_and_the_line() -> None:
    error = parse_error("---\ntitle: Refunds\nupdated: 2026-13-45\n---\n")
    assert str(error) == (
        "policies/refunds.md:3: front matter: 'updated' is not a date (got '2026-13-45')"
    )


def test_review_by_that_is_not_a_date_is_an_error() -> None:
    error = parse_error("---\nreview_by: next spring\n---\n")
    assert error.message == "front matter: 'review_by' is not a date (got 'next spring')"


def test_unknown_status_lists_the_allowed_values() -> None:
    error = parse_error("---\nstatus: archived\n---\n")
    assert error.message == (
        "front matter: 'status' must be one of: draft, published, retired (got 'archived')"
    )


def test_unknown_audience_lists_the_allowed_values() -> None:
    error = parse_error("---\ntitle: Refunds\naudience: everyone\n---\n")
    assert str(error) == (
        "policies/refunds.md:3: front matter: 'audience' must be one of: public, internal "
        "(got 'everyone')"
    )


def test_title_that_is_not_text_is_an_error() -> None:
    error = parse_error("---\ntitle: [Refunds, Policy]\n---\n")
    assert error.message == "front matter: 'title' must be text (got a list)"


def test_superseded_by_outside_the_corpus_is_an_error() -> None:
    error = parse_error("---\nsuperseded_by: ../secrets.md\n---\n")
    assert "'superseded_by'" in error.message and "'..'" in error.message


def test_document_cannot_be_superseded_by_itself() -> None:
    error = parse_error("---\nsuperseded_by: policies/refunds.md\n---\n")
    assert "superseded by itself" in error.message


def test_deeply_nested_front_matter_is_an_error_not_a_crash() -> None:
    error = parse_error("---\nx: " + "[" * 1_000 + "\n---\n")
    assert error.message == "front matter: invalid YAML (nested too deeply)"


def test_python_object_tags_are_refused() -> None:
    error = parse_error("---\ntitle: !!python/object/apply:os.system ['true']\n---\n")
    assert error.line == 2


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd.md", "absolute"),
        ("C:/docs/refunds.md", "absolute"),
        ("policies/../../secrets.md", "'..'"),
        ("policies\\refunds.md", "backslashes"),
        ("policies/refunds\x00.md", "NUL"),
        ("policies/refunds.txt", ".md, .markdown, .mdx, .rst, .html and .htm"),
        ("policies//refunds.md", "empty or '.'"),
        ("", "empty"),
    ],
)
def test_unsafe_or_non_markdown_path_is_rejected(path: str, reason: str) -> None:
    error = parse_error("# Refunds\n", path=path)
    assert error.message.startswith("invalid document path")
    assert reason in error.message


def test_markdown_suffix_is_matched_case_insensitively() -> None:
    assert parse("Text.", path="README.MD").path == "README.MD"


# --- the error itself --------------------------------------------------------------------------


def test_error_without_a_line_reads_path_then_message() -> None:
    error = DocumentParseError(path="a.md", message="binary file")
    assert str(error) == "a.md: binary file"


def test_error_survives_pickling() -> None:
    error = DocumentParseError(path="a.md", message="front matter: bad", line=3)
    restored = pickle.loads(pickle.dumps(error))
    assert (restored.path, restored.message, restored.line, str(restored)) == (
        "a.md",
        "front matter: bad",
        3,
        "a.md:3: front matter: bad",
    )


def test_error_is_a_value_error() -> None:
    assert isinstance(parse_error(b"\xff"), ValueError)


# --- issue 26: near misses, paths, aliases and values the database cannot hold ----------------

INTERNAL_AFTER = "audience: internal\n---\n\n# Escalations\n\nCall the on-call lead.\n"


@pytest.mark.parametrize(
    "opening",
    [" ---", "\t---", "----", "--- yaml", "---\u00a0", "\u200b---", "———", "- - -", " +++"],
)
def test_a_near_miss_of_the_front_matter_fence_is_refused_at_its_line(opening: str) -> None:
    # issue 26 (3): each of these was stored public with `audience: internal` shown as text
    error = parse_error(f"{opening}\n{INTERNAL_AFTER}")

    assert error.line == 1
    assert "looks like the start of front matter" in error.message


def test_a_near_miss_after_blank_lines_is_refused_at_its_line() -> None:
    assert parse_error(f"\n\u00a0\n ---\n{INTERNAL_AFTER}").line == 3


def test_a_near_miss_of_the_closing_fence_is_refused_at_its_line() -> None:
    error = parse_error("---\naudience: internal\n ---\n\n# Escalations\n\nText.\n")

    assert error.line == 3
    assert "looks like the end of front matter" in error.message


def test_a_page_may_still_open_with_text_then_a_rule() -> None:
    document = parse("# Escalations\n\n----\n\nText.\n")
    assert document.audience == "public" and document.title == "Escalations"


def test_whether_the_file_states_its_audience_is_recorded() -> None:
    # issue 26 (2): a re-upload without front matter must not make an internal page public
    assert parse("# X\n\nText.\n").audience_stated is False
    assert parse("---\naudience: public\n---\n# X\n").audience_stated is True


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("rt/new\nline.md", "U+000A"),
        ("rt/esc\x1b[31m.md", "U+001B"),
        ("rt/tab\t.md", "U+0009"),
        ("rt/line\u2028sep.md", "U+2028"),
        ("rt/\u202eevil.md", "U+202E"),
        ("rt/zero\u200bwidth.md", "U+200B"),
    ],
)
def test_a_path_with_a_control_or_invisible_character_is_refused(path: str, named: str) -> None:
    # issue 26 (8): a newline in a path made /docs/ a 500 for every visitor
    error = parse_error("# Refunds\n", path=path)

    assert error.message.startswith("invalid document path")
    assert named in error.message
    assert "\n" not in str(error) and "\x1b" not in str(error)


def test_the_same_path_rule_guards_superseded_by() -> None:
    error = parse_error('---\nsuperseded_by: "policies/new\\nline.md"\n---\n')
    assert "U+000A" in error.message and error.line == 2


BILLION_LAUGHS = "---\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join([f'*{chr(97 + n)}'] * 9)}]\n" for n in range(6)
)


def test_yaml_alias_expansion_past_the_bound_is_refused_quickly() -> None:
    # issue 26 (9): 442 bytes took an import 84 s and gigabytes of memory
    source = BILLION_LAUGHS + "---\n# Laughs\n"
    assert len(source) < 500

    error = parse_error(source)

    # named at the first key whose value alone passes the bound: `d`, 7,381 values
    assert "aliases" in error.message and error.line == 5


def test_a_recursive_yaml_alias_is_refused() -> None:
    assert "refers to itself" in parse_error("---\nx: &a [1, *a]\n---\n").message


def test_a_few_aliases_are_still_read() -> None:
    document = parse("---\nbase: &base {team: billing}\nowner: *base\n---\n# X\n")
    assert document.metadata == {"base": {"team": "billing"}, "owner": {"team": "billing"}}


def test_metadata_past_the_size_limit_is_refused() -> None:
    big = "x" * (MAX_METADATA_CHARS + 1)
    assert "metadata" in parse_error(f"---\nnotes: {big}\n---\n# X\n").message


@pytest.mark.parametrize(
    ("front_matter", "named"),
    [
        ("---\nx: !!binary aGVsbG8=\n---\n", "binary"),
        ("---\nx: !!set {a, b}\n---\n", "a set"),
        ("---\nx: .nan\n---\n", "not a finite number"),
        ("---\nx: [1, .inf]\n---\n", "not a finite number"),
        ('---\ntitle: "a\\0b"\n---\n', "NUL"),
        ('---\nx: {"a\\0": 1}\n---\n', "NUL"),
        ('---\ncategory: "a\\ud800b"\n---\n', "surrogate"),
        ("+++\nx = nan\n+++\n", "not a finite number"),
        ('{"x": NaN}\n', "not a finite number"),
        ("+++\nx = " + "9" * 5_000 + "\n+++\n", "invalid TOML"),
        ('{"x": ' + "9" * 5_000 + "}\n", "invalid JSON"),
    ],
)
def test_a_value_the_database_cannot_store_is_an_error_naming_it(
    front_matter: str, named: str
) -> None:
    # issue 26 (12): these were a TypeError or DataError, a 500 in admin, a crashed kb_sync
    error = parse_error(front_matter + "# X\n", path="a.md")
    assert named in error.message
    assert error.line is not None


def test_a_control_character_in_yaml_front_matter_is_an_error_not_a_crash() -> None:
    # found by tests/integration/test_fuzz_import_sync.py: PyYAML's reader raised outside the try
    error = parse_error("---\ntitle: a\x1fb\n---\n# X\n")
    assert "invalid YAML" in error.message and error.line == 2
