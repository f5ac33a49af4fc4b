"""A synced folder that is a Sphinx project publishes what Sphinx would: its sources, not the
theme templates, static files and excluded files beside them."""

from __future__ import annotations

from pathlib import Path

from kb.services.sync.sources import folder_sources

CONF = (
    'templates_path = ["_templates"]\n'
    'html_static_path = ["_static"]\n'
    'exclude_patterns = ["_build", "drafts/**", "*.tmp.rst"]\n'
)


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_sphinx_project_publishes_its_sources_not_its_templates_and_static_files(
    tmp_path: Path,
) -> None:
    # given Scrapy's layout: a theme template, an example page among the static files, test
    # fixtures in HTML, a build folder and drafts its conf.py excludes
    folder = _folder(
        tmp_path,
        {
            "conf.py": CONF,
            "index.rst": "Home\n====\n\nWelcome.\n",
            "guide/setup.rst": "Setup\n=====\n\nInstall it.\n",
            "README.md": "# About these docs\n\nBuilt with Sphinx.\n",
            "_templates/layout.html": "{% extends '!layout.html' %}\n",
            "_static/example.html": "<html><body><p>Example website</p></body></html>\n",
            "_tests/quotes.html": "<html><body><p>Quotes to scrape</p></body></html>\n",
            "_build/html/index.html": "<html><body><p>Home</p></body></html>\n",
            "drafts/next/plan.rst": "Plan\n====\n\nNot yet.\n",
            "notes.tmp.rst": "Scratch\n=======\n",
        },
    )

    # when
    sources = folder_sources(folder)

    # then: the pages Sphinx builds, and the other files named, none of them lost silently
    pages = [path for path, _read in sources.sources]
    assert pages == ["README.md", "guide/setup.rst", "index.rst"]
    assert sources.warnings == [
        "conf.py: 6 file(s) are not pages of this Sphinx project (HTML, which Sphinx builds "
        "rather than reads; its templates_path, html_static_path and exclude_patterns): "
        "_build/html/index.html, _static/example.html, _templates/layout.html, "
        "_tests/quotes.html, drafts/next/plan.rst, notes.tmp.rst"
    ]


def test_a_folder_without_a_sphinx_project_keeps_its_html_pages(tmp_path: Path) -> None:
    # a conf.py beside no reStructuredText page is not a Sphinx project's
    folder = _folder(
        tmp_path,
        {"conf.py": CONF, "faq.html": "<html><body><h1>FAQ</h1></body></html>\n", "a.md": "# A\n"},
    )

    sources = folder_sources(folder)

    assert [path for path, _read in sources.sources] == ["a.md", "faq.html"]
    assert sources.warnings == []
