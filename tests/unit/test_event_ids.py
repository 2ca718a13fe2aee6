from uuid import uuid4

from services.event_ids import event_ids_for


def test_the_same_key_names_the_same_events() -> None:
    sid = uuid4()
    assert event_ids_for("k", sid, 3) == event_ids_for("k", sid, 3)


def test_different_keys_streams_and_positions_name_different_events() -> None:
    sid = uuid4()
    ids = event_ids_for("k", sid, 3) + event_ids_for("j", sid, 3) + event_ids_for("k", uuid4(), 3)
    assert len(set(ids)) == 9
