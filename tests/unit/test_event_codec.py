import msgspec
import pytest

from domain.events import Event
from infra.serialization import EventCodec
from tests.sample_events import CODEC, CounterIncremented, CounterLabelled, CounterOpened


def test_events_round_trip_with_their_tag_and_schema_version_in_camel_case() -> None:
    encoded = CODEC.encode(CounterLabelled(labels={"team": "vision"}))
    assert encoded.type == "counter.labelled.v2"
    assert encoded.schema_version == 2
    assert msgspec.json.decode(encoded.data) == {
        "type": "counter.labelled.v2",
        "labels": {"team": "vision"},
    }
    assert CODEC.decode(encoded.data) == CounterLabelled(labels={"team": "vision"})


def test_fields_added_with_defaults_decode_from_older_payloads() -> None:
    assert CODEC.decode(b'{"type": "counter.incremented.v1", "by": 3}') == CounterIncremented(by=3)


def test_an_upcaster_rewrites_superseded_shapes_on_read() -> None:
    def rename(event: Event) -> Event:
        if isinstance(event, CounterOpened):
            return CounterOpened(name=event.name.upper())
        return event

    codec = EventCodec([CounterOpened], upcast=rename)
    assert codec.decode(b'{"type": "counter.opened.v1", "name": "a"}') == CounterOpened(name="A")


def test_a_tag_that_is_not_stream_fact_version_is_refused() -> None:
    class Untidy(Event, tag="Counter-Opened", frozen=True, kw_only=True):
        name: str

    with pytest.raises(ValueError, match="Counter-Opened"):
        EventCodec([Untidy])


def test_an_event_outside_the_catalogue_is_not_encoded() -> None:
    with pytest.raises(ValueError, match="not in this event catalogue"):
        EventCodec([CounterOpened]).encode(CounterIncremented(by=1))
