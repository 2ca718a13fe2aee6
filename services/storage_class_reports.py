"""What a cluster's agent (the submitter's Kubernetes backend) reports of its StorageClasses: the
whole set, registered through the cluster admins' own use cases. Also: services/storage_classes.py,
infra/backends/storage_class_listing.py."""

import contextlib
from collections.abc import Mapping
from typing import Final
from uuid import UUID

from domain import storage_classes
from domain.cluster_specs import StorageClassSpec
from domain.commands import RegisterStorageClass, RemoveStorageClass
from domain.events import EventMetadata
from domain.storage_classes import StorageClassNotFoundError
from services.kinds import fold_as
from services.ports.event_store import EventStore
from services.ports.name_lookups import NameHolders
from services.storage_classes import register_storage_class, remove_storage_class

AGENT: Final = EventMetadata(actor_subject="submitter", actor_kind="system")


async def report_storage_classes(
    cluster_id: UUID,
    reported: Mapping[str, StorageClassSpec],
    *,
    streams: EventStore,
    holders: NameHolders,
) -> None:
    """The cluster has exactly these classes now: each registered (unchanged, nothing is
    written), and those registered before that it no longer reports removed."""
    for name in sorted(reported):
        await register_storage_class(
            RegisterStorageClass(
                cluster_id=cluster_id, name=name, spec=reported[name], metadata=AGENT
            ),
            streams=streams,
        )
    for gone in sorted(await _registered(cluster_id, streams, holders) - set(reported)):
        # Removed meanwhile (another replica's report, an admin's DELETE): done all the same.
        with contextlib.suppress(StorageClassNotFoundError):
            await remove_storage_class(
                RemoveStorageClass(cluster_id=cluster_id, name=gone, metadata=AGENT),
                streams=streams,
            )


async def _registered(cluster_id: UUID, streams: EventStore, holders: NameHolders) -> set[str]:
    """The names of the cluster's registered classes (a removal frees its name)."""
    held = await holders([storage_classes.class_namespace(cluster_id)])
    found = set()
    for stream in (await streams.load_many(held)).values():
        state = fold_as(storage_classes.fold, stream.events)
        if state is not None and not state.removed:
            found.add(state.name)
    return found
