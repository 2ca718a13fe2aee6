from datetime import UTC, datetime
from uuid import UUID

from infra.postgres.encoding import random_ids
from infra.postgres.hashchain import GENESIS, content_digest, link

EVENT: dict[str, object] = {
    "event_id": UUID(int=1),
    "stream_type": "template",
    "stream_id": UUID(int=2),
    "type": "template.created.v1",
    "schema_version": 1,
    "data": '{"name":"a"}',
    "metadata": '{"actorSubject":"app-1"}',
}


def digest_of(**changes: object) -> bytes:
    return content_digest(**{**EVENT, **changes})  # type: ignore[arg-type]


def test_every_field_changes_the_digest() -> None:
    base = digest_of()
    changes = {
        "event_id": UUID(int=3),
        "stream_type": "asset",
        "stream_id": UUID(int=4),
        "type": "template.created.v2",
        "schema_version": 2,
        "data": '{"name":"b"}',
        "metadata": '{"actorSubject":"app-2"}',
    }
    for field, value in changes.items():
        assert digest_of(**{field: value}) != base, field


def test_moving_bytes_between_fields_changes_the_digest() -> None:
    assert digest_of(data='{"a":1}', metadata='{"b":2}') != digest_of(
        data='{"a":1}{"b"', metadata=":2}"
    )


def test_a_link_depends_on_its_predecessor_version_and_time() -> None:
    digest = digest_of()
    at = datetime(2026, 11, 29, 12, 0, 0, 1, tzinfo=UTC)
    first = link(GENESIS, digest, 1, at)
    assert len(first) == 32
    assert link(first, digest, 1, at) != first
    assert link(GENESIS, digest, 2, at) != first
    assert link(GENESIS, digest, 1, at.replace(microsecond=2)) != first


def test_random_ids_are_distinct_version_4_uuids() -> None:
    raw = random_ids(1000)
    ids = [UUID(bytes=raw[i : i + 16]) for i in range(0, len(raw), 16)]
    assert len(set(ids)) == 1000
    assert {u.version for u in ids} == {4}
    assert {u.variant for u in ids} == {"specified in RFC 4122"}
