"""The OpenAPI document is generated from the code, valid, complete, and its page is local."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db

ENDPOINTS = {
    ("/api/v1/ask", "post"),
    ("/api/v1/ask/stream", "post"),
    ("/api/v1/search", "get"),
    ("/api/v1/answers/{message_id}/feedback", "post"),
    ("/api/v1/conversations", "post"),
    ("/api/v1/conversations/{conversation_id}", "get"),
}


def test_the_schema_is_valid_openapi_and_names_every_endpoint() -> None:
    response = Client().get("/api/v1/openapi.json")

    assert response.status_code == 200
    schema = response.json()
    validate(schema)  # raises with the first violation
    served = {(path, method) for path, item in schema["paths"].items() for method in item}
    assert served == ENDPOINTS


def test_every_endpoint_documents_bearer_auth_and_its_errors() -> None:
    schema = Client().get("/api/v1/openapi.json").json()

    assert schema["components"]["securitySchemes"]["ApiKeyAuth"]["scheme"] == "bearer"
    for path, method in ENDPOINTS:
        operation = schema["paths"][path][method]
        assert operation["security"] == [{"ApiKeyAuth": []}], path
        assert {"401", "429"} <= set(operation["responses"]), path


def test_the_schema_page_loads_its_scripts_from_this_site() -> None:
    response = Client().get("/api/v1/docs")

    html = response.content.decode()
    assert response.status_code == 200
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert scripts and all(src.startswith("/static/") for src in scripts)
    assert "https://" not in html
