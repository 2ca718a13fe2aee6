"""The event contract for subscribers, generated from the msgspec event types (never written by
hand): an AsyncAPI 3.0 document of the `TRAINPLATE` stream, one channel per event type with its
subject, the CloudEvents binary-mode headers, and one JSON Schema per payload.
"""

from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from domain.events import DomainEvent, Event, event_tag, stream_type_of
from infra.jetstream.cloudevents import MSG_ID, SOURCE, SPEC_VERSION, TYPE_PREFIX
from infra.serialization import catalogue
from infra.settings import NatsSettings

VERSION: Final = "1.0.0"  # of the document's shape; each event carries its own version tag
REF: Final = "#/components/schemas/{name}"
TRACEPARENT: Final = "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"


def event_types() -> tuple[type[Event], ...]:
    return catalogue(DomainEvent)


def payload_schema(event_type: type[Event]) -> dict[str, Any]:
    """One event type's payload as a standalone JSON Schema (2020-12)."""
    schema: dict[str, Any] = msgspec.json.schema(event_type)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _headers() -> dict[str, Any]:
    def text(description: str, **more: Any) -> dict[str, Any]:
        return {"type": "string", "description": description, **more}

    properties = {
        "ce-specversion": text("CloudEvents version", const=SPEC_VERSION),
        "ce-id": text("the event id (a UUID), unique in the whole store", format="uuid"),
        "ce-type": text(f"{TYPE_PREFIX}<stream>.<fact>.v<N>: the event type and its version"),
        "ce-source": text("where the event comes from", const=SOURCE),
        "ce-subject": text("<stream type>/<id>: the aggregate, named by its id in the API"),
        "ce-time": text("when the event was recorded", format="date-time"),
        "content-type": text("the body's media type", const="application/json"),
        MSG_ID: text("the event id again: JetStream de-duplicates on it", format="uuid"),
        "trainplate-position": text("the event's global position in the store"),
        "trainplate-version": text("the event's version within its stream (1, 2, ...)"),
    }
    required = sorted(properties)
    traced = {
        "ce-traceparent": text(
            "CloudEvents distributed tracing: the W3C trace context of the request that appended"
            " the event (absent when it was appended outside any trace)",
            pattern=TRACEPARENT,
        ),
        "ce-tracestate": text("the W3C tracestate that goes with ce-traceparent, if any"),
        "traceparent": text(
            "W3C trace context of this hop (the relay's publish), to continue; the same as"
            " ce-traceparent when the relay records no span",
            pattern=TRACEPARENT,
        ),
        "tracestate": text("the W3C tracestate that goes with traceparent, if any"),
    }
    return {"type": "object", "required": required, "properties": properties | traced}


def asyncapi(nats: NatsSettings | None = None) -> dict[str, Any]:
    nats = nats or NatsSettings()
    types = event_types()
    _, schemas = msgspec.json.schema_components(types, ref_template=REF)
    schemas["CloudEventsHeaders"] = _headers()
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for event_type in sorted(types, key=event_tag):
        tag = event_tag(event_type)
        stream_type, fact, _ = tag.split(".")
        key = tag.replace(".", "_")
        messages[key] = {
            "name": tag,
            "title": event_type.__name__,
            "summary": (event_type.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "),
            "contentType": "application/json",
            "headers": {"$ref": REF.format(name="CloudEventsHeaders")},
            "payload": {"$ref": REF.format(name=event_type.__name__)},
        }
        channels[key] = {
            "address": f"{nats.subject_prefix}.{stream_type}.{{streamId}}.{fact}",
            "title": f"{stream_type_of(tag)} {fact}",
            "parameters": {"streamId": {"description": _id_of(stream_type)}},
            "messages": {key: {"$ref": f"#/components/messages/{key}"}},
        }
        operations[f"receive_{key}"] = {
            "action": "receive",
            "channel": {"$ref": f"#/channels/{key}"},
            "messages": [{"$ref": f"#/channels/{key}/messages/{key}"}],
        }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "trainplate events",
            "version": VERSION,
            "description": (
                f"Every change to templates, assets, org units, access and workloads, published "
                f"on the JetStream stream {nats.stream} (subjects `{nats.subject_prefix}.>`) in "
                "commit order per stream, in CloudEvents 1.0 binary mode: the headers carry the "
                "envelope, the body is the event's camelCase JSON. Subscribe to a subject "
                "pattern to filter by kind (`trainplate.template.>`), by one aggregate "
                "(`trainplate.template.<id>.>`) or by fact (`trainplate.*.*.deleted`)."
            ),
        },
        "defaultContentType": "application/json",
        "servers": {"jetstream": _server(nats)},
        "channels": channels,
        "operations": operations,
        "components": {
            "messages": messages,
            "schemas": schemas,
            "securitySchemes": {"natsUser": _NATS_USER},
        },
    }


_NATS_USER: Final = {
    "type": "userPassword",
    "description": (
        "The broker's user and password, as the operator configured NATS. `trainplate dev` "
        "writes them in the NATS URL of `<data dir>/endpoints.json` (`trainplate endpoints`)."
    ),
}


def _server(nats: NatsSettings) -> dict[str, Any]:
    server: dict[str, Any] = {
        "host": _host(nats.url),
        "protocol": "nats",
        "description": f"NATS JetStream, stream {nats.stream}",
    }
    if urlsplit(nats.url).username:  # the service itself signs in: so must subscribers
        server["security"] = [{"$ref": "#/components/securitySchemes/natsUser"}]
    return server


def _id_of(stream_type: str) -> str:
    if stream_type in ("department", "project"):
        return f"the {stream_type}'s id, as the API names it (`1`)"
    if stream_type == "user":
        return "the user's stream id (a UUID); the payload names the user"
    return f"the {stream_type}'s id (a UUID), as the API names it"


def _host(url: str) -> str:
    """Where subscribers connect, without the service's own credentials."""
    parts = urlsplit(url)
    return parts.netloc.rsplit("@", 1)[-1]
