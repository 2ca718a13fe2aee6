"""The new-template form, as the guide walks it: a template that links an environment and a
compute resource, loads a data source with its container path overridden and has a master of
its own, seen in the grid and on its page with the linked fields read-only; and a custom port
the domain refuses, shown next to that field with nothing written."""

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _assets(service: Service) -> str:
    cluster = service.made("/api/v1/clusters", {"name": "form-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "form-vision", "clusterId": cluster["uuid"]}
    )
    meta: dict[str, Any] = {"scope": "project", "projectId": int(project["id"])}
    service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                **meta,
                "name": "form-pytorch",
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": {"image": "pytorch/pytorch:2.5", "command": "torchrun train.py"},
        },
    )
    service.made(
        "/api/v1/asset/compute",
        {
            "meta": {**meta, "name": "form-small"},
            "spec": {"cpuCoreRequest": 2, "cpuMemoryRequest": "2G"},
        },
    )
    service.made(
        "/api/v1/asset/datasource/nfs",
        {
            "meta": {**meta, "name": "form-data"},
            "spec": {"server": "nfs.example.com", "path": "/exports/data", "mountPath": "/data"},
        },
    )
    return str(project["id"])


def _first_step(page: Page, url: str, name: str, configuration: str) -> None:
    page.goto(f"{url}/console/templates")
    page.get_by_role("link", name="+ New template").click()
    page.get_by_label("Scope").select_option(label="Project · form-vision")
    page.get_by_label("Framework").select_option("PyTorch")
    page.get_by_label(configuration, exact=True).check()
    page.get_by_label("Template name").fill(name)


def test_a_template_made_through_the_form_links_loads_and_has_its_own_master(
    service: Service,
) -> None:
    project = _assets(service)
    with journey("template-form") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        _first_step(page, service.url, "form-ddp", "Workers & master")
        j.step("scope, framework, configuration and name")
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("heading", name="Environment", exact=True)).to_be_visible()
        expect(page.get_by_role("button", name="Load from existing").first).to_be_visible()
        # The console docs' picture of the form (docs/console-new-template.png): what the first
        # step chose, and Environment with its "Load from existing" button.
        j.step("after continue, the environment to load or set", full_page=False)

        page.get_by_role("combobox", name="Environment", exact=True).select_option(
            label="form-pytorch"
        )
        page.get_by_role("group", name="Link the environment?").get_by_label("Link it").check()
        page.get_by_role("button", name="Load environment").click()
        image = page.locator("#f-spec-image")
        expect(image).to_have_value("pytorch/pytorch:2.5")
        expect(image).to_have_attribute("readonly", "")
        expect(page.locator("#f-spec-image-hint")).to_have_text(
            "From environment form-pytorch (linked: read-only)"
        )
        j.step("the environment linked: its fields read-only")

        page.get_by_role("combobox", name="Compute resource", exact=True).select_option(
            label="form-small"
        )
        page.get_by_role("button", name="Load compute resource").click()
        cpu = page.locator("#f-spec-compute-cpuCoreRequest")
        expect(cpu).to_have_value("2")
        expect(cpu).to_have_attribute("readonly", "")
        page.get_by_label("Number of workers").fill("2")
        toleration = page.locator("#f-spec-tolerations-0-key")
        expect(toleration).to_be_editable()  # tolerations stay the template's own
        toleration.fill("nvidia.com/gpu")
        page.locator("#f-spec-tolerations-0-operator").select_option("Exists")
        page.locator("#f-spec-tolerations-0-effect").select_option("NoSchedule")
        j.step("the compute resource linked, a toleration of its own")

        page.locator("#f-assets-datasources-0-ref").select_option(label="form-data (nfs)")
        page.locator("#f-assets-datasources-0-overrides-containerPath").fill("/mnt/override")
        page.get_by_label("Different setup for the master").check()
        expect(page.locator("#master-setup")).to_be_visible()
        page.get_by_label("Master environment").select_option(label="form-pytorch")
        page.locator("#f-master-spec-compute-cpuCoreRequest").fill("1")
        page.locator("#f-master-spec-compute-cpuMemoryRequest").fill("1G")
        j.step("a data source with its container path, a master of its own")

        page.get_by_role("button", name="Create template").click()
        expect(page.get_by_role("heading", name="form-ddp", exact=True)).to_be_visible()
        links = page.get_by_role("list").filter(has_text="Environment:")
        expect(links).to_contain_text("Environment: form-pytorch (linked)")
        expect(links).to_contain_text("Compute resource: form-small (linked)")
        expect(links).to_contain_text(
            "Data source: form-data (nfs, loaded), container path /mnt/override"
        )
        expect(page.get_by_text("a different setup for the master")).to_be_visible()
        workers = page.get_by_role("table", name="The workers' combined spec")
        image_row = workers.get_by_role("row").filter(has_text="Image URL")
        expect(image_row).to_contain_text("From environment form-pytorch (linked: read-only)")
        cpu_row = workers.get_by_role("row").filter(has_text="CPU compute request (cores)")
        expect(cpu_row).to_contain_text("From compute resource form-small (linked: read-only)")
        key_row = workers.get_by_role("row").filter(has_text="Toleration key")
        expect(key_row).to_contain_text("This template")
        master = page.get_by_role("table", name="The master's combined spec")
        expect(master.get_by_role("row").filter(has_text="CPU compute request")).to_contain_text(
            "1"
        )
        j.step("the template's page")

        page.get_by_role("link", name="Templates", exact=True).first.click()
        row = page.get_by_role("row").filter(has_text="form-ddp")
        expect(row).to_contain_text("Environment: form-pytorch")
        expect(row).to_contain_text("Compute resource: form-small")
        expect(row).to_contain_text("Data source: form-data")
        j.step("the new template in the grid")

        _first_step(page, service.url, "form-port", "Workers only")
        page.get_by_role("button", name="Continue").click()
        page.get_by_label("Image URL").fill("python:3.12")
        page.get_by_label("Connection type").select_option("NodePort")
        page.get_by_label("Container port", exact=True).fill("8080")
        page.get_by_label("Custom port").fill("29999")
        page.get_by_role("button", name="Create template").click()
        expect(page.get_by_role("alert")).to_contain_text("The template was not created")
        port = page.locator("#f-spec-ports-0-external")
        expect(port).to_have_attribute("aria-invalid", "true")
        expect(port).to_have_value("29999")
        expect(page.locator("#f-spec-ports-0-external-error")).to_contain_text("30000 to 32767")
        j.step("a refused custom port, named next to its field")

    free = service.api.get(
        "/api/v1/workload-templates/name-availability",
        params={"templateName": "form-port", "scopeType": "project", "scopeId": project},
    )
    assert free.status_code == 204, free.text  # nothing was written
    made = service.api.get(
        "/api/v1/workload-templates", params={"filterBy": "name==form-ddp"}
    ).json()["entries"][0]
    assert made["assets"]["environment"]
    assert made["assets"]["compute"]
    assert made["assets"]["datasources"][0]["overrides"] == {"containerPath": "/mnt/override"}
    assert made["masterSpecSameAsWorker"] is False
    assert made["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
