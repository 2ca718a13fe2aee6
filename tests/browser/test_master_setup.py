"""A master of its own has the workers' fields where the master's spec has them: its
environment (variables included), compute resources, tolerations, data & storage and
annotations; not the workload-wide ones, which the workers' spec governs for both. The master's
refusal is named next to the master's field; the edit form keeps what the master has."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Service
from tests.browser.journey import fill, refused_next_to
from tests.browser.template_steps import created, entry, new_template

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
