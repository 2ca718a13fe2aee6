"""Reading the streams a use case will need in one round trip instead of one each."""

from collections.abc import Iterable
from uuid import UUID

from domain import org_units, users
from domain.events import EventMetadata
from domain.values import ScopeRef
from services.ports import Stream, Streams


class Prefetched:
    """A stream loader that answers from streams read together up front, and asks the store
    for any other."""

    def __init__(self, store: Streams, streams: dict[UUID, Stream], asked: set[UUID]) -> None:
        self._store = store
        self._streams = streams
        self._asked = asked

    async def load(self, stream_id: UUID) -> Stream:
        if stream_id in self._asked:
            return self._streams.get(stream_id, Stream(0, ()))
        return await self._store.load(stream_id)


def actor_stream(actor: EventMetadata) -> UUID | None:
    """The stream holding the actor's roles: its application's, or its user's."""
    if actor.actor_kind == "user":
        return users.stream_of(actor.actor_subject)
    try:
        return UUID(actor.actor_subject)
    except ValueError:
        return None


async def prefetch(store: Streams, ids: Iterable[UUID | None]) -> Prefetched:
    wanted = {i for i in ids if i is not None}
    return Prefetched(store, await store.load_many(sorted(wanted)) if wanted else {}, wanted)


def scope_stream(scope: ScopeRef) -> UUID | None:
    """The stream of the org unit a scope names (none for the tenant, or a malformed id)."""
    if scope.kind == "tenant":
        return None
    try:
        return org_units.stream_of(scope)
    except ValueError:
        return None
