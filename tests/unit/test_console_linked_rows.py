"""A linked environment's or compute resource's lists have a row for every item, shown
read-only as that asset's (the workers' and a master of its own alike), and none of them is
sent as the template's own; the master, like the workers, may use an asset without linking it,
its values copied into the master's own fields."""

from typing import Any

from domain.specs import (
    ComputeSpec,
    Connection,
    EnvironmentSpec,
    EnvironmentVariable,
    ExtendedResource,
    InternalToolInfo,
)
from infra.console.form_document import build
from infra.console.form_rows import LISTS, rows_in
from infra.console.form_state import (
    Form,
    all_fields,
    copied_values,
    linked_values,
    load_into,
    sections_of,
    show_linked,
)
from tests.unit.test_console_asset_pane import asset_row

ENVIRONMENT = asset_row(
    "environment",
    EnvironmentSpec(
        image="python:3.12",
        environment_variables=tuple(
            EnvironmentVariable(name=f"V{i}", value=str(i)) for i in range(5)
        ),
        connections=tuple(
            Connection(
                name=f"port-{i}",
                internal_tool_info=InternalToolInfo(
                    tool_type="custom", connection_type="NodePort", container_port=8000 + i
                ),
            )
            for i in range(3)
        ),
    ),
)
COMPUTE = asset_row(
    "compute",
    ComputeSpec(
        cpu_core_request=1,
        extended_resources=tuple(
            ExtendedResource(resource=f"example.com/r{i}", quantity="1") for i in range(3)
        ),
    ),
)
ROWS = {str(r.asset_id): r for r in (ENVIRONMENT, COMPUTE)}


def test_a_linked_list_has_a_row_for_each_item_and_the_form_s_own_keep_theirs() -> None:
    linked = {
        "/spec/environmentVariables/3/name": "V3",
        "/spec/ports/2/container": "8002",
        "/master/spec/compute/extendedResources/2/resource": "example.com/r2",
    }
    rows = rows_in({}, linked)
    assert rows["/spec/environmentVariables"] == 4  # no blank rows beyond a linked list's
    assert rows["/spec/ports"] == 3
    assert rows["/master/spec/compute/extendedResources"] == 3
    assert rows["/spec/tolerations"] == LISTS["/spec/tolerations"]  # no asset's: as before
    # More of the form's own (filled, then the blank ones) than the asset has: the form's.
    own = rows_in({"/spec/environmentVariables/4/name": "MINE"}, linked)
    assert own["/spec/environmentVariables"] == 5 + LISTS["/spec/environmentVariables"]
    # Nothing linked: as the form's own values alone count them.
    assert rows_in({"/spec/ports/0/container": "1"}) == rows_in(
        {"/spec/ports/0/container": "1"}, {}
    )


def _linked(at: str, differ: bool) -> tuple[Form, list[Any]]:
    values = {
        f"{at}/assets/environment": str(ENVIRONMENT.asset_id),
        f"{at}/assets/compute": str(COMPUTE.asset_id),
        "/meta/name": "ddp",
        **({"/differentMaster": "true"} if differ else {}),
    }
    fields = all_fields(sections_of((), False, rows_in(values, linked_values(values, ROWS))))
    form = Form(step=2, values=values)
    show_linked(form, ROWS)
    return form, fields


def test_every_item_of_a_linked_asset_s_lists_is_shown_as_that_asset_s() -> None:
    for at in ("", "/master"):
        form, fields = _linked(at, differ=bool(at))
        shown = {f.pointer for f in fields}
        spec = f"{at}/spec"
        for i in range(5):
            assert form.linked[f"{spec}/environmentVariables/{i}/name"] == f"V{i}"
            assert form.linked[f"{spec}/environmentVariables/{i}/source"] == "Custom"
        assert f"{spec}/environmentVariables/4/value" in shown
        assert f"{spec}/environmentVariables/5/value" not in shown
        for i in range(3):
            assert form.linked[f"{spec}/ports/{i}/container"] == 8000 + i
            assert form.linked[f"{spec}/compute/extendedResources/{i}/resource"] == (
                f"example.com/r{i}"
            )
            assert f"{spec}/ports/{i}/container" in shown
            assert f"{spec}/compute/extendedResources/{i}/quantity" in shown
        assert form.linked_from[spec] == ENVIRONMENT.meta.name
        assert form.linked_from[f"{spec}/compute"] == COMPUTE.meta.name


def test_a_linked_asset_s_items_are_not_sent_as_the_template_s_own() -> None:
    for at in ("", "/master"):
        form, fields = _linked(at, differ=True)
        body = build(fields, form.values).body  # the linked rows' inputs have no name
        spec = body["master"].get("spec", {}) if at else body["spec"]
        assert "environmentVariables" not in spec
        assert "compute" not in spec
        assets = body["master"]["assets"] if at else body["assets"]
        assert assets["environment"] == str(ENVIRONMENT.asset_id)


def _loaded(which: str, values: dict[str, Any]) -> tuple[Form, list[Any]]:
    """LOAD `which` for a form of these values: the form, and its fields as loading left them."""
    form = Form(step=2, values={"/meta/name": "ddp", "/differentMaster": "true", **values})
    choices: dict[str, Any] = {"rows": ROWS, "sources": (), "gpu_limits": False, "sections": {}}
    load_into(form, which, choices)
    show_linked(form, ROWS)
    return form, all_fields(choices["sections"])


def test_the_master_loads_an_environment_without_linking_into_its_own_fields() -> None:
    form, fields = _loaded(
        "master-environment",
        {
            "/master/assets/environment": str(ENVIRONMENT.asset_id),
            "/master/environmentUse": "copy",
            "/master/assets/compute": str(COMPUTE.asset_id),  # stays linked
        },
    )
    assert form.values["/master/assets/environment"] == ""  # nothing linked
    assert form.values["/master/spec/environmentVariables/4/name"] == "V4"
    assert form.values["/master/spec/ports/2/container"] == "8002"
    assert "/master/spec/environmentVariables/4/name" not in form.linked  # the master's own
    assert "/spec/environmentVariables/0/name" not in form.values  # not the workers'
    shown = {f.pointer for f in fields}
    assert "/master/spec/compute/extendedResources/2/resource" in shown  # linked, every item
    assert form.linked_from["/master/spec/compute"] == COMPUTE.meta.name
    master = build(fields, form.values).body["master"]
    assert [v["name"] for v in master["spec"]["environmentVariables"]] == [
        f"V{i}" for i in range(5)
    ]
    assert master["assets"]["compute"] == str(COMPUTE.asset_id)


def test_a_master_s_compute_resource_used_without_loading_it_is_copied_and_stays_chosen() -> None:
    values = {
        "/meta/name": "ddp",
        "/differentMaster": "true",
        "/master/assets/compute": str(COMPUTE.asset_id),
        "/master/computeUse": "copy",
    }
    form = Form(step=2, values=values)
    fields = all_fields(sections_of((), False, rows_in(values)))
    copied, unlinked = copied_values(form.values, ROWS)
    assert unlinked["/master/assets/compute"] == ""  # nothing linked
    assert form.values["/master/assets/compute"] == str(COMPUTE.asset_id)  # still chosen
    assert set(copied) == {"master"}
    body = build(fields, unlinked, copied=copied).body
    extended = body["master"]["spec"]["compute"]["extendedResources"]
    assert [r["resource"] for r in extended] == [f"example.com/r{i}" for i in range(3)]
    assert "compute" not in body["spec"]
    assert not body["master"].get("assets", {}).get("compute")
