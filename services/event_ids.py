"""Deterministic event ids: the same idempotency key always names the same events."""

from uuid import UUID, uuid5

# A fixed namespace, so ids derived from a key are stable across processes and releases.
EVENT_ID_NAMESPACE = UUID("5b0f3c7e-6a51-4f57-9a5e-2f7c1d8e4a90")


def event_ids_for(key: str, stream_id: UUID, count: int) -> list[UUID]:
    """Ids for an append made under `key`: a retry yields the same ids, so it writes nothing."""
    return [uuid5(EVENT_ID_NAMESPACE, f"{key}/{stream_id}/{index}") for index in range(count)]
