"""The "Load from existing" pane's summaries: an environment's image and framework, a compute
resource's GPUs, CPU and memory, as a person reads them."""

from datetime import UTC, datetime
from uuid import uuid4

from domain.specs import ComputeSpec, EnvironmentSpec, WorkloadSupportedTypes
from domain.values import AssetMeta
from infra.console.asset_pane import compute_summary, environment_summary
from projections.asset_catalogue import AssetRow, CatalogueSpec


def asset_row(kind: str, spec: CatalogueSpec, meta: AssetMeta | None = None) -> AssetRow:
    now = datetime.now(UTC)
    return AssetRow(
        asset_id=uuid4(),
        kind=kind,
        meta=meta or AssetMeta(name="a", scope="tenant"),
        spec=spec,
        created_at=now,
        created_by="someone",
        updated_at=now,
        updated_by="someone",
        version=1,
    )


def test_an_environment_is_summed_up_by_its_image_and_framework() -> None:
    kinds = WorkloadSupportedTypes(distributed=True, dist_framework="PyTorch")
    meta = AssetMeta(name="pt", scope="tenant", workload_supported_types=kinds)
    row = asset_row("environment", EnvironmentSpec(image="pytorch/pytorch:2.5"), meta)
    assert environment_summary(row) == "Image pytorch/pytorch:2.5 · Framework PyTorch"
    assert environment_summary(asset_row("environment", EnvironmentSpec())) == (
        "Image no image · Framework any"
    )


def test_a_compute_resource_is_summed_up_by_its_gpus_cpu_and_memory() -> None:
    whole = ComputeSpec(gpu_devices_request=2, cpu_core_request=2.0, cpu_core_limit=4.5)
    assert (
        compute_summary(asset_row("compute", whole)) == "GPU devices per pod 2 · CPU 2 to 4.5 cores"
    )
    portion = ComputeSpec(
        gpu_devices_request=1,
        gpu_request_type="portion",
        gpu_portion_request=0.5,
        cpu_memory_request="2G",
        cpu_memory_limit="4G",
    )
    assert compute_summary(asset_row("compute", portion)) == (
        "GPU devices per pod 1 (portion 0.5 each) · Memory 2G to 4G"
    )
    assert compute_summary(asset_row("compute", ComputeSpec())) == "GPU devices per pod 0"
