"""What the write side reads beyond its streams: the org tree as the read side knows it, the
fan-out's link index and memory, and the log's envelopes for history and audit."""

from collections.abc import Sequence
from typing import Protocol
from uuid import UUID

from domain.events import RecordedEvent
from domain.values import ScopeRef


class OrgTree(Protocol):
    """The org tree as the read side knows it: for questions that span many units."""

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        """Every live scope, the tenant included, with its lineage (itself, then ancestors)."""
        ...


class LinkIndex(Protocol):
    """What the fan-out reads: which templates use an asset (the write side's record, kept in
    the transaction of each template's append), and its own memory, kept in step with its
    position in the log: the latest version of each asset it has read."""

    async def templates_using(self, asset_id: UUID) -> list[UUID]: ...

    async def latest_versions(self, asset_ids: Sequence[UUID]) -> dict[UUID, int]:
        """Those of the assets it has read a version of."""
        ...

    async def set_latest_version(self, asset_id: UUID, version: int) -> None: ...


class RecordedHistory(Protocol):
    """A stream's events with their envelopes (when, who, why), for history and audit reads."""

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]: ...
