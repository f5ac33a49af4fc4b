"""A synced folder that is a Jekyll site publishes what Jekyll builds: its pages, posts and
output collections, not its layouts, includes, data or what its configuration excludes."""

from __future__ import annotations

from pathlib import Path

from kb.services.sync.sources import folder_sources


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


PAGE = "---\ntitle: A page\n---\nText.\n"


def test_a_jekyll_site_publishes_its_pages_not_its_layouts_includes_and_data(
    tmp_path: Path,
) -> None:
    # given Jekyll's own docs' layout: a docs collection Jekyll writes, one it does not, posts,
    # HTML includes and layouts, a draft, a partial in a page folder, and files it excludes
    folder = _folder(
        tmp_path,
        {
            "_config.yml": "collections:\n  docs:\n    output: true\n"
            "  recipes:\n    output: false\n"
            "exclude:\n  - readme.md\n  - vendor\ninclude:\n  - _redirects.md\n",
            "index.md": PAGE,
            "readme.md": "# How to build these docs\n",
            "_redirects.md": PAGE,
            "pages/team.md": PAGE,
            "pages/_partial.md": PAGE,
            "_docs/installation.md": PAGE,
            "_docs/configuration/sass.md": PAGE,
            "_recipes/cake.md": PAGE,
            "_posts/2026-01-02-release.md": PAGE,
            "_drafts/next.md": PAGE,
            "_includes/docs_version_badge.html": "<span>{{ include.version }}</span>\n",
            "_layouts/docs.html": "<main>{{ content }}</main>\n",
            "vendor/bundle/gem/README.md": "# A gem\n",
        },
    )

    # when
    sources = folder_sources(folder)

    # then: the pages Jekyll writes, and the other files named, none of them lost silently
    pages = [path for path, _read in sources.sources]
    assert pages == [
        "_docs/configuration/sass.md",
        "_docs/installation.md",
        "_posts/2026-01-02-release.md",
        "_redirects.md",
        "index.md",
        "pages/team.md",
    ]
    assert sources.warnings == [
        "_config.yml: 7 file(s) are not pages of this Jekyll site (layouts, includes and data in "
        "`_` folders, what `exclude` names): _drafts/next.md, "
        "_includes/docs_version_badge.html, _layouts/docs.html, _recipes/cake.md, "
        "pages/_partial.md, readme.md, vendor/bundle/gem/README.md"
    ]


def test_collections_under_a_collections_dir_and_a_config_that_does_not_read(
    tmp_path: Path,
) -> None:
    folder = _folder(
        tmp_path,
        {
            "_config.yml": "collections_dir: my_collections\ncollections:\n  docs:\n"
            "    output: true\n",
            "my_collections/_docs/a.md": PAGE,
            "my_collections/_posts/2026-01-02-b.md": PAGE,
            "my_collections/_other/c.md": PAGE,
        },
    )

    assert [path for path, _read in folder_sources(folder).sources] == [
        "my_collections/_docs/a.md",
        "my_collections/_posts/2026-01-02-b.md",
    ]

    # a configuration that is not YAML is reported, and every file read
    (folder / "_config.yml").write_text("collections: [docs\n")
    sources = folder_sources(folder)
    assert len(sources.sources) == 3
    assert len(sources.warnings) == 1
    assert sources.warnings[0].startswith("_config.yml: not YAML that can be read (")
    assert sources.warnings[0].endswith("): every file is read")


def test_a_jekyll_page_reads_the_values_its_liquid_prints(tmp_path: Path) -> None:
    # given: Jekyll's own docs print the Ruby they need from `_data/ruby.yml`, link issues
    # under `site.repository` and pages through `relative_url`; a page about Liquid shows an
    # expression itself between raw tags
    folder = _folder(
        tmp_path,
        {
            "_config.yml": "repository: https://github.com/acme/tool\nbaseurl: /tool\n"
            "url: https://acme.example\n",
            "_data/ruby.yml": "min_version: 2.7.0\n",
            "_data/plans/pro.json": '{"seats": 25}\n',
            "installation.md": "---\ntitle: Installation\nlayout: docs\n---\n"
            "# {{ page.title }}\n\n"
            "Ruby **{{ site.data.ruby.min_version }}** or higher; Pro has "
            "{{ site.data.plans.pro.seats }} seats ([#42]({{ site.repository }}/issues/42)).\n\n"
            "See [Sass]({{ '/docs/sass/' | relative_url }}) and "
            '[the site]({{ "/" | absolute_url }}). Layout: {{page.layout}}.\n\n'
            "{% raw %}Print it with `{{ site.repository }}`.{% endraw %} "
            "{{ site.time | date: '%Y' }} {{ post.title }}\n",
        },
    )

    # when
    ((_path, read),) = folder_sources(folder).sources

    # then: each value Jekyll prints, and what we cannot print left as written (the markup
    # check reports it)
    assert read().decode() == (
        "---\ntitle: Installation\nlayout: docs\n---\n# Installation\n\n"
        "Ruby **2.7.0** or higher; Pro has 25 seats "
        "([#42](https://github.com/acme/tool/issues/42)).\n\n"
        "See [Sass](/tool/docs/sass/) and [the site](https://acme.example/tool/). "
        "Layout: docs.\n\n"
        "{% raw %}Print it with `{{ site.repository }}`.{% endraw %} "
        "{{ site.time | date: '%Y' }} {{ post.title }}\n"
    )
