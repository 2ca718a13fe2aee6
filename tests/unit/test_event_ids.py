from uuid import uuid4, uuid5

from services.event_ids import EVENT_ID_NAMESPACE, event_ids_for


def test_the_same_key_names_the_same_events() -> None:
    sid = uuid4()
    assert event_ids_for("k", sid, 3) == event_ids_for("k", sid, 3)


def test_different_keys_streams_and_positions_name_different_events() -> None:
    sid = uuid4()
    ids = event_ids_for("k", sid, 3) + event_ids_for("j", sid, 3) + event_ids_for("k", uuid4(), 3)
    assert len(set(ids)) == 9


def test_ids_are_uuid5_of_the_key_stream_and_position() -> None:
    """What earlier releases wrote: a redelivery across an upgrade still names the same events."""
    sid = uuid4()
    expected = [uuid5(EVENT_ID_NAMESPACE, f"workload/run/1/é/{sid}/{i}") for i in range(12)]
    assert event_ids_for("workload/run/1/é", sid, 12) == expected
