"""Deterministic event ids: the same idempotency key always names the same events."""

from hashlib import sha1
from uuid import UUID

# A fixed namespace, so ids derived from a key are stable across processes and releases.
EVENT_ID_NAMESPACE = UUID("5b0f3c7e-6a51-4f57-9a5e-2f7c1d8e4a90")
_NAMESPACE = EVENT_ID_NAMESPACE.bytes


def event_ids_for(key: str, stream_id: UUID, count: int) -> list[UUID]:
    """Ids for an append made under `key`: a retry yields the same ids, so it writes nothing.
    They are `uuid5(EVENT_ID_NAMESPACE, f"{key}/{stream_id}/{index}")`, hashed from one prefix."""
    prefix = _NAMESPACE + f"{key}/{stream_id}/".encode()
    return [
        UUID(bytes=sha1(prefix + b"%d" % index, usedforsecurity=False).digest()[:16], version=5)
        for index in range(count)
    ]
