"""A write's standing, checked where the write takes effect rather than before it starts: the
epochs this process last found are assumed, and checked by the write's first statement, its first
connection, or before its answer. Why and how: docs/decisions/0019-request-standing.md."""

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Final

import asyncpg

from infra.bootstrap import gate, gate_with
from infra.postgres.connections import Connection
from infra.postgres.read_marks import Standing, writer_standing_of
from services.errors import NotAuthenticatedError

# What a statement that checks the access epoch itself is given when there is no epoch yet.
NO_EPOCH: Final = -1

Recheck = Callable[[Standing], Awaitable[None]]


class _Known:
    """The last standing this process was told by the database."""

    standing: Standing | None = None


_known: Final = _Known()


def known() -> Standing | None:
    """The epochs this process last found, which a write assumes (None: none found yet)."""
    return _known.standing


def seen(standing: Standing) -> None:
    """The database's epochs as a query has just found them."""
    _known.standing = Standing(
        access_epoch=standing.access_epoch, org_epoch=standing.org_epoch, ready=True
    )


class Unchecked:
    """A request's assumed standing until the database confirms or replaces it; until then the
    gate of its connections (infra/bootstrap.py). A caller the second look refused stays refused,
    at every later use and in the answer, whatever a use case made of the first refusal."""

    __slots__ = ("_checking", "_found", "_recheck", "_refused", "assumed", "carried", "done")

    def __init__(self, assumed: Standing, recheck: Recheck) -> None:
        self.assumed = assumed
        self._recheck = recheck
        self._found = assumed
        self._checking = False  # looking at the caller again, which may read
        self._refused: NotAuthenticatedError | None = None
        self.done = False  # confirmed, or replaced and looked at again
        self.carried = False  # a statement checks it itself: the pool leaves it to that

    def closed(self) -> bool:
        if self._refused is not None:
            return True
        return not (self.done or self.carried or self._checking)

    def end(self) -> None:
        """The request has been answered: a task it started that outlives it (a trailing
        wake-up of the log's readers) is the process's own."""
        self.done, self._refused = True, None

    async def passes(self, conn: Connection) -> bool:
        """The database's standing, read on `conn`: whether it is the one assumed (then the
        request goes on at once; else `after` looks at the caller again)."""
        self.refuse_again()
        self._found = await writer_standing_of(conn)
        if not self.holds(self._found):
            return False
        await self.settle(self._found)
        return True

    async def after(self) -> None:
        await self.settle(self._found)

    @property
    def access_epoch(self) -> int:
        """The assumed access epoch as a statement compares it (NO_EPOCH: none)."""
        epoch = self.assumed.access_epoch
        return NO_EPOCH if epoch is None else epoch

    def holds(self, found: Standing) -> bool:
        return (found.access_epoch, found.org_epoch) == (
            self.assumed.access_epoch,
            self.assumed.org_epoch,
        )

    def refuse_again(self) -> None:
        if self._refused is not None:
            raise self._refused

    async def settle(self, found: Standing) -> None:
        """The database's standing is `found`: the request goes on as it was when that is the
        one assumed, and is looked at again under `found` otherwise (which may refuse it)."""
        seen(found)
        if self.holds(found):
            self.done = True
            return
        self._checking = True
        try:
            await self._recheck(found)
        except NotAuthenticatedError as refusal:
            self._refused = refusal
            raise
        finally:
            self._checking = False
        self.done = True


def expect(assumed: Standing, recheck: Recheck) -> None:
    """This request's standing is `assumed`, to be checked before it takes effect."""
    gate_with(Unchecked(assumed, recheck))


def begin() -> None:
    """A request starts: it has assumed nothing."""
    gate_with(None)


def end() -> None:
    """A request has been answered: nothing it assumed stands any longer."""
    pending = gate()
    if isinstance(pending, Unchecked):
        pending.end()
    gate_with(None)


def unchecked() -> Unchecked | None:
    """The request's assumed standing, while the database has not confirmed it (or refused
    the caller)."""
    pending = gate()
    return pending if isinstance(pending, Unchecked) and pending.closed() else None


async def confirm(pool: asyncpg.Pool) -> None:
    """Check the request's assumed standing now, if it still is (the pool does, handing out a
    connection); raises what looking at the caller again raised."""
    if unchecked() is not None:
        async with pool.acquire():
            pass


@contextmanager
def carried() -> Iterator[Unchecked | None]:
    """For a statement that checks the assumed access epoch itself: the standing it is to check
    (None: nothing to check); the pool hands it its connection unchecked."""
    pending = unchecked()
    if pending is None:
        yield None
        return
    pending.refuse_again()
    pending.carried = True
    try:
        yield pending
    finally:
        pending.carried = False


def from_row(access_epoch: int, org_epoch: int | None) -> Standing:
    """The standing a statement that checked it itself returned (NO_EPOCH: none)."""
    return Standing(
        access_epoch=None if access_epoch == NO_EPOCH else access_epoch,
        org_epoch=org_epoch,
        ready=True,
    )
