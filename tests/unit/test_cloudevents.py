from datetime import UTC, datetime
from uuid import UUID

import msgspec

from domain.events import DomainEvent, event_tag, stream_type_of
from infra.followers.global_log import Cursor, LogEntry
from infra.jetstream.cloudevents import headers_for, subject_for
from infra.jetstream.outbox_relay import PublishOutcome
from infra.serialization import catalogue

EVENT_ID = UUID("0b4c6f3e-9a55-4d0f-8e8a-3f1f6a7b2c11")
STREAM_ID = UUID("7f1b0c2e-1d2a-4c3b-9e8f-5a6b7c8d9e01")


def entry(position: int = 42, version: int = 3) -> LogEntry:
    return LogEntry(
        cursor=Cursor(1000, position),
        event_id=EVENT_ID,
        stream_type="template",
        stream_id=STREAM_ID,
        version=version,
        type="template.linked_asset_updated.v1",
        data='{"type":"template.linked_asset_updated.v1"}',
        metadata='{"actorSubject":"app-1","actorKind":"application"}',
        recorded_at=datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC),
    )


def test_the_subject_names_kind_aggregate_and_fact() -> None:
    assert (
        subject_for("trainplate", entry())
        == f"trainplate.template.{STREAM_ID}.linked_asset_updated"
    )


def test_headers_are_cloudevents_binary_mode_plus_dedup_and_position() -> None:
    assert headers_for(entry()) == {
        "Nats-Msg-Id": str(EVENT_ID),
        "ce-specversion": "1.0",
        "ce-id": str(EVENT_ID),
        "ce-type": "io.trainplate.template.linked_asset_updated.v1",
        "ce-source": "/trainplate",
        "ce-subject": f"template/{STREAM_ID}",
        "ce-time": "2026-11-29T12:00:00.123456+00:00",
        "content-type": "application/json",
        "trainplate-position": "42",
        "trainplate-version": "3",
    }


def test_the_checkpoint_stops_before_the_first_unacknowledged_event() -> None:
    entries = [entry(position=p) for p in range(1, 6)]
    outcome = PublishOutcome(entries)
    assert outcome.last_safe_cursor is None
    for index in (0, 1, 3, 4):
        outcome.ack(index)
    assert outcome.acked_prefix == 2
    assert outcome.last_safe_cursor == Cursor(1000, 2)
    outcome.ack(2)
    assert outcome.last_safe_cursor == Cursor(1000, 5)


def test_a_project_or_department_is_named_by_the_id_the_api_gives_it() -> None:
    for kind, ids in (
        ("project", '"projectId":"7","departmentId":"2"'),
        ("department", '"departmentId":"2"'),
    ):
        event = msgspec.structs.replace(
            entry(), stream_type=kind, type=f"{kind}.updated.v1", data=f'{{"type":"x",{ids}}}'
        )
        wanted = "7" if kind == "project" else "2"
        assert subject_for("trainplate", event) == f"trainplate.{kind}.{wanted}.updated"
        assert headers_for(event)["ce-subject"] == f"{kind}/{wanted}"


def test_every_project_and_department_event_carries_the_id_its_subject_needs() -> None:
    for event_type in catalogue(DomainEvent):
        kind = stream_type_of(event_tag(event_type))
        if kind in ("project", "department"):
            assert f"{kind}_id" in event_type.__struct_fields__, event_type


def test_a_traced_event_carries_its_trace_as_the_cloudevents_extension() -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    metadata = f'{{"actorSubject":"a","actorKind":"user","traceparent":"{traceparent}"}}'
    headers = headers_for(msgspec.structs.replace(entry(), metadata=metadata))
    assert headers["ce-traceparent"] == headers["traceparent"] == traceparent
    assert "ce-tracestate" not in headers
    assert "traceparent" not in headers_for(entry())
