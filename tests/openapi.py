"""Validate bodies against Run:ai's OpenAPI document, the wire contract (a vendored copy, with its
licence, in tests/data/openapi/)."""

import functools
import json
import re
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator, oas30_format_checker

DOCUMENT = Path(__file__).parent / "data" / "openapi" / "runai-openapi.json"


@functools.cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DOCUMENT.read_text())
    # The document is at odds with itself on one enum: its DistributedFramework has JAX, its
    # WorkloadSupportedTypes.distFramework (an environment's) leaves it out. The guide's
    # frameworks include JAX, so the environment's enum is read as the framework's.
    schemas = document["components"]["schemas"]
    frameworks = schemas["DistributedFramework"]["enum"]
    schemas["WorkloadSupportedTypes"]["properties"]["distFramework"]["enum"] = frameworks
    # Its audit log's answer requires `logs` but describes only `audit_logs`, which Run:ai's
    # client reads: read as requiring the member it describes.
    log = document["paths"]["/api/v1/audit/log"]["get"]["responses"]["200"]
    log["content"]["application/json"]["schema"]["required"] = ["audit_logs"]
    return document


@functools.cache
def _components() -> dict[str, Any]:
    components: dict[str, Any] = _document()["components"]
    return components


@functools.cache
def _validator(schema_name: str) -> OAS30Validator:
    # The references are document-relative ("#/components/schemas/..."), so the schema carries the
    # components beside its own $ref.
    schema = {"components": _components(), "$ref": f"#/components/schemas/{schema_name}"}
    return OAS30Validator(schema, format_checker=oas30_format_checker)


def assert_matches(schema_name: str, body: object) -> None:
    """Fail with every violation listed when `body` does not match the named schema."""
    errors = sorted(_validator(schema_name).iter_errors(body), key=lambda e: list(e.path))
    assert not errors, "\n".join(
        f"{schema_name} at /{'/'.join(map(str, e.path))}: {e.message}" for e in errors
    )


@functools.cache
def _operations() -> list[tuple[re.Pattern[str], int, str, dict[str, Any]]]:
    """Each path template of the document as a pattern, the templates with more literal
    segments first (`/workloads/count` before `/workloads/{id}`)."""
    found = []
    for template, item in _document()["paths"].items():
        parts = template.strip("/").split("/")
        literal = sum(not p.startswith("{") for p in parts)
        pattern = "/".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
        found.append((re.compile(f"/{pattern}"), literal, template, item))
    return sorted(found, key=lambda entry: -entry[1])


def _resolved(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        kind, name = node["$ref"].split("/")[-2:]
        node = _document()["components"][kind][name]
    return node


def response_schema(method: str, path: str, status: int) -> dict[str, Any] | None:
    """The JSON schema Run:ai's document gives this answer, or None where it gives none (a path
    of ours alone, a status it does not list, a body that is not JSON)."""
    for pattern, _, _, item in _operations():
        if pattern.fullmatch(path) and method.lower() in item:
            responses = item[method.lower()].get("responses", {})
            answer = responses.get(str(status))
            if answer is None:
                return None
            content = _resolved(answer).get("content", {}).get("application/json")
            return None if content is None or "schema" not in content else content["schema"]
    return None


def assert_answer_matches(method: str, path: str, status: int, body: object) -> None:
    """Fail when Run:ai's document gives this answer a JSON schema and `body` breaks it."""
    schema = response_schema(method, path, status)
    if schema is None:
        return
    validator = OAS30Validator(
        {"components": _components(), **schema}, format_checker=oas30_format_checker
    )
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    assert not errors, "\n".join(
        f"{method} {path} {status} at /{'/'.join(map(str, e.path))}: {e.message}" for e in errors
    )
