"""A compute resource's form: the spec it says (what it does not show kept, a blank extended
resource row left out) and a refusal's pointer back at the row it came from."""

from domain.specs import ComputeSpec, ExtendedResource
from infra.console.compute_form import field_of, spec_groups, spec_of, values_of


def _fields(values: dict[str, str], gpu_limits: bool = False) -> tuple:  # type: ignore[type-arg]
    return tuple(f for _, fs in spec_groups(gpu_limits, values) for f in fs)


def test_an_edit_keeps_what_the_form_does_not_show_and_clears_what_it_left_empty() -> None:
    current = {
        "gpuPortionLimit": 0.5,
        "cpuCoreRequest": 1.0,
        "cpuMemoryRequest": "1G",
        "extendedResources": [{"resource": "a"}, {"resource": "b", "exclude": True}],
    }
    values = {
        "/spec/compute/cpuCoreRequest": "4",
        "/spec/compute/extendedResources/0/resource": "",
        "/spec/compute/extendedResources/1/resource": "example.com/fpga",
        "/spec/compute/extendedResources/1/quantity": "2",
    }
    spec, rows = spec_of(values, _fields(values), current)

    assert spec == {
        "gpuPortionLimit": 0.5,  # GPU limits are off for the tenant: not shown, kept
        "cpuCoreRequest": "4",
        "extendedResources": [
            {"resource": "example.com/fpga", "quantity": "2", "exclude": True}  # row 1's
        ],
    }
    assert rows == [1]
    known = {f.pointer for f in _fields(values)}
    assert field_of("/spec/extendedResources/0/quantity", known, rows) == (
        "/spec/compute/extendedResources/1/quantity"
    )
    assert field_of("/spec/cpuCoreRequest", known, rows) == "/spec/compute/cpuCoreRequest"
    assert field_of("/meta/projectId", known | {"/scope"}, rows) == "/scope"


def test_a_compute_resource_reads_back_as_a_person_wrote_it() -> None:
    spec = ComputeSpec(
        cpu_core_request=2.0,
        large_shm_request=True,
        extended_resources=(ExtendedResource(resource="example.com/fpga", quantity="1"),),
    )
    values = values_of(spec)

    assert values["/spec/compute/cpuCoreRequest"] == "2"
    assert values["/spec/compute/largeShmRequest"] == "True"
    assert values["/spec/compute/extendedResources/0/resource"] == "example.com/fpga"
    pointers = {f.pointer for f in _fields(values)}
    assert "/spec/compute/extendedResources/1/resource" in pointers  # a blank row for adding
    assert "/spec/compute/gpuPortionLimit" not in pointers
    assert "/spec/compute/gpuPortionLimit" in {f.pointer for f in _fields(values, True)}
