"""Hugo's `param` shortcode filled in from front matter and section cascades (`kb.hugo`)."""

from __future__ import annotations

from kb.hugo import params_filled
from kb.parsing import ParsedDocument, parse_document


def _pages(files: dict[str, str]) -> dict[str, ParsedDocument]:
    documents = [parse_document(path=path, raw=text.encode()) for path, text in files.items()]
    return {document.path: document for document in params_filled(documents)}


VERSION_SECTION = "---\ntitle: v3.6 docs\ncascade:\n  git_version_tag: v3.6.0\n  arch: amd64\n---\n"


def test_a_param_is_filled_from_the_nearest_cascade_and_the_pages_own_front_matter() -> None:
    # given: a versioned docs site, as etcd's is: each version's section cascades its tag
    pages = _pages(
        {
            "docs/_index.md": "---\ntitle: Docs\ncascade:\n  git_version_tag: v9.9.9\n---\n",
            "docs/v3.6/_index.md": VERSION_SECTION,
            "docs/v3.6/install.md": (
                "---\ntitle: Install\nparams:\n  Arch: arm64\n---\n"
                "Run the latest version ({{< param git_version_tag >}}).\n\n"
                '```sh\nETCD_VERSION={{< param "git_version_tag" >}} '
                "ARCH={{% param arch %}}\n```\n"
            ),
        }
    )

    install = pages["docs/v3.6/install.md"]
    # then: the nearest section's value, the page's own over any cascade (letter case ignored),
    # in a code block too, as Hugo renders it
    assert install.body == (
        "Run the latest version (v3.6.0).\n\n```sh\nETCD_VERSION=v3.6.0 ARCH=arm64\n```\n"
    )
    assert install.warnings == ()


def test_a_sections_cascade_is_for_the_pages_below_it_and_a_nested_name_reads_into_maps() -> None:
    pages = _pages(
        {
            "_index.md": "---\ntitle: Home\ncascade:\n  params:\n    support:\n      hours: 9-17\n"
            "---\nSupport {{< param support.hours >}}; {{< param color >}}.\n",
            "guide/_index.md": "---\ntitle: Guide\ncascade:\n  color: red\n---\n"
            "This section is {{< param color >}}.\n",
            "guide/a.md": "Open {{< param support.hours >}}, {{< param color >}}.\n",
        }
    )

    assert pages["guide/a.md"].body == "Open 9-17, red.\n"
    # a section's own page is not below itself: its cascade is not its own value
    assert pages["guide/_index.md"].body == "This section is {{< param color >}}.\n"
    assert pages["_index.md"].body == "Support {{< param support.hours >}}; {{< param color >}}.\n"


def test_a_name_found_nowhere_is_reported_and_left_as_written() -> None:
    # given: a site parameter (it lives in hugo.toml, outside the folder), a cascade limited to
    # some pages, and an escaped shortcode (a page showing the shortcode itself)
    pages = _pages(
        {
            "_index.md": "---\ntitle: Home\ncascade:\n  - target:\n      path: /blog/**\n"
            "    color: blue\n---\n",
            "a.md": 'Hugo {{% param "minVersion" %}} or later in {{< param color >}}; '
            'write {{</* param "color" */>}}.\n',
        }
    )

    page = pages["a.md"]
    assert page.body == (
        'Hugo {{% param "minVersion" %}} or later in {{< param color >}}; '
        'write {{</* param "color" */>}}.\n'
    )
    assert page.warnings == tuple(
        f"{{{{< param {name} >}}}}: no parameter of that name in the page's front matter or a "
        "cascade above it (the site's own parameters are in its configuration, outside the "
        "folder): left out"
        for name in ("minVersion", "color")
    )
