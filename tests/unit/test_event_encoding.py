"""The one encoder of every append (infra/postgres/encoding.py): what it refuses, and that a
batch's digests are each event's own."""

from uuid import uuid4

import pytest

from domain.events import Event, EventMetadata
from infra.postgres.encoding import StreamBatch, encode, random_ids
from infra.postgres.hashchain import content_digest
from infra.serialization import EventCodec
from tests.sample_events import CounterIncremented, CounterLabelled, CounterOpened


class GaugeOpened(Event, tag="gauge.opened.v1", frozen=True, kw_only=True):
    name: str


CODEC = EventCodec([CounterOpened, CounterIncremented, CounterLabelled, GaugeOpened])
ACTOR = EventMetadata(actor_subject="app-1", actor_kind="application")


def test_a_batch_of_several_tags_of_one_stream_type_is_encoded_with_each_events_digest() -> None:
    stream = uuid4()
    events: list[Event] = [
        CounterOpened(name="c"),
        CounterIncremented(by=2),
        CounterLabelled(labels={"team": "x"}),
    ]
    batch = StreamBatch.of(CODEC, stream, events, ACTOR, None)
    assert batch.stream_type == "counter"
    assert batch.caller == "app-1"
    for event_id, encoded, digest in zip(batch.uuids(), batch.encoded, batch.digests, strict=True):
        assert digest == content_digest(
            event_id=event_id,
            stream_type="counter",
            stream_id=stream,
            type=encoded.type,
            schema_version=encoded.schema_version,
            data=encoded.data,
            metadata=batch.metadata,
        )
    assert [e.schema_version for e in batch.encoded] == [1, 1, 2]


@pytest.mark.parametrize("first", [True, False])
def test_events_of_two_stream_types_are_refused_as_one_append(first: bool) -> None:
    events: list[Event] = [CounterOpened(name="c"), GaugeOpened(name="g")]
    with pytest.raises(ValueError, match="one stream type"):
        StreamBatch.of(CODEC, uuid4(), events if first else events[::-1], ACTOR, None)


def test_nothing_to_encode_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one event"):
        encode(CODEC, [], ACTOR, b"", [])


def test_each_event_needs_its_own_id_and_stream() -> None:
    events = [CounterOpened(name="c"), CounterIncremented(by=1)]
    with pytest.raises(ValueError, match="one id and one stream per event"):
        encode(CODEC, events, ACTOR, random_ids(1), [uuid4().bytes] * 2)
    with pytest.raises(ValueError, match="one id and one stream per event"):
        encode(CODEC, events, ACTOR, random_ids(2), [uuid4().bytes])
