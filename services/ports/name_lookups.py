"""What the write side looks up beside its streams, kept in the transactions of their appends:
the holders of names and of access rules, and the small integer ids Run:ai numbers things with."""

from collections.abc import Sequence
from typing import NamedTuple, Protocol
from uuid import UUID

from domain.commands import SubjectKind


class NameHolder(Protocol):
    """Which stream holds a name in a namespace (the names `EventStore.append` claims), None
    when none does: the write side's own answer to a name-availability question."""

    async def __call__(self, namespace: str, name: str) -> UUID | None: ...


class NameHolders(Protocol):
    """The streams holding a name in any of these namespaces (the names `EventStore.append`
    claims), in no order: what a write decides on when it must know everything named there."""

    async def __call__(self, namespaces: Sequence[str]) -> list[UUID]: ...


class Lookups(NamedTuple):
    """Both name lookups, for a use case asking which of a namespace's names are held."""

    holder: NameHolder
    holders: NameHolders


class IdSequence(Protocol):
    """Small integer ids (Run:ai numbers departments and projects). A `creation` (the id derived
    from an `Idempotency-Key`) is issued its id once, so its retries reach its stream; `given`:
    the id to issue a creation not issued one yet (a create answered with what exists already)."""

    async def next_id(self, creation: UUID | None = None, *, given: int | None = None) -> int: ...

    async def issued(self, creation: UUID) -> int | None:
        """The id issued to `creation` before, if any; issues none (so a create refused before
        it is decided uses up no number)."""
        ...


class RuleHolders(Protocol):
    """Whose stream holds an access rule in force, from the write side (kept in the transaction
    of each grant and revocation): the subject's kind and id, or None when no rule of that id is
    in force. A rule granted a moment ago is found."""

    async def holder(self, rule_id: int) -> tuple[SubjectKind, str] | None: ...
