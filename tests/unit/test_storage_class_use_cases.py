"""Storage classes against fakes of their ports: a cluster's admins register, remove and configure
its classes (one configuration per class); a new volume is held to its class's configuration
(refused naming the field, given its defaults), and `runnable` says why once it changes."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain import storage_rules
from domain.cluster_facts import ClusterFacts
from domain.cluster_specs import StorageClassRules, StorageClassSpec
from domain.combined import combine
from domain.commands import (
    CreateStorageClassConfiguration,
    CreateTemplate,
    RegisterStorageClass,
    RemoveStorageClass,
    UpdateStorageClassConfiguration,
)
from domain.events import EventMetadata, StorageClassRegistered
from domain.storage_classes import (
    InvalidConfigurationError,
    InvalidStorageClassError,
    StorageClassNotFoundError,
    stream_of,
)
from domain.storage_rules import StorageFacts
from domain.template_rules import InvalidTemplateError
from domain.template_specs import PvcVolume
from domain.templates import TemplateBody
from domain.values import ScopeRef
from services import storage_classes as use_cases
from services import templates
from services.errors import NameTakenError
from services.storage_class_reports import report_storage_classes
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
RWO_ONLY = {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False}


def rules(**given: Any) -> StorageClassRules:
    return msgspec.convert(given, StorageClassRules)


FAST = rules(
    customization={
        "accessMode": {"supportedValues": RWO_ONLY},
        "claimSize": {"min": "1Gi", "max": "10Gi", "default": "5Gi", "supportedUnits": ["GiB"]},
        "volumeMode": {"supportedValues": {"block": False}, "default": "Filesystem"},
    },
    permissions={"allowedForEphemeralVolumes": False, "allowDataSharing": False},
)


async def register(streams: InMemoryStreams, cluster: UUID, name: str) -> None:
    command = RegisterStorageClass(
        cluster_id=cluster, name=name, spec=StorageClassSpec(is_default=False), metadata=SYSTEM
    )
    await use_cases.register_storage_class(command, streams=streams)


async def configure(
    streams: InMemoryStreams, cluster: UUID, name: str, given: StorageClassRules
) -> UUID:
    command = CreateStorageClassConfiguration(
        configuration_id=uuid4(), cluster_id=cluster, name=name, rules=given, metadata=SYSTEM
    )
    return (await use_cases.create_configuration(command, streams=streams)).state.id


def with_volume(**claim: Any) -> TemplateBody:
    pvc = {"name": "scratch", "path": "/scratch", "existingPvc": False, **claim}
    spec = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pt:24"}
    return msgspec.convert({"spec": {**spec, "storage": {"pvc": [pvc]}}}, TemplateBody)


async def template(streams: InMemoryStreams, project: str, shape: TemplateBody) -> TemplateBody:
    command = CreateTemplate(
        template_id=uuid4(), scope=ScopeRef("project", project), name=f"t-{uuid4().hex[:6]}",
        body=shape, metadata=SYSTEM,
    )  # fmt: skip
    view = await templates.create_template(command, streams=streams, names=streams.lookups)
    return view.template.body


async def test_a_cluster_s_classes_are_registered_again_and_removed() -> None:
    streams = InMemoryStreams()
    cluster, *_ = await tree(streams)
    await register(streams, cluster, "fast")
    await register(streams, cluster, "fast")  # reported unchanged: nothing written
    assert len((await streams.load(stream_of(cluster, "fast"))).events) == 1
    await use_cases.remove_storage_class(
        RemoveStorageClass(cluster_id=cluster, name="fast", metadata=SYSTEM), streams=streams
    )
    with pytest.raises(StorageClassNotFoundError):
        await use_cases.remove_storage_class(
            RemoveStorageClass(cluster_id=cluster, name="fast", metadata=SYSTEM), streams=streams
        )
    await register(streams, cluster, "fast")  # reported again: its history goes on
    events = (await streams.load(stream_of(cluster, "fast"))).events
    assert isinstance(events[-1], StorageClassRegistered)
    assert len(events) == 3
    with pytest.raises(InvalidStorageClassError):
        await register(streams, cluster, "Fast_Disks")


async def test_the_cluster_s_agent_reports_its_classes_whole() -> None:
    streams = InMemoryStreams()
    cluster, *_ = await tree(streams)
    plain, default = StorageClassSpec(is_default=False), StorageClassSpec(is_default=True)
    await report_storage_classes(
        cluster, {"fast": plain, "slow": plain}, streams=streams, holders=streams.holders_in
    )
    await report_storage_classes(
        cluster, {"fast": default}, streams=streams, holders=streams.holders_in
    )
    await report_storage_classes(  # unchanged, and 'slow' gone already: nothing written
        cluster, {"fast": default}, streams=streams, holders=streams.holders_in
    )
    fast = (await streams.load(stream_of(cluster, "fast"))).events
    slow = (await streams.load(stream_of(cluster, "slow"))).events
    assert [e.spec for e in fast if isinstance(e, StorageClassRegistered)] == [plain, default]
    assert len(fast) == 2
    assert [type(e).__name__ for e in slow] == ["StorageClassRegistered", "StorageClassRemoved"]


async def test_one_configuration_per_class_patched_into_its_parts() -> None:
    streams = InMemoryStreams()
    cluster, *_ = await tree(streams)
    configuration = await configure(streams, cluster, "fast", FAST)
    with pytest.raises(NameTakenError):
        await configure(streams, cluster, "fast", FAST)
    patch = rules(
        customization={"claimSize": {"max": "20Gi"}}, permissions={"allowDataSharing": True}
    )
    patched = await use_cases.update_configuration(
        UpdateStorageClassConfiguration(
            configuration_id=configuration, rules=patch, whole=False, metadata=SYSTEM
        ),
        streams=streams,
    )
    custom = patched.state.rules.customization
    assert custom is not None
    assert custom.claim_size is not None
    assert (custom.claim_size.min, custom.claim_size.max) == ("1Gi", "20Gi")
    assert patched.state.rules.permissions == msgspec.convert(
        {"allowedForEphemeralVolumes": False, "allowDataSharing": True},
        type(patched.state.rules.permissions),
    )
    with pytest.raises(InvalidConfigurationError) as refused:
        await configure(
            streams,
            cluster,
            "slow",
            rules(customization={"claimSize": {"min": "2Gi", "max": "1Gi"}}),
        )
    assert refused.value.field == "/customization/claimSize/min"
    with pytest.raises(InvalidConfigurationError) as refused:
        await configure(
            streams,
            cluster,
            "slow",
            rules(
                customization={
                    "accessMode": {"supportedValues": RWO_ONLY, "default": {"readWriteMany": True}}
                }
            ),
        )
    assert refused.value.field == "/customization/accessMode/default/readWriteMany"


async def test_a_template_s_new_volume_is_held_to_its_class_and_given_its_defaults() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    # No class registered: any name is taken, though a configured one is held to its rules.
    await template(streams, llm, with_volume(claimInfo={"storageClass": "other", "size": "1T"}))
    await configure(streams, cluster, "fast", FAST)
    await register(streams, cluster, "fast")
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"size": "5Gi", "accessModes": {"readWriteMany": True}},
            "claimInfo/accessModes/readWriteMany",
        ),
        ({"size": "100Gi"}, "claimInfo/size"),
        ({"size": "5G"}, "claimInfo/size"),  # units other than GiB
        ({"size": "5Gi", "volumeMode": "Block"}, "claimInfo/volumeMode"),
        ({"size": "5Gi", "storageClass": "slow"}, "claimInfo/storageClass"),
    ]
    for claim, field in cases:
        with pytest.raises(InvalidTemplateError) as refused:
            await template(streams, llm, with_volume(claimInfo={"storageClass": "fast", **claim}))
        assert refused.value.field == f"/spec/storage/pvc/0/{field}"
    with pytest.raises(InvalidTemplateError) as refused:
        await template(
            streams, llm, with_volume(claimInfo={"storageClass": "fast"}, ephemeral=True)
        )
    assert refused.value.field == "/spec/storage/pvc/0/ephemeral"
    made = await template(streams, llm, with_volume(claimInfo={"storageClass": "fast"}))
    assert made.spec.storage is not None
    assert made.spec.storage.pvc is not None
    given = made.spec.storage.pvc[0].claim_info
    assert given is not None
    assert (given.size, given.volume_mode) == ("5Gi", "Filesystem")
    # Run:ai's none class (a volume made beforehand) and existing PVCs are no class's.
    await template(
        streams, llm, with_volume(claimInfo={"storageClass": "runai-none", "size": "1T"})
    )


def test_runnable_says_what_a_class_no_longer_allows() -> None:
    shape = with_volume(claimInfo={"storageClass": "fast", "size": "8Gi"})
    assert combine(shape, {}).runnable.is_runnable
    tight = rules(customization={"claimSize": {"max": "4Gi"}})
    facts = ClusterFacts(storage=StorageFacts(classes=frozenset({"fast"}), rules={"fast": tight}))
    runnable = combine(shape, {}, cluster=facts).runnable
    assert runnable.issue == "/spec/storage/pvc/0/claimInfo/size: 'fast' takes sizes from 0 to 4Gi"
    gone = ClusterFacts(storage=StorageFacts(classes=frozenset({"standard"})))
    runnable = combine(shape, {}, cluster=gone).runnable
    assert runnable.issue == (
        "/spec/storage/pvc/0/claimInfo/storageClass: the cluster has no storage class 'fast'"
    )


def test_an_asset_s_volume_asks_its_class_s_assets_permission() -> None:
    volume = msgspec.convert(
        {"name": "v", "existingPvc": False, "claimInfo": {"storageClass": "fast", "size": "2Gi"}},
        PvcVolume,
    )
    facts = StorageFacts(rules={"fast": rules(permissions={"allowedForAssets": False})})
    _, issues = storage_rules.volume_checked(volume, "/spec", facts, "asset")
    assert [field for field, _ in issues] == ["/spec/claimInfo/storageClass"]
    _, issues = storage_rules.volume_checked(volume, "/spec", facts, "workload")
    assert issues == []
