"""Asset rules that relate fields: each refusal names its field."""

from uuid import uuid4

import msgspec
import pytest

from domain import assets, quantities
from domain.assets import InvalidAssetError
from domain.data_sources import InvalidDataSourceError
from domain.specs import ClaimInfo, ComputeSpec, EnvironmentSpec, PvcSpec, WorkloadSupportedTypes
from domain.values import AssetMeta

META = AssetMeta(name="pytorch", scope="tenant")
IMAGE = {"image": "nvcr.io/nvidia/pytorch:24.05-py3"}


def environment(**fields: object) -> EnvironmentSpec:
    return msgspec.convert({**IMAGE, **fields}, EnvironmentSpec)


def refusal(meta: AssetMeta, spec: EnvironmentSpec | ComputeSpec) -> str:
    with pytest.raises(InvalidAssetError) as caught:
        assets.create(None, uuid4(), meta, spec)
    return str(caught.value.field)


@pytest.mark.parametrize(
    ("fields", "pointer"),
    [
        ({"image": ""}, "/spec/image"),
        ({"environmentVariables": [{"name": "A"}]}, "/spec/environmentVariables/0"),
        (
            {"environmentVariables": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]},
            "/spec/environmentVariables/1/name",
        ),
        (
            {
                "environmentVariables": [
                    {"name": "A", "value": "1", "configMap": {"name": "cm", "key": "k"}}
                ]
            },
            "/spec/environmentVariables/0",
        ),
        ({"runAsUid": 1000}, "/spec/runAsUid"),
        ({"uidGidSource": "custom", "runAsUid": 1000}, "/spec/runAsGid"),
        (
            {"uidGidSource": "custom", "runAsUid": 1, "runAsGid": 1, "supplementalGroups": "a,b"},
            "/spec/supplementalGroups",
        ),
        (
            {"uidGidSource": "custom", "runAsUid": -1, "runAsGid": 1},
            "/spec/runAsUid",
        ),
        (
            {
                "uidGidSource": "custom",
                "runAsUid": 1,
                "runAsGid": 1,
                "supplementalGroups": "3000000000",
            },
            "/spec/supplementalGroups",
        ),
        (
            {
                "uidGidSource": "custom",
                "runAsUid": 1,
                "runAsGid": 1,
                "supplementalGroups": "5," + "9" * 5000,
            },
            "/spec/supplementalGroups",
        ),
        ({"seccompProfileType": "Localhost"}, "/spec/seccompProfileType"),
        ({"tty": True}, "/spec/tty"),
        (
            {"connections": [{"name": "c", "isExternal": True}]},
            "/spec/connections/0",
        ),
        (
            {
                "connections": [
                    {
                        "name": "tb",
                        "internalToolInfo": {
                            "toolType": "tensorboard",
                            "connectionType": "LoadBalancer",
                            "containerPort": 6006,
                            "nodePortInfo": {"isCustomPort": True},
                        },
                    }
                ]
            },
            "/spec/connections/0/internalToolInfo/nodePortInfo",
        ),
    ],
)
def test_environment_rules(fields: dict[str, object], pointer: str) -> None:
    assert refusal(META, environment(**fields)) == pointer


def test_a_distributed_environment_names_its_framework() -> None:
    distributed = WorkloadSupportedTypes(distributed=True)
    meta = msgspec.structs.replace(META, workload_supported_types=distributed)
    assert refusal(meta, environment()) == "/meta/workloadSupportedTypes/distFramework"
    framework_only = WorkloadSupportedTypes(dist_framework="PyTorch")
    meta = msgspec.structs.replace(META, workload_supported_types=framework_only)
    assert refusal(meta, environment()) == "/meta/workloadSupportedTypes/distFramework"


@pytest.mark.parametrize(
    ("fields", "pointer"),
    [
        ({"gpuDevicesRequest": 1, "gpuRequestType": "portion"}, "/spec/gpuPortionRequest"),
        ({"gpuDevicesRequest": 1, "gpuPortionRequest": 0.5}, "/spec/gpuRequestType"),
        (
            {"gpuDevicesRequest": 2, "gpuRequestType": "memory", "gpuMemoryRequest": "10G"},
            "/spec/gpuDevicesRequest",
        ),
        (
            {"gpuDevicesRequest": 0, "gpuRequestType": "portion", "gpuPortionRequest": 0.5},
            "/spec/gpuDevicesRequest",
        ),
        (
            {
                "gpuDevicesRequest": 1,
                "gpuRequestType": "portion",
                "gpuPortionRequest": 0.5,
                "gpuPortionLimit": 0.25,
            },
            "/spec/gpuPortionLimit",
        ),
        ({"cpuCoreRequest": 4, "cpuCoreLimit": 2}, "/spec/cpuCoreLimit"),
        ({"cpuMemoryRequest": "2Gi", "cpuMemoryLimit": "2G"}, "/spec/cpuMemoryLimit"),
        ({"cpuMemoryRequest": "1.2.3"}, "/spec/cpuMemoryRequest"),
        ({"cpuMemoryRequest": "1e99999999", "cpuMemoryLimit": "1"}, "/spec/cpuMemoryRequest"),
        (
            {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0},
            "/spec/gpuPortionRequest",
        ),
        (
            {"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "0"},
            "/spec/gpuMemoryRequest",
        ),
        ({"extendedResources": [{"resource": "rdma/hca"}]}, "/spec/extendedResources/0/quantity"),
    ],
)
def test_compute_rules(fields: dict[str, object], pointer: str) -> None:
    meta = AssetMeta(name="gpu", scope="tenant")
    assert refusal(meta, msgspec.convert(fields, ComputeSpec)) == pointer


def test_limits_may_equal_or_exceed_requests_across_units() -> None:
    spec = msgspec.convert(
        {"cpuMemoryRequest": "1G", "cpuMemoryLimit": "1Gi", "cpuCoreRequest": 0.5}, ComputeSpec
    )
    assert assets.create(None, uuid4(), AssetMeta(name="c", scope="tenant"), spec)


def test_quantities_parse_with_binary_decimal_and_exponent_suffixes() -> None:
    assert quantities.parse("1Gi") == 2**30
    assert quantities.parse("500m") * 2 == 1
    assert quantities.parse("1e3") == 1000
    with pytest.raises(quantities.InvalidQuantityError):
        quantities.parse("12XB")
    for beyond in ("1e99999999", "1E" + "9" * 5000):  # no decimal holds these
        with pytest.raises(quantities.InvalidQuantityError):
            quantities.parse(beyond)


def test_update_changes_only_what_differs_and_delete_twice_is_a_no_op() -> None:
    asset_id = uuid4()
    state = assets.fold(assets.create(None, asset_id, META, environment()))
    same = assets.update(state, asset_id, name="pytorch", description=None, spec=environment())
    assert same == []
    deleted = assets.fold(
        [
            *assets.create(None, asset_id, META, environment()),
            *assets.delete(state, "environment", asset_id),
        ]
    )
    assert deleted is not None
    assert deleted.deleted
    assert assets.delete(deleted, "environment", asset_id) == []


def test_a_custom_uid_and_gid_are_given_with_a_custom_source() -> None:
    custom = environment(uidGidSource="custom", runAsUid=1000, runAsGid=100)
    assert assets.create(None, uuid4(), META, custom)


def test_ids_fractions_and_extended_resources_within_their_ranges_are_accepted() -> None:
    custom = environment(
        uidGidSource="custom", runAsUid=0, runAsGid=2**31 - 1, supplementalGroups="0,2147483647"
    )
    assert assets.create(None, uuid4(), META, custom)
    compute = msgspec.convert(
        {
            "gpuDevicesRequest": 1,
            "gpuRequestType": "portion",
            "gpuPortionRequest": 0.01,
            "extendedResources": [{"resource": "rdma/hca", "quantity": "1"}],
        },
        ComputeSpec,
    )
    assert assets.create(None, uuid4(), AssetMeta(name="slice", scope="tenant"), compute)


@pytest.mark.parametrize(("size", "accepted"), [("1Mi", True), ("0", False), ("0.0Gi", False)])
def test_a_new_pvc_data_source_claims_some_storage(size: str, accepted: bool) -> None:
    spec = PvcSpec(path="/data", claim_info=ClaimInfo(size=size))
    meta = AssetMeta(name="scratch", scope="tenant")
    if accepted:
        assert assets.create(None, uuid4(), meta, spec)
        return
    with pytest.raises(InvalidDataSourceError) as refused:
        assets.create(None, uuid4(), meta, spec)
    assert refused.value.field == "/spec/claimInfo/size"
