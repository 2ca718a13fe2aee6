"""The data volume rules: what a creation takes, sharing within the cluster, where a data
volume is usable, and the events each decision makes."""

from uuid import UUID, uuid4

import pytest

from domain import data_volumes
from domain.assets import AssetNotFoundError, InvalidAssetError
from domain.data_volumes import DataVolume
from domain.events import DataVolumeShared, DataVolumeUnshared, DataVolumeUpdated
from domain.specs import DataVolumeSpec, SharedScope
from domain.values import TENANT, AssetMeta, ScopeRef

CLUSTER = UUID("3c9f1e2a-6b4d-4f8e-a1c7-5d2e0b9f4a6c")
META = AssetMeta(
    name="corpus", scope="project", cluster_id=CLUSTER, department_id="2", project_id=3
)
SPEC = DataVolumeSpec(origin_pvc_name="pvc-a")
CLUSTER_REF = ScopeRef("cluster", str(CLUSTER))
DEPARTMENT = SharedScope(scope_type="department", scope_id="2")
OTHER_PROJECT = SharedScope(scope_type="project", scope_id="4")
# Lineages of scopes of the same cluster, and of another.
IN_DEPARTMENT = (ScopeRef("department", "2"), CLUSTER_REF, TENANT)
IN_OTHER = (ScopeRef("project", "4"), ScopeRef("department", "2"), CLUSTER_REF, TENANT)
ELSEWHERE = (ScopeRef("cluster", str(uuid4())), TENANT)


def made(volume_id: UUID) -> DataVolume:
    state = data_volumes.fold(data_volumes.create(None, volume_id, META, SPEC))
    assert state is not None
    return state


def test_a_creation_takes_run_ais_rules_and_names_the_field() -> None:
    volume_id = uuid4()
    for meta, spec, kw, field in [
        (AssetMeta(name="Corpus", scope="project", cluster_id=CLUSTER, project_id=3), SPEC, {},
         "/name"),
        (AssetMeta(name="corpus\n", scope="project", cluster_id=CLUSTER, project_id=3), SPEC, {},
         "/name"),
        (AssetMeta(name="corpus", scope="department", cluster_id=CLUSTER, department_id="2"),
         SPEC, {}, "/projectId"),
        (META, DataVolumeSpec(origin_pvc_name="PVC_A"), {}, "/originPvcName"),
        (META, DataVolumeSpec(origin_pvc_name="pvc-a\n"), {}, "/originPvcName"),
        (META, SPEC, {"should_delete_original_volume": True}, "/shouldDeleteOriginalVolume"),
        (META, DataVolumeSpec(origin_pvc_name="pvc-a", use_original_volume=False), {},
         "/useOriginalVolume"),
    ]:  # fmt: skip
        with pytest.raises(InvalidAssetError) as caught:
            data_volumes.create(None, volume_id, meta, spec, **kw)
        assert caught.value.field == field
    assert made(volume_id).version == 1


def test_sharing_stays_in_the_cluster_and_writes_only_what_changes() -> None:
    volume_id = uuid4()
    state = made(volume_id)
    (event,) = data_volumes.share(state, volume_id, add=[(DEPARTMENT, IN_DEPARTMENT)], remove=[])
    assert event == DataVolumeShared(datavolume_id=volume_id, scope=DEPARTMENT)
    shared = data_volumes.evolve(state, event)
    assert data_volumes.share(shared, volume_id, add=[(DEPARTMENT, IN_DEPARTMENT)], remove=[]) == []
    assert data_volumes.share(state, volume_id, add=[], remove=[DEPARTMENT]) == []
    (gone,) = data_volumes.share(shared, volume_id, add=[], remove=[DEPARTMENT])
    assert gone == DataVolumeUnshared(datavolume_id=volume_id, scope=DEPARTMENT)
    far = SharedScope(scope_type="cluster", scope_id=ELSEWHERE[0].id)
    with pytest.raises(InvalidAssetError) as caught:
        data_volumes.share(state, volume_id, add=[(far, ELSEWHERE)], remove=[])
    assert caught.value.field == "/add/0/scopeId"
    with pytest.raises(InvalidAssetError) as caught:
        data_volumes.share(state, volume_id, add=[(DEPARTMENT, IN_DEPARTMENT)], remove=[DEPARTMENT])
    assert caught.value.field == "/add/0"


def test_a_data_volume_is_usable_where_it_lives_and_below_where_it_is_shared() -> None:
    volume_id = uuid4()
    state = made(volume_id)
    own = (ScopeRef("project", "3"), ScopeRef("department", "2"), CLUSTER_REF, TENANT)
    assert data_volumes.usable_in(state, own)
    assert not data_volumes.usable_in(state, IN_OTHER)
    assert not data_volumes.usable_in(state, IN_DEPARTMENT)  # a department template: no
    shared = data_volumes.evolve(state, DataVolumeShared(datavolume_id=volume_id, scope=DEPARTMENT))
    assert data_volumes.usable_in(shared, IN_OTHER)
    assert data_volumes.usable_in(shared, IN_DEPARTMENT)
    assert not data_volumes.usable_in(shared, (CLUSTER_REF, TENANT))
    deleted = data_volumes.fold([*data_volumes.create(None, volume_id, META, SPEC)])
    assert deleted is not None
    (event,) = data_volumes.delete(deleted, volume_id)
    assert not data_volumes.usable_in(data_volumes.evolve(deleted, event), own)


def test_describe_and_delete() -> None:
    volume_id = uuid4()
    state = made(volume_id)
    assert data_volumes.describe(state, volume_id, None) == []
    (event,) = data_volumes.describe(state, volume_id, "v2")
    assert event == DataVolumeUpdated(datavolume_id=volume_id, description="v2")
    with pytest.raises(InvalidAssetError):
        data_volumes.describe(state, volume_id, "x" * 128)
    (deleted,) = data_volumes.delete(state, volume_id)
    gone = data_volumes.evolve(state, deleted)
    assert data_volumes.delete(gone, volume_id) == []
    with pytest.raises(AssetNotFoundError):
        data_volumes.describe(gone, volume_id, "v3")
    with pytest.raises(AssetNotFoundError):
        data_volumes.delete(None, volume_id)


def test_a_shared_scopes_stamp_is_the_event_that_shared_it_last() -> None:
    volume_id = uuid4()
    events = [
        *data_volumes.create(None, volume_id, META, SPEC),
        DataVolumeShared(datavolume_id=volume_id, scope=DEPARTMENT),
        DataVolumeShared(datavolume_id=volume_id, scope=OTHER_PROJECT),
        DataVolumeUnshared(datavolume_id=volume_id, scope=DEPARTMENT),
        DataVolumeShared(datavolume_id=volume_id, scope=DEPARTMENT),
    ]
    assert data_volumes.shared_since(events) == {OTHER_PROJECT: 2, DEPARTMENT: 4}
