"""Data volumes: the data of one PVC of a project, shared read-only with other scopes (reference
§13.2) within its cluster, since a PVC is never seen by another. Also: services/data_volumes.py,
projections/data_volume_catalogue.py, infra/http/data_volumes.py."""

import re
from collections.abc import Iterable, Sequence
from typing import Final, assert_never
from uuid import UUID

import msgspec

from domain import name_rules
from domain.assets import AssetExistsError, AssetNotFoundError, InvalidAssetError
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    DataVolumeCreated,
    DataVolumeDeleted,
    DataVolumeEvent,
    DataVolumeShared,
    DataVolumeUnshared,
    DataVolumeUpdated,
    Event,
)
from domain.specs import DataVolumeSpec, SharedScope
from domain.values import AssetMeta, ScopeRef

KIND: Final = "datavolume"
# Run:ai's bound on a data volume's description (DatavolumeCreationFields; its name's rule is
# domain/name_rules.py DATA_VOLUME).
DESCRIPTION_MAX: Final = 127
# The origin PVC is a Kubernetes object name (a DNS-1123 subdomain).
PVC_NAME: Final = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
SHARED_MAX: Final = 50  # scopes added or removed by one request


class DataVolume(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    meta: AssetMeta  # in its project, with the project's department and cluster
    spec: DataVolumeSpec
    deleted: bool = False
    version: int = 0

    @property
    def kind(self) -> str:
        return KIND

    @property
    def cluster(self) -> ScopeRef:
        return ScopeRef("cluster", str(self.meta.cluster_id))


class DataVolumeInUseError(DomainError):
    """Templates mount it: it cannot be deleted, nor unshared from a scope they may be in."""

    slug = "asset-in-use"

    def __init__(self, datavolume_id: UUID, users: Iterable[str], *, doing: str) -> None:
        names = ", ".join(users)
        super().__init__(f"data volume {datavolume_id} is in use by: {names}; not {doing}")
        self.datavolume_id = datavolume_id
        self.users = names


def scope_ref(shared: SharedScope) -> ScopeRef:
    return ScopeRef(shared.scope_type, shared.scope_id)


def evolve(state: DataVolume | None, event: DataVolumeEvent) -> DataVolume:
    if isinstance(event, DataVolumeCreated):
        return DataVolume(id=event.datavolume_id, meta=event.meta, spec=event.spec)
    if state is None:
        raise InvalidHistoryError(f"{type(event).__name__} before datavolume.created")
    match event:
        case DataVolumeUpdated():
            meta = msgspec.structs.replace(state.meta, description=event.description)
            return msgspec.structs.replace(state, meta=meta)
        case DataVolumeShared():
            scopes = (*state.spec.shared_scopes, event.scope)
            return msgspec.structs.replace(state, spec=_with_scopes(state.spec, scopes))
        case DataVolumeUnshared():
            scopes = tuple(s for s in state.spec.shared_scopes if s != event.scope)
            return msgspec.structs.replace(state, spec=_with_scopes(state.spec, scopes))
        case DataVolumeDeleted():
            return msgspec.structs.replace(state, deleted=True)
        case _:
            assert_never(event)


def _with_scopes(spec: DataVolumeSpec, scopes: tuple[SharedScope, ...]) -> DataVolumeSpec:
    return msgspec.structs.replace(spec, shared_scopes=scopes)


_EVENTS: Final = (
    DataVolumeCreated, DataVolumeUpdated, DataVolumeShared, DataVolumeUnshared, DataVolumeDeleted
)  # fmt: skip


def fold(events: Iterable[Event]) -> DataVolume | None:
    state: DataVolume | None = None
    count = 0
    for event in events:
        if not isinstance(event, _EVENTS):
            raise InvalidHistoryError(f"{type(event).__name__} in a data volume stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: DataVolume | None, datavolume_id: UUID) -> DataVolume:
    if state is None or state.deleted:
        raise AssetNotFoundError(KIND, datavolume_id)
    return state


def usable_in(state: DataVolume | None, lineage: Sequence[ScopeRef]) -> bool:
    """Whether a thing of the scope `lineage[0]` (its lineage given) may mount the data volume:
    it lives there, or is shared with it or a scope above it."""
    if state is None or state.deleted:
        return False
    held = {state.meta.scope_ref, *map(scope_ref, state.spec.shared_scopes)}
    return any(scope in held for scope in lineage)


def create(
    state: DataVolume | None,
    datavolume_id: UUID,
    meta: AssetMeta,
    spec: DataVolumeSpec,
    *,
    should_delete_original_volume: bool = False,
) -> list[DataVolumeEvent]:
    """`meta` places the data volume in its project (and that project's ancestors)."""
    if state is not None:
        raise AssetExistsError(datavolume_id)
    if meta.scope != "project" or meta.project_id is None or meta.cluster_id is None:
        raise InvalidAssetError("/projectId", "a data volume lives in a project")
    name_rules.check(meta.name, "/name", name_rules.DATA_VOLUME, refused=InvalidAssetError)
    check_description(meta.description)
    if not PVC_NAME.fullmatch(spec.origin_pvc_name):
        raise InvalidAssetError("/originPvcName", "a PVC name: lowercase DNS-1123, 1 to 253")
    if should_delete_original_volume:
        raise InvalidAssetError("/shouldDeleteOriginalVolume", "true is not supported")
    if not spec.use_original_volume:
        raise InvalidAssetError(
            "/useOriginalVolume", "no copy of a volume is made here: the original is used"
        )
    if spec.shared_scopes:
        raise InvalidAssetError("/sharedScopes", "share it once it exists")
    return [DataVolumeCreated(datavolume_id=datavolume_id, meta=meta, spec=spec)]


def check_description(description: str | None) -> None:
    if description is not None and len(description) > DESCRIPTION_MAX:
        raise InvalidAssetError("/description", f"at most {DESCRIPTION_MAX} characters")


def describe(
    state: DataVolume | None, datavolume_id: UUID, description: str | None
) -> list[DataVolumeEvent]:
    """A new description (an unchanged one writes nothing)."""
    current = live(state, datavolume_id)
    check_description(description)
    if description == current.meta.description:
        return []
    return [DataVolumeUpdated(datavolume_id=datavolume_id, description=description)]


def share(
    state: DataVolume | None,
    datavolume_id: UUID,
    *,
    add: Sequence[tuple[SharedScope, Sequence[ScopeRef]]],
    remove: Sequence[SharedScope],
) -> list[DataVolumeEvent]:
    """Share with the scopes of `add` (each with its lineage, which must hold the data volume's
    cluster) and no longer with those of `remove`. A scope already as asked changes nothing;
    one both added and removed is refused."""
    current = live(state, datavolume_id)
    for field, count in (("/add", len(add)), ("/remove", len(remove))):
        if count > SHARED_MAX:
            raise InvalidAssetError(field, f"at most {SHARED_MAX} scopes at a time")
    removed = set(remove)
    for i, (scope, lineage) in enumerate(add):
        if scope in removed:
            raise InvalidAssetError(f"/add/{i}", "a scope both added and removed")
        if current.cluster not in lineage:
            raise InvalidAssetError(
                f"/add/{i}/scopeId", f"not in the data volume's cluster {current.meta.cluster_id}"
            )
        if scope_ref(scope) == current.meta.scope_ref:
            raise InvalidAssetError(f"/add/{i}/scopeId", "the data volume lives in this project")
    shared = list(current.spec.shared_scopes)
    events: list[DataVolumeEvent] = []
    for scope in remove:
        if scope in shared:
            shared.remove(scope)
            events.append(DataVolumeUnshared(datavolume_id=datavolume_id, scope=scope))
    for scope, _ in add:
        if scope not in shared:
            shared.append(scope)
            events.append(DataVolumeShared(datavolume_id=datavolume_id, scope=scope))
    return events


def delete(state: DataVolume | None, datavolume_id: UUID) -> list[DataVolumeEvent]:
    """A deleted data volume is a no-op. Whether a template still mounts it is decided where
    the deletion is written, in its transaction (services/ports/event_store.py `Uses`)."""
    if state is not None and state.deleted:
        return []
    live(state, datavolume_id)
    return [DataVolumeDeleted(datavolume_id=datavolume_id)]


def shared_since(events: Sequence[Event]) -> dict[SharedScope, int]:
    """For each scope the data volume is shared with, the index of the event that shared it
    last (its stamp is that event's)."""
    since: dict[SharedScope, int] = {}
    for index, event in enumerate(events):
        if isinstance(event, DataVolumeShared):
            since[event.scope] = index
        elif isinstance(event, DataVolumeUnshared):
            since.pop(event.scope, None)
    return since
