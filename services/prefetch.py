"""Reading the streams a use case will need in one round trip instead of one each."""

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar
from uuid import UUID

from domain import org_units, users
from domain.errors import DomainError
from domain.events import EventMetadata
from domain.values import ScopeRef
from services.errors import ApplicationError
from services.ports.event_store import Stream, StreamReader

Decision = TypeVar("Decision")
Outcome = TypeVar("Outcome")


class Prefetched:
    """A stream loader answering from streams read together up front, asking the store once for
    any other. Read `remembered`, any may be old, so it keeps each one's version for the append to
    check (`checked`), those asked later included."""

    def __init__(self, store: StreamReader, *, remembered: bool = False) -> None:
        self._store = store
        self._streams: dict[UUID, Stream] = {}
        self._asked: set[UUID] = set()
        self._remembered = remembered

    @property
    def checked(self) -> dict[UUID, int] | None:
        """What an append decided on these streams must find unmoved (`EventStore.append`), when
        they may be old (read `remembered`); None when they were read from the store now."""
        if not self._remembered:
            return None
        return {i: self._streams[i].version if i in self._streams else 0 for i in self._asked}

    async def load(self, stream_id: UUID) -> Stream:
        if stream_id not in self._asked:
            await self.add([stream_id])
        return self._streams.get(stream_id, Stream(0, ()))

    async def add(self, ids: Iterable[UUID | None]) -> "Prefetched":
        """Read these streams too, in one round trip (none, `remembered`, when the store holds
        them all from before); itself, for chaining."""
        wanted = {i for i in ids if i is not None} - self._asked
        if wanted:
            found = await self._store.load_many(sorted(wanted), remembered=self._remembered)
            self._streams.update(found)
            self._asked |= wanted
        return self


def actor_stream(actor: EventMetadata) -> UUID | None:
    """The stream holding the actor's roles: its application's, or its user's."""
    if actor.actor_kind == "user":
        return users.stream_of(actor.actor_subject)
    try:
        return UUID(actor.actor_subject)
    except ValueError:
        return None


async def prefetch(
    store: StreamReader, ids: Iterable[UUID | None], *, remembered: bool = False
) -> Prefetched:
    """The streams, read in one round trip (none, `remembered`, when the store holds them all
    from before)."""
    return await Prefetched(store, remembered=remembered).add(ids)


async def decided(
    decide: Callable[[bool], Awaitable[Decision]], write: Callable[[Decision], Awaitable[Outcome]]
) -> Outcome:
    """Decide on streams the store may hold from before (`decide(True)`, `write` checking them),
    and write; decide again on the streams as they are if they had moved or the first decision
    refused. A store fault is not retried: whether its append took cannot be told."""
    try:
        return await write(await decide(True))
    except (DomainError, ApplicationError):
        return await write(await decide(False))


def scope_stream(scope: ScopeRef) -> UUID | None:
    """The stream of the org unit a scope names (none for the tenant, or a malformed id)."""
    if scope.kind == "tenant":
        return None
    try:
        return org_units.stream_of(scope)
    except ValueError:
        return None
