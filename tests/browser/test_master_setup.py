"""A master of its own has the workers' fields where the master's spec has them: its
environment (variables included), compute resources, tolerations, data & storage and
annotations; not the workload-wide ones, which the workers' spec governs for both. The master's
refusal is named next to the master's field; the edit form keeps what the master has. The
master loads an environment or compute resource as the workers do, linked or used without
linking."""

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import fill, journey, refused_next_to, sign_in
from tests.browser.template_steps import (
    compute_resource,
    created,
    entry,
    new_template,
    own_settings,
    project,
    pytorch_environment,
)
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

MASTER: dict[str, Any] = {
    "image": "python:3.12-slim",
    "environmentVariables": [{"name": "ROLE", "configMap": {"name": "roles", "key": "master"}}],
    "workingDir": "/srv",
    "compute": {
        "cpuCoreRequest": 1.0,
        "extendedResources": [{"resource": "example.com/fpga", "quantity": "1"}],
    },
    "tolerations": [{"key": "example.com/master", "operator": "Exists", "effect": "NoSchedule"}],
    "storage": {"emptyDirVolume": [{"path": "/scratch", "sizeLimit": "1G"}]},
    "annotations": [{"name": "example.com/role", "value": "master"}],
}


def test_a_master_of_its_own_has_the_workers_fields(service: Service) -> None:
    with new_template(
        service, "master-setup", "master-vision", "master-ddp", configuration="Workers & master"
    ) as j:
        page = j.page
        page.get_by_label("Different setup for the master").check()
        master = page.locator("#master-setup")
        expect(master.get_by_label("Backoff limit")).to_have_count(0)  # the workers' for both
        expect(master.get_by_label("Workload priority")).to_have_count(0)
        fill(master, {"Image URL": "python:3.12-slim", "Working directory": "/srv"})
        variable = master.get_by_role("group", name="Environment variable 1")
        variable.get_by_label("Environment variable name").fill("ROLE")
        variable.get_by_label("Environment variable source").select_option(label="ConfigMap")
        fill(variable, {"ConfigMap name": "roles", "ConfigMap key": "master"})
        fill(master, {"CPU compute request (cores)": "1", "Extended resource": "example.com/fpga"})
        master.get_by_label("Quantity").fill("-1")
        toleration = master.get_by_role("group", name="Toleration 1")
        toleration.get_by_label("Toleration key").fill("example.com/master")
        toleration.get_by_label("Toleration operator").select_option("Exists")
        toleration.get_by_label("Toleration effect").select_option("NoSchedule")
        fill(master, {"EmptyDir size": "1G", "EmptyDir container path": "/scratch"})
        annotations = master.get_by_role("group", name="Annotation and label 1")
        fill(annotations, {"Annotation name": "example.com/role", "Annotation value": "master"})
        j.step("the master's own environment, compute, toleration, storage and annotation")

        page.get_by_role("button", name="Create template").click()
        quantity = refused_next_to(
            page, "f-master-spec-compute-extendedResources-0-quantity", "quantity"
        )
        assert entry(service, "master-ddp") == {}  # nothing was written
        j.step("the master's quantity refused next to it")

        quantity.fill("1")
        made = created(j, service, "master-ddp")
        assert made["masterSpecSameAsWorker"] is False
        assert made["master"]["spec"] == MASTER
        combined = made["combinedMasterSpec"]
        assert combined["environmentVariables"] == MASTER["environmentVariables"]
        assert combined["storage"] == MASTER["storage"]

        page.goto(f"{service.url}/console/templates/{made['meta']['id']}/edit")
        expect(page.locator("#f-master-spec-workingDir")).to_have_value("/srv")
        expect(page.locator("#f-master-spec-environmentVariables-0-source")).to_have_value(
            "configMap"
        )
        j.step("the edit form shows the master's own")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="master-ddp", exact=True)).to_be_visible()

    assert entry(service, "master-ddp")["master"]["spec"] == MASTER  # saved unchanged


def test_the_master_uses_an_environment_and_a_compute_resource_without_linking(
    service: Service,
) -> None:
    """The master's "Load from existing", as the workers': its side pane from the keyboard and
    its select, each with "Use it without linking", copy the asset's values into the master's
    own fields, editable, and nothing is linked to the master."""
    made = int(project(service, "master-copy")["id"])
    pytorch_environment(
        service,
        made,
        "copy-env",
        {
            "image": "pytorch/pytorch:2.5",
            "workingDir": "/work",
            "environmentVariables": [{"name": f"V{i}", "value": str(i)} for i in range(3)],
        },
    )
    compute_resource(
        service,
        made,
        "copy-gpu",
        {
            "cpuCoreRequest": 2,
            "extendedResources": [{"resource": "example.com/fpga", "quantity": "2"}],
        },
    )
    with journey("master-copy") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        own_settings(page, service.url, "master-copy", "copy-ddp", "Workers & master")
        page.get_by_label("Different setup for the master").check()
        master = page.locator("#master-setup")

        page.locator("#master-environment-pane-opener").focus()
        page.keyboard.press("Enter")
        pane = page.get_by_role("dialog", name="Environments this scope can use, for the master")
        expect(pane).to_be_visible()
        item = pane.get_by_role("listitem").filter(has_text="copy-env")
        j.step("the master's environments pane, open", full_page=False)
        item.get_by_role("button", name="Use without linking").press("Enter")
        expect(pane).to_be_hidden()
        expect(page.locator("#master-environment-pane-opener")).to_be_focused()
        image = page.locator("#f-master-spec-image")
        expect(image).to_have_value("pytorch/pytorch:2.5")
        expect(image).to_be_editable()  # the master's own
        for i in range(3):
            expect(page.locator(f"#f-master-spec-environmentVariables-{i}-name")).to_have_value(
                f"V{i}"
            )
        expect(master.get_by_role("combobox", name="Master environment")).to_have_value("")
        expect(page.locator("#f-spec-image")).to_have_value("python:3.12")  # not the workers'
        page.locator("#f-master-spec-environmentVariables-2-value").fill("master-only")
        j.step("the master's environment used without linking, a variable changed")

        computes = master.get_by_role("combobox", name="Master compute resource")
        computes.select_option(label="copy-gpu")
        uses = master.get_by_role("group", name="Link the master's compute resource?")
        uses.get_by_label("Use it without linking").check()
        page.get_by_label("Number of workers").fill("two")
        page.get_by_role("button", name="Create template").click()
        workers = refused_next_to(page, "f-spec-numWorkers", "int")
        # Refused: the compute resource is still chosen, to be used without linking.
        expect(computes).to_have_value(re.compile(".+"))
        expect(uses.get_by_label("Use it without linking")).to_be_checked()
        j.step("refused, the master's compute resource still chosen without linking")
        workers.fill("2")
        page.get_by_role("button", name="Load master compute resource").click()
        cpu = page.locator("#f-master-spec-compute-cpuCoreRequest")
        expect(cpu).to_have_value("2")
        expect(cpu).to_be_editable()
        expect(page.locator("#f-master-spec-compute-extendedResources-0-resource")).to_have_value(
            "example.com/fpga"
        )
        expect(page.locator("#f-master-spec-environmentVariables-2-value")).to_have_value(
            "master-only"
        )  # what was changed stays
        cpu.fill("3")
        j.step("the master's compute resource used without linking, its CPU changed")

        template = created(j, service, "copy-ddp")
        spec = template["master"]["spec"]
        assert not (template["master"].get("assets") or {}).get("environment")
        assert not (template["master"].get("assets") or {}).get("compute")
        assert (spec["image"], spec["workingDir"]) == ("pytorch/pytorch:2.5", "/work")
        assert spec["environmentVariables"] == [
            {"name": "V0", "value": "0"},
            {"name": "V1", "value": "1"},
            {"name": "V2", "value": "master-only"},
        ]
        assert spec["compute"]["cpuCoreRequest"] == 3
        assert spec["compute"]["extendedResources"] == [
            {"resource": "example.com/fpga", "quantity": "2"}
        ]
        assert "environmentVariables" not in template["spec"]  # the workers' own is untouched

        page.goto(f"{service.url}/console/templates/{template['meta']['id']}/edit")
        expect(page.locator("#f-master-spec-environmentVariables-2-value")).to_have_value(
            "master-only"
        )
        expect(page.locator("#f-master-spec-compute-cpuCoreRequest")).to_be_editable()
        j.step("the edit form shows the master's copied values as its own")
