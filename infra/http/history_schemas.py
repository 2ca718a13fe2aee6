"""The history endpoints' answers: versions, changes between two, an asset as of a moment."""

from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec


class VersionWire(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    version: int
    type: str
    time: datetime
    actor: str
    actor_kind: str
    cause: UUID | None
    position: int
    # A linked asset's update (the fan-out): which asset, and the version of it now combined.
    asset_id: UUID | None = None
    asset_version: int | None = None


class HistoryWire(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    versions: list[VersionWire]


class ChangeWire(msgspec.Struct, frozen=True):
    field: str
    before: Any
    after: Any


class DiffWire(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: UUID
    from_version: int
    to_version: int
    changes: list[ChangeWire]


class AssetAsOf(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    kind: str
    version: int
    deleted: bool
    meta: dict[str, Any]
    spec: dict[str, Any]
