"""The stream heads a writer already knows, so an append need not read them back."""

from uuid import UUID

from infra.postgres.hashchain import GENESIS
from services.bounded import Bounded


class StreamHeads:
    """The head (version, hash) of the streams this process last read or wrote; bounded, LRU.

    Events are immutable, so a head seen here stays true until someone appends; an append built
    on a stale head is refused by unique (stream_id, version) and retried with a lookup.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self._heads: Bounded[UUID, tuple[int, bytes]] = Bounded(capacity)

    def known(self, stream_id: UUID, expected_version: int | None) -> bytes | None:
        """The hash at `expected_version`, when it is known without asking the database."""
        if expected_version == 0:
            return GENESIS
        head = self._heads.get(stream_id)
        return head[1] if head is not None and head[0] == expected_version else None

    def remember(self, stream_id: UUID, version: int, hash_: bytes) -> None:
        self._heads.put(stream_id, (version, hash_))
