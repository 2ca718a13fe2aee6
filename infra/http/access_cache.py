"""What an API process keeps in memory about access (callers' standing, the org tree's lineages,
signed-out sessions) under the epoch it was read at, so a read costs one query for it; a change
moves the epoch in its own transaction. See docs/decisions/0029-what-a-request-reads.md."""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Protocol
from uuid import UUID

from domain import access as access_rules
from domain.applications import Application
from domain.bounded import Bounded
from domain.values import TENANT, Grant, ScopeRef
from services import access
from services.ports.event_store import StreamLoader
from services.ports.read_side import OrgTree

_CALLERS: Final = 4096  # the callers kept; the least recently used go first
_NONE: Final = object()  # kept for an application that does not exist


class SignedOutSessions(Protocol):
    async def signed_out(self, session_id: UUID) -> bool: ...


class AccessCache:
    def __init__(
        self,
        streams: StreamLoader,
        tree: OrgTree,
        sessions: SignedOutSessions | None = None,
        *,
        size: int = _CALLERS,
    ) -> None:
        self._streams = streams
        self._tree = tree
        self._sessions = sessions
        self._callers: Bounded[str, tuple[int | None, object]] = Bounded(size)
        self._lineages: tuple[int | None, Mapping[ScopeRef, tuple[ScopeRef, ...]]] | None = None
        self._size = size
        self._seen: Bounded[tuple[Grant, ...], tuple[object, frozenset[ScopeRef]]] = Bounded(size)

    async def application(self, application_id: UUID, epoch: int | None) -> Application | None:
        """The application as its stream says (None: never created)."""
        key = f"application:{application_id}"
        kept = self._kept(key, epoch)
        if kept is not None:
            return kept if isinstance(kept, Application) else None
        state = await access.application(application_id, streams=self._streams)
        self._keep(key, epoch, _NONE if state is None else state)
        return state

    async def signed_out(self, session_id: UUID, epoch: int | None) -> bool:
        """Whether the console session was signed out (never, without a record of sessions)."""
        if self._sessions is None:
            return False
        key = f"session:{session_id}"
        kept = self._kept(key, epoch)
        if isinstance(kept, bool):
            return kept
        gone = await self._sessions.signed_out(session_id)
        self._keep(key, epoch, gone)
        return gone

    async def user_grants(self, subject: str, epoch: int | None) -> tuple[Grant, ...]:
        """A user's grants (none for a user never granted anything)."""
        key = f"user:{subject}"
        kept = self._kept(key, epoch)
        if isinstance(kept, tuple):
            return kept
        grants = await access.user_grants(subject, streams=self._streams)
        self._keep(key, epoch, grants)
        return grants

    async def lineages(self, epoch: int | None) -> Mapping[ScopeRef, tuple[ScopeRef, ...]]:
        """Every live scope, the tenant included, with its lineage; read-only, as every request
        of the epoch shares it."""
        kept = self._lineages
        if kept is not None and kept[0] == epoch:
            return kept[1]
        found = await self._tree.lineages()
        found.setdefault(TENANT, (TENANT,))
        shared = MappingProxyType(found)
        self._lineages = (epoch, shared)
        self._seen = Bounded(self._size)  # what it kept holds the old tree: let both go
        return shared

    async def seen(self, grants: tuple[Grant, ...], epoch: int | None) -> frozenset[ScopeRef]:
        """The scopes these grants see in the org tree of `epoch`, kept with its lineages: in a
        large tenant, working them out costs more than the rest of a read."""
        lineages = await self.lineages(epoch)
        kept = self._seen.get(grants)
        if kept is not None and kept[0] is lineages:
            return kept[1]
        seen = frozenset(access_rules.visible_scopes(grants, lineages))
        self._seen.put(grants, (lineages, seen))
        return seen

    def _kept(self, key: str, epoch: int | None) -> object | None:
        kept = self._callers.get(key)
        if kept is None or kept[0] != epoch:
            return None
        return kept[1]

    def _keep(self, key: str, epoch: int | None, found: object) -> None:
        self._callers.put(key, (epoch, found))
