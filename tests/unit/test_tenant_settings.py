"""Tenant settings: defaults, changes as events, and what each one refuses."""

from uuid import UUID

import msgspec
import pytest

from domain import tenant_settings
from domain.events import EventMetadata, TenantSettingChanged
from domain.template_specs import DistributedTemplateSpec
from domain.tenant_settings import (
    DEFAULTS,
    MAX_WORKERS,
    FeatureDisabledError,
    InvalidSettingValueError,
    LimitExceededError,
    UnknownSettingError,
)
from services.tenant_settings import change_settings
from tests.fakes import InMemoryStreams

CLUSTER = UUID("71f69d83-ba66-4822-adf5-55ce55efd210")


def test_defaults_follow_run_ai() -> None:
    assert DEFAULTS.get("workloads.flexibleTemplates") is True
    assert DEFAULTS.get("workloads.flexibleWorkloadSubmission") is True
    assert DEFAULTS.get("workloads.ngcCatalog") is False
    assert DEFAULTS.get("workloads.dataVolumes") is True
    assert DEFAULTS.get("resources.gpuResourceOptimization") is False
    assert DEFAULTS.allows_framework("MPI", CLUSTER)


def test_a_change_is_an_event_and_repeating_it_is_none() -> None:
    (event,) = tenant_settings.change(DEFAULTS, "workloads.dataVolumes", False)
    assert (event.key, event.value) == ("workloads.dataVolumes", False)
    after = tenant_settings.fold([event])
    assert tenant_settings.change(after, "workloads.dataVolumes", False) == []
    key = f"clusters.{CLUSTER}.distributedFrameworks.JAX"
    assert tenant_settings.change(after, key, False)
    for bad in ("workloads.nothing", "clusters.not-a-uuid.distributedFrameworks.JAX",
                f"clusters.{CLUSTER}.distributedFrameworks.Paddle"):  # fmt: skip
        with pytest.raises(UnknownSettingError):
            tenant_settings.change(DEFAULTS, bad, True)


def test_each_setting_refuses_what_it_governs_naming_the_field() -> None:
    spec = msgspec.convert(
        {"compute": {"gpuPortionRequest": 0.5, "gpuPortionLimit": 1.0},
         "storage": {"dataVolume": [{"id": str(CLUSTER), "mountPath": "/d"}]}},
        DistributedTemplateSpec,
    )  # fmt: skip
    with pytest.raises(FeatureDisabledError) as caught:
        tenant_settings.check_replica(DEFAULTS, "/spec", spec)
    assert caught.value.field == "/spec/compute/gpuPortionLimit"
    gpu_on = tenant_settings.fold(
        [TenantSettingChanged(key="resources.gpuResourceOptimization", value=True)]
    )
    tenant_settings.check_replica(gpu_on, "/spec", spec)
    volumes_off = tenant_settings.TenantSettings(
        {"resources.gpuResourceOptimization": True, "workloads.dataVolumes": False}
    )
    with pytest.raises(FeatureDisabledError) as caught:
        tenant_settings.check_replica(volumes_off, "/master/spec", spec)
    assert caught.value.field == "/master/spec/storage/dataVolume"


def test_a_framework_can_be_turned_off_everywhere_or_on_one_cluster() -> None:
    other = UUID(int=7)
    on_cluster = tenant_settings.TenantSettings(
        {f"clusters.{CLUSTER}.distributedFrameworks.TF": False}
    )
    with pytest.raises(FeatureDisabledError) as caught:
        tenant_settings.check_framework(on_cluster, "/spec/distributedFramework", "TF", CLUSTER)
    assert caught.value.setting == f"clusters.{CLUSTER}.distributedFrameworks.TF"
    tenant_settings.check_framework(on_cluster, "/x", "TF", other)
    tenant_settings.check_framework(on_cluster, "/x", "TF", None)
    everywhere = tenant_settings.TenantSettings({"workloads.distributedFrameworks.TF": False})
    with pytest.raises(FeatureDisabledError) as caught:
        tenant_settings.check_framework(everywhere, "/x", "TF", None)
    assert caught.value.setting == "workloads.distributedFrameworks.TF"


def test_the_ngc_catalog_setting_governs_an_ngc_catalog_image_source() -> None:
    ngc = DistributedTemplateSpec(
        image="nvcr.io/nvidia/pytorch:24.05-py3", image_source="ngcCatalog"
    )
    with pytest.raises(FeatureDisabledError) as caught:
        tenant_settings.check_replica(DEFAULTS, "/spec", ngc)
    assert caught.value.field == "/spec/imageSource"
    assert caught.value.setting == "workloads.ngcCatalog"
    custom = DistributedTemplateSpec(
        image="nvcr.io/nvidia/pytorch:24.05-py3", image_source="custom"
    )
    tenant_settings.check_replica(DEFAULTS, "/spec", custom)
    on = tenant_settings.TenantSettings({"workloads.ngcCatalog": True})
    tenant_settings.check_replica(on, "/spec", ngc)


async def test_settings_changed_together_are_written_in_one_append_or_none_is() -> None:
    streams, system = InMemoryStreams(), EventMetadata(actor_subject="t", actor_kind="system")
    asked = [("workloads.dataVolumes", False), ("workloads.ngcCatalog", True)]
    with pytest.raises(UnknownSettingError):
        await change_settings(
            [*asked, ("workloads.nothing", True)], metadata=system, streams=streams
        )
    assert (await streams.load(tenant_settings.STREAM)).version == 0
    after = await change_settings(asked, metadata=system, streams=streams)
    assert (after.get("workloads.dataVolumes"), after.get("workloads.ngcCatalog")) == (False, True)
    assert (await streams.load(tenant_settings.STREAM)).version == 2
    await change_settings(asked, metadata=system, streams=streams)  # as asked already: no write
    assert (await streams.load(tenant_settings.STREAM)).version == 2


def test_the_workers_limit_is_a_number_within_run_ais_bounds() -> None:
    assert DEFAULTS.limit(MAX_WORKERS) == 1_000
    (event,) = tenant_settings.change(DEFAULTS, MAX_WORKERS, 16)
    after = tenant_settings.fold([event])
    assert after.limit(MAX_WORKERS) == 16
    assert tenant_settings.change(after, MAX_WORKERS, 16) == []
    for bad in (0, 10_001, True):
        with pytest.raises(InvalidSettingValueError):
            tenant_settings.change(DEFAULTS, MAX_WORKERS, bad)
    with pytest.raises(InvalidSettingValueError):
        tenant_settings.change(DEFAULTS, "workloads.dataVolumes", 1)
    with pytest.raises(UnknownSettingError):
        DEFAULTS.limit("workloads.dataVolumes")


def test_more_workers_than_the_limit_are_refused_naming_the_field() -> None:
    limited = tenant_settings.TenantSettings(limits={MAX_WORKERS: 16})
    tenant_settings.check_workers(limited, "/spec", DistributedTemplateSpec(num_workers=16))
    for spec, field in (
        (DistributedTemplateSpec(num_workers=17), "/spec/numWorkers"),
        (DistributedTemplateSpec(num_workers=4, max_replicas=64), "/spec/maxReplicas"),
    ):
        with pytest.raises(LimitExceededError) as caught:
            tenant_settings.check_workers(limited, "/spec", spec)
        assert (caught.value.field, caught.value.setting, caught.value.limit) == (
            field,
            MAX_WORKERS,
            16,
        )
