"""Obsidian notes as the CommonMark they render as (issue 29), one construct at a time."""

from __future__ import annotations

import json
from pathlib import Path

from kb.chunking.lines import markup_leftovers
from kb.obsidian import MAX_EMBED_DEPTH, Note, Vault
from kb.rendering import document_render

CASES = Path(__file__).resolve().parents[2] / "corpus" / "eval-sets"


def translated(body: str, *others: Note, files: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    vault = Vault(notes=[Note("Guide/Page.md", body), *others], files=files)
    translation = vault.translate("Guide/Page.md")
    return translation.body, translation.warnings


REFUNDS = Note("Billing/Refunds.md", "# Refunds\n\n## Window\n\nWithin 30 days.\n\n## Other\n\nNo.")


def test_a_wiki_link_names_a_note_by_file_name_wherever_it_is() -> None:
    assert translated("See [[Refunds]].", REFUNDS)[0] == "See [Refunds](/Billing/Refunds.md)."


def test_a_wiki_link_with_text_and_a_heading_points_at_the_section() -> None:
    body, _ = translated("See [[Refunds#Window|the window]] and [[Refunds#Window]].", REFUNDS)

    assert body == (
        "See [the window](/Billing/Refunds.md#window) and "
        "[Refunds > Window](/Billing/Refunds.md#window)."
    )


def test_a_link_to_a_heading_of_the_same_note_is_an_anchor() -> None:
    assert translated("Go to [[#Set up]].")[0] == "Go to [Set up](#set-up)."


def test_an_alias_from_front_matter_names_its_note() -> None:
    aliased = Note("Billing/Refunds.md", "Text.", aliases=("Money back",))

    assert translated("[[money back]]", aliased)[0] == "[money back](/Billing/Refunds.md)"


def test_a_name_no_note_has_stays_as_its_text_with_a_warning() -> None:
    body, warnings = translated("See [[Nowhere|the page]].")

    assert body == "See the page."
    assert warnings == ["[[Nowhere|the page]]: no note 'Nowhere' in the folder"]


def test_a_table_writes_the_bar_escaped() -> None:
    body, _ = translated("| a |\n| - |\n| [[Refunds\\|refunds]] |", REFUNDS)

    assert body.endswith("| [refunds](/Billing/Refunds.md) |")


def test_a_section_embed_inlines_that_section_only() -> None:
    body, _ = translated("Before.\n\n![[Refunds#Window]]\n\nAfter.", REFUNDS)

    assert body == "Before.\n\n## Window\n\nWithin 30 days.\n\nAfter."


def test_a_block_embed_inlines_the_paragraph_with_that_id() -> None:
    note = Note("Notes/Facts.md", "Intro.\n\nThe fee is 2%. ^fee\n\nMore.")

    assert translated("![[Facts#^fee]]", note)[0] == "The fee is 2%."


def test_an_embed_in_a_quote_stays_in_the_quote() -> None:
    note = Note("Notes/Tip.md", "Line one.\n\nLine two.")

    assert translated("> ![[Tip]]", note)[0] == "> Line one.\n>\n> Line two."


def test_an_embed_cycle_is_left_as_a_link() -> None:
    a = Note("A.md", "A says ![[B]]")
    b = Note("B.md", "B says ![[A]]")
    vault = Vault(notes=[a, b])

    translation = vault.translate("A.md")

    assert translation.body == "A says B says [A](/A.md)"
    assert translation.warnings == ["![[A]] embeds a note inside itself: left as a link"]


def test_embeds_deeper_than_the_limit_are_links() -> None:
    notes = [Note(f"N{i}.md", f"n{i} ![[N{i + 1}]]") for i in range(MAX_EMBED_DEPTH + 2)]
    notes.append(Note(f"N{MAX_EMBED_DEPTH + 2}.md", "end"))

    body = Vault(notes=notes).translate("N0.md").body

    inlined = " ".join(f"n{i}" for i in range(MAX_EMBED_DEPTH + 1))
    assert body == f"{inlined} [N{MAX_EMBED_DEPTH + 1}](/N{MAX_EMBED_DEPTH + 1}.md)"


def test_an_image_embed_is_an_image_with_its_alt_text() -> None:
    body, _ = translated("![[card.png|A card]] ![[card.png|300]]", files=("images/card.png",))

    assert body == "![A card](/images/card.png) ![card](/images/card.png)"


def test_a_callout_is_a_quote_with_its_title_and_a_foldable_one_too() -> None:
    assert translated("> [!tip]- Before you start\n> Close it.")[0] == (
        "> **Before you start**\n>\n> Close it."
    )
    assert translated("> [!warning]\n> Careful.")[0] == "> **Warning**\n>\n> Careful."


def test_comments_and_block_ids_go_and_tags_stay() -> None:
    body, _ = translated("Keep #billing here. ^abc-1\n%%hidden\nstill hidden%%\nShown %%x%% too.")

    assert body == "Keep #billing here.\nShown  too."  # two spaces read as one on the page


def test_footnotes_read_as_text() -> None:
    assert translated("Fee.[^1]\n\n[^1]: Per month.")[0] == "Fee.\\[1\\]\n\n\\[1\\]: Per month."


def test_code_is_never_translated() -> None:
    body = (
        "```md\n[[Refunds]] ![[x]] %%c%% > [!note]\n```\n\n"
        "> ```\n> [[Refunds]]\n> ```\n`[[Refunds]]`"
    )

    assert translated(body, REFUNDS)[0] == body


def test_a_highlight_is_a_mark_on_the_page_and_words_in_the_chunk() -> None:
    html = document_render(body="Paid within ==30 days==.\n").html

    assert "<mark>30 days</mark>" in html
    assert markup_leftovers("Paid within ==30 days==.") != []


def test_the_translation_of_a_vault_leaves_no_markup() -> None:
    body, _ = translated(
        "> [!note] Hi\n> See [[Refunds]] ^x\n\n![[Refunds#Window]] %%c%%\n", REFUNDS
    )

    assert markup_leftovers(body) == []


def test_the_hand_written_questions_name_their_pinned_source() -> None:
    sources = json.loads((CASES / "sources.json").read_text())
    lines = (CASES / "obsidian-tasks-questions.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in lines]

    assert sources["obsidian-tasks"]["commit"] == "cc0fce3c1326d18e2bdb7020eaf4c52e885da569"
    assert 15 <= len(cases) <= 20 and len({case["id"] for case in cases}) == len(cases)
    assert all(case["relevant"] and case["relevant"][0].endswith(".md") for case in cases)


def test_a_path_with_spaces_is_an_encoded_link_that_the_page_resolves() -> None:
    note = Note("Getting Started/Create or edit Task.md", "Text.")
    body, _ = translated("Use [[Create or edit Task|the modal]].", note)

    html = document_render(body=body, path="Guide/Page.md").html

    assert body == "Use [the modal](/Getting%20Started/Create%20or%20edit%20Task.md)."
    assert markup_leftovers(body) == []
    assert 'href="/docs/Getting%20Started/Create%20or%20edit%20Task.md"' in html
