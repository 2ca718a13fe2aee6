"""Validate bodies against Run:ai's OpenAPI document, the wire contract (a vendored copy, with its
licence, in tests/data/openapi/)."""

import functools
import json
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator, oas30_format_checker

DOCUMENT = Path(__file__).parent / "data" / "openapi" / "runai-openapi.json"


@functools.cache
def _components() -> dict[str, Any]:
    components: dict[str, Any] = json.loads(DOCUMENT.read_text())["components"]
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
