"""The event contract over HTTP (our extension, no token needed: it holds no data): the AsyncAPI
document and each event type's JSON Schema, generated from the event types."""

from typing import Any, Final

from litestar import get
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

from domain.events import event_tag
from infra.http.adapters import Adapters
from infra.jetstream.asyncapi import asyncapi, event_types, payload_schema
from infra.jetstream.cloudevents import TYPE_PREFIX

BASE: Final = "/api/v1/events"


@get(f"{BASE}/asyncapi.json", exclude_from_auth=True, tags=["Event contract"])
async def asyncapi_document(
    adapters: NamedDependency[Adapters],
) -> dict[str, Any]:
    return asyncapi(adapters.settings.nats)


@get(f"{BASE}/schemas/{{event_type:str}}", exclude_from_auth=True, tags=["Event contract"])
async def event_schema(event_type: FromPath[str]) -> dict[str, Any]:
    """`template.created.v1`, or `io.trainplate.template.created.v1` as `ce-type` says it, -> the
    JSON Schema of its payload."""
    event_type = event_type.removeprefix(TYPE_PREFIX)
    for candidate in event_types():
        if event_tag(candidate) == event_type:
            return payload_schema(candidate)
    raise NotFoundException(f"no event type {event_type}")


CONTRACT_ROUTES: Final = (asyncapi_document, event_schema)
