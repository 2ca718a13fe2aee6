"""What the streams of infra/postgres/streams.py are bound to (a pool, or one connection in a
command's unit of work), and what the process learns from them once that has committed: the heads
it knows (`StreamHeads`), the streams it remembers (`RememberedStreams`)."""

import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import ParamSpec, Self
from uuid import UUID

import asyncpg

from domain.bounded import Bounded
from infra.postgres import writer_standing
from infra.postgres.commit_notifier import CommitNotices, CommitNotifier
from infra.postgres.connections import Connection, translated
from infra.postgres.hashchain import GENESIS
from infra.postgres.positions import note_append
from infra.security.sealing import CredentialKeyUnconfiguredError, Sealer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import EventCodec
from infra.settings import EVENT_BYTES
from services.kinds import forget_folds_of, keep_folds_of
from services.ports.event_store import Stream

_Args = ParamSpec("_Args")

# A row written beside an append's events, on its transaction's connection (Append.secret).
RowWrite = Callable[[Connection], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretKeys:
    """What seals and hashes the secrets kept beside the events; None: not configured (what
    needs it raises CredentialKeyUnconfiguredError)."""

    sealer: Sealer | None = None  # a credential's values
    hasher: SecretHasher | None = None  # an application's secret
    answers: Sealer | None = None  # an application's first secret, kept for retries

    def require(self, key: Sealer | None) -> Sealer:
        if key is None:
            raise CredentialKeyUnconfiguredError()
        return key


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


class RememberedStreams:
    """Streams by id, as last read or known whole; bounded, least recently used out. A decision on
    them appends with the versions it read as `checked`, and its statement writes nothing if one
    has moved on. Empty streams are kept too (version 0): most tenants' settings never changed."""

    def __init__(self, capacity: int = 2_000) -> None:
        self._streams: Bounded[UUID, Stream] = Bounded(capacity)

    def get(self, stream_id: UUID) -> Stream | None:
        return self._streams.get(stream_id)

    def __contains__(self, stream_id: object) -> bool:
        return stream_id in self._streams

    def keep(self, stream_id: UUID, stream: Stream) -> None:
        if (kept := self._streams.get(stream_id)) is not None and kept is not stream:
            forget_folds_of(kept.events)
        keep_folds_of(stream.events)  # handed out again until forgotten: fold it once
        if (oldest := self._streams.put(stream_id, stream)) is not None:
            forget_folds_of(oldest.events)

    def forget(self, stream_ids: Iterable[UUID]) -> None:
        """Streams that moved on (this process appended to them, or a check found them moved)."""
        for stream_id in stream_ids:
            if (stream := self._streams.pop(stream_id)) is not None:
                forget_folds_of(stream.events)


class UnitOfWork:
    """A transaction's writes: what is to happen once it has committed (nothing if it rolls
    back: a head it wrote would be no head at all, and a position no reader will ever reach)."""

    __slots__ = ("after",)

    def __init__(self) -> None:
        self.after: list[Callable[[], None]] = []

    def committed(self) -> None:
        for action in self.after:
            action()


class BoundStreams:
    """Streams over a pool it does not own (bootstrap opens and closes it), or over a
    connection: inside a caller's transaction (the fan-out's, with its checkpoint), the appends
    are the caller's to commit."""

    def __init__(
        self,
        pool: "asyncpg.Pool | Connection",
        codec: EventCodec,
        *,
        notifier: CommitNotices | None = None,
        max_event_bytes: int = EVENT_BYTES,
        keys: SecretKeys | None = None,
    ) -> None:
        self._db = pool
        self.codec = codec
        self.keys = keys or SecretKeys()
        # An append holding a larger event is refused, writing nothing (infra/postgres/
        # encoding.py); `EventStore.max_event_bytes` tells its callers.
        self.max_event_bytes = max_event_bytes
        self.notifier: CommitNotices = notifier or CommitNotifier(pool)
        self._heads = StreamHeads()
        self._remembered = RememberedStreams()
        self._unit: UnitOfWork | None = None  # set: bound to a transaction of transaction()'s
        self._last_position: int | None = None  # of append_each, for take_last_position

    def _bound(self, conn: Connection, unit: UnitOfWork | None) -> Self:
        # A copy, not a new instance: it shares the heads and the remembered streams (what it
        # learns, once committed, the pool's appends use), and a subclass's own state too,
        # whatever its constructor takes.
        bound = copy.copy(self)
        bound._db = conn
        bound._unit = unit
        bound._last_position = None
        return bound

    @property
    def connection(self) -> Connection:
        """The connection of a transaction (or session): for rows of a side table that are to
        commit with its appends (the credential vault's values, an application's secret)."""
        if isinstance(self._db, asyncpg.Pool):
            raise RuntimeError("a pool's streams have no one connection: use transaction()")
        return self._db

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Self]:
        if self._unit is not None:  # inside a transaction already: this is part of it
            yield self
            return
        unit = UnitOfWork()
        async with translated("append"), self._connection() as conn, conn.transaction():
            yield self._bound(conn, unit)
        unit.committed()

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Self]:
        """The same streams over one pooled connection, for a request that reads then writes;
        each append commits alone. Not while the request's standing is assumed: its first
        statement may check it itself (docs/decisions/0019-request-standing.md)."""
        if writer_standing.unchecked() is not None and isinstance(self._db, asyncpg.Pool):
            yield self
            return
        async with self._connection() as conn:
            yield self._bound(conn, None)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        if isinstance(self._db, asyncpg.Pool):
            async with self._db.acquire() as conn:
                yield conn
        else:
            yield self._db

    def _in_transaction(self) -> bool:
        """Statements run in a transaction of more than themselves: a race lost is final (the
        transaction, or the append's savepoint, is aborted), so it is a conflict rather than a
        statement to try again."""
        if self._unit is not None:
            return True
        return not isinstance(self._db, asyncpg.Pool) and self._db.is_in_transaction()

    def _in_callers_transaction(self) -> bool:
        """Bound to a connection in a transaction of the caller's, whose end this does not see:
        what it reads or writes there may yet be rolled back, so none of it is kept."""
        return self._unit is None and self._in_transaction()

    def _once_committed(
        self, action: Callable[_Args, None], *args: _Args.args, **kwargs: _Args.kwargs
    ) -> None:
        """`action(*args, **kwargs)` now, or once the unit of work has committed (bound only
        then: most appends are outside a unit, and a partial made for each was measurable)."""
        if self._unit is None:
            action(*args, **kwargs)
        else:
            self._unit.after.append(partial(action, *args, **kwargs))

    def _remember(self, stream_id: UUID, version: int, hash_: bytes) -> None:
        """A head read (in a transaction, it may be of its own writes: known once committed)."""
        if not self._in_callers_transaction():
            self._once_committed(self._heads.remember, stream_id, version, hash_)

    def _keep(self, stream_id: UUID, stream: Stream) -> None:
        """A stream read, for later decisions: in a transaction it may hold the transaction's own
        writes, so only once it has committed."""
        if not self._in_callers_transaction():
            self._once_committed(self._remembered.keep, stream_id, stream)

    def _written(
        self, stream_id: UUID, version: int, hash_: bytes, carried_at: float | None, last: int
    ) -> None:
        """Events appended: the stream's new head, known (and readers woken) once committed."""
        self._once_committed(self._written_now, stream_id, version, hash_, carried_at, last)

    def _written_now(
        self, stream_id: UUID, version: int, hash_: bytes, carried_at: float | None, last: int
    ) -> None:
        if not self._in_callers_transaction():
            self._heads.remember(stream_id, version, hash_)
        self._remembered.forget((stream_id,))
        self.notifier.committed(carried_at)
        note_append(last)
