"""Our own staff pages in admin share one frame (`templates/admin/tool_page.html`): the admin's
header and a breadcrumb back to the admin's home, under the page's title."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "title"),
    [
        ("/admin/analytics/", "Help-center analytics"),
        ("/admin/content-gaps/", "Content gaps"),
        ("/admin/attention/", "Policies needing attention"),
        ("/admin/search-lab/", "Search lab"),
    ],
)
def test_each_tool_page_has_the_breadcrumb_home(admin_client: Client, url: str, title: str) -> None:
    response = admin_client.get(url)

    page = response.content.decode()
    assert response.status_code == 200
    assert '<div class="breadcrumbs">' in page
    assert '<a href="/admin/">Home</a> &rsaquo; ' + title in page
