"""The NATS side of the event contract: a subject per event, CloudEvents 1.0 binary headers."""

from typing import Final

from infra.followers.global_log import LogEntry

SPEC_VERSION: Final = "1.0"
TYPE_PREFIX: Final = "io.trainplate."
SOURCE: Final = "/trainplate"
MSG_ID: Final = "Nats-Msg-Id"  # JetStream de-duplicates on it within the stream's window


def subject_for(prefix: str, entry: LogEntry) -> str:
    """`trainplate.<stream_type>.<stream_id>.<fact>`: filterable by kind, aggregate or fact."""
    return f"{prefix}.{entry.stream_type}.{entry.stream_id}.{entry.fact}"


def headers_for(entry: LogEntry) -> dict[str, str]:
    event_id = str(entry.event_id)
    return {
        MSG_ID: event_id,
        "ce-specversion": SPEC_VERSION,
        "ce-id": event_id,
        "ce-type": TYPE_PREFIX + entry.type,
        "ce-source": SOURCE,
        "ce-subject": f"{entry.stream_type}/{entry.stream_id}",
        "ce-time": entry.recorded_at.isoformat(),
        "content-type": "application/json",
        "trainplate-position": str(entry.cursor.position),
        "trainplate-version": str(entry.version),
    }
