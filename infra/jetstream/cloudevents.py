"""The NATS side of the event contract: a subject per event, CloudEvents 1.0 binary headers, and
the distributed-tracing extension: `ce-traceparent` names the request that appended the event,
`traceparent` the hop that published it (the same when the relay records no span)."""

from typing import Final

import msgspec

from infra.followers.global_log import LogEntry
from infra.telemetry import tracing

SPEC_VERSION: Final = "1.0"
TYPE_PREFIX: Final = "io.trainplate."
SOURCE: Final = "/trainplate"
MSG_ID: Final = "Nats-Msg-Id"  # JetStream de-duplicates on it within the stream's window


class _Department(msgspec.Struct):
    departmentId: str  # noqa: N815 (the payload's own camelCase name)


class _Project(msgspec.Struct):
    projectId: str  # noqa: N815


def subject_for(prefix: str, entry: LogEntry) -> str:
    """`trainplate.<stream_type>.<id>.<fact>`: filterable by kind, aggregate or fact."""
    return f"{prefix}.{entry.stream_type}.{thing_id(entry)}.{entry.fact}"


def thing_id(entry: LogEntry) -> str:
    """The aggregate's id as the API names it: a project's `1`, a template's UUID."""
    if entry.stream_type == "project":
        return msgspec.json.decode(entry.data, type=_Project).projectId
    if entry.stream_type == "department":
        return msgspec.json.decode(entry.data, type=_Department).departmentId
    return str(entry.stream_id)


def headers_for(entry: LogEntry) -> dict[str, str]:
    event_id = str(entry.event_id)
    headers = {
        MSG_ID: event_id,
        "ce-specversion": SPEC_VERSION,
        "ce-id": event_id,
        "ce-type": TYPE_PREFIX + entry.type,
        "ce-source": SOURCE,
        "ce-subject": f"{entry.stream_type}/{thing_id(entry)}",
        "ce-time": entry.recorded_at.isoformat(),
        "content-type": "application/json",
        "trainplate-position": str(entry.cursor.position),
        "trainplate-version": str(entry.version),
    }
    traceparent, tracestate = tracing.of_metadata(entry.metadata)
    if traceparent is not None:
        headers["ce-traceparent"] = headers["traceparent"] = traceparent
        if tracestate is not None:
            headers["ce-tracestate"] = headers["tracestate"] = tracestate
    return headers
