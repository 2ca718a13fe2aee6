"""Compute resources in the console: the list with the templates using each, a new one (a
refusal next to its field first) deleted, one a template links not deleted, and an edit whose
impact preview names the linked template's change before it is saved, after which the
template's combined spec holds the new value."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def linked(service: Service) -> dict[str, Any]:
    """A compute resource a template links, in a project of its own."""
    cluster = service.made("/api/v1/clusters", {"name": "cmp-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "cmp-vision", "clusterId": cluster["uuid"]}
    )
    compute = service.made(
        "/api/v1/asset/compute",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "cmp-small"},
            "spec": {"cpuCoreRequest": 1, "cpuMemoryRequest": "1G", "largeShmRequest": True},
        },
    )
    scope = {"scopeType": "project", "scopeId": project["id"]}
    service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "cmp-ddp", **scope},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"},
            "assets": {"compute": compute["meta"]["id"]},
        },
    )
    return compute


def test_a_compute_resource_edit_shows_its_impact_then_changes_the_linked_template(
    service: Service, linked: dict[str, Any]
) -> None:
    with journey("compute-impact") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="Compute resources").click()
        row = page.get_by_role("row").filter(has_text="cmp-small")
        expect(row).to_contain_text("1 CPU, 1G memory")
        expect(row).to_contain_text("cmp-ddp")
        j.step("the compute resources, with the templates that use each")

        row.get_by_role("link", name="cmp-small").click()
        expect(page.get_by_label("CPU compute request (cores)")).to_have_value("1")
        expect(page.get_by_label("Increase shared memory size")).to_be_checked()
        expect(page.get_by_text("Project · cmp-vision")).to_be_visible()
        expect(page.get_by_role("button", name="Save compute resource")).to_have_count(0)
        page.get_by_label("GPU devices per pod").fill("1")
        page.get_by_label("CPU compute request (cores)").fill("4")
        page.get_by_label("Extended resource").first.fill("example.com/fpga")
        page.get_by_role("button", name="Preview the impact").click()
        quantity = page.get_by_label("Quantity").first
        expect(quantity).to_have_attribute("aria-invalid", "true")  # as the save would refuse
        expect(page.locator("#f-spec-compute-extendedResources-0-quantity-error")).to_have_text(
            "required"
        )
        expect(page.get_by_role("table", name="Template cmp-ddp would change")).to_have_count(0)
        expect(page.get_by_role("button", name="Save compute resource")).to_have_count(0)
        j.step("an extended resource without a quantity refused before any preview")

        quantity.fill("2")
        page.get_by_role("button", name="Preview the impact").click()
        impact = page.get_by_role("table", name="Template cmp-ddp would change")
        cpu = impact.get_by_role("row").filter(has_text="/combinedSpec/compute/cpuCoreRequest")
        expect(cpu).to_contain_text("CPU compute request (cores)")
        expect(cpu.get_by_role("cell").nth(1)).to_have_text("4")
        gpu = impact.get_by_role("row").filter(has_text="/combinedSpec/compute/gpuDevicesRequest")
        expect(gpu).to_contain_text("GPU devices per pod")
        extended = impact.get_by_role("row").filter(
            has_text="/combinedSpec/compute/extendedResources"
        )
        expect(extended).to_contain_text('[{"resource":"example.com/fpga","quantity":"2"}]')
        expect(extended.get_by_role("rowheader")).to_contain_text("Extended resources")
        j.step("the impact preview: the linked template's compute changes")
        unchanged = service.api.get("/api/v1/asset/compute", params={"name": "cmp-small"})
        assert unchanged.json()["entries"][0]["spec"]["cpuCoreRequest"] == 1

        page.get_by_role("button", name="Save compute resource").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_label("CPU compute request (cores)")).to_have_value("4")
        expect(page.get_by_label("Extended resource").first).to_have_value("example.com/fpga")
        expect(page.get_by_label("Increase shared memory size")).to_be_checked()
        j.step("the compute resource saved")

        # Opened once, never reloaded: a read waits for the fan-out of its caller's own writes.
        page.get_by_role("link", name="cmp-ddp").click()
        expect(page.get_by_role("heading", name="cmp-ddp", exact=True)).to_be_visible()
        workers = page.get_by_role("table", name="The workers' combined spec")
        expect(
            workers.get_by_role("row").filter(has_text="CPU compute request (cores)")
        ).to_contain_text("4")
        expect(workers.get_by_role("row").filter(has_text="GPU devices per pod")).to_contain_text(
            "1"
        )
        j.step("the template's combined spec holds the new compute")
    saved = service.api.get("/api/v1/asset/compute", params={"name": "cmp-small"}).json()
    spec = saved["entries"][0]["spec"]
    assert spec["cpuCoreRequest"] == 4
    assert spec["cpuMemoryRequest"] == "1G"  # a field left as it was is kept
    assert spec["extendedResources"] == [{"resource": "example.com/fpga", "quantity": "2"}]


def test_compute_resources_are_created_and_deleted_but_not_while_a_template_links_them(
    service: Service, linked: dict[str, Any]
) -> None:
    with journey("compute-resources") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/compute-resources")
        page.get_by_role("link", name="+ New compute resource").click()
        page.get_by_label("Scope").select_option(label="Project · cmp-vision")
        page.get_by_label("Compute resource name").fill("cmp-scratch")
        page.get_by_label("GPU fractioning").select_option("portion")
        page.get_by_label("GPU portion request (fraction of a device)").fill("1.5")
        page.get_by_role("button", name="Create compute resource").click()
        expect(page.get_by_role("alert")).to_contain_text("The compute resource was not created")
        portion = page.get_by_label("GPU portion request (fraction of a device)")
        expect(portion).to_have_attribute("aria-invalid", "true")
        j.step("a GPU portion above one device refused next to its field")

        portion.fill("0.5")
        page.get_by_role("button", name="Create compute resource").click()
        devices = page.get_by_label("GPU devices per pod")
        expect(devices).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_role("alert")).to_contain_text("a GPU fraction needs a device")
        j.step("a GPU fraction without a device refused next to GPU devices per pod")

        devices.fill("1")
        page.get_by_role("button", name="Create compute resource").click()
        expect(page.get_by_role("heading", name="Compute resource cmp-scratch")).to_be_visible()
        expect(page.get_by_label("GPU fractioning")).to_have_value("portion")
        j.step("the new compute resource's page")

        page.get_by_role("button", name="Delete compute resource").click()
        expect(page.get_by_role("heading", name="Compute resources")).to_be_visible()
        expect(page.get_by_role("row").filter(has_text="cmp-scratch")).to_have_count(0)
        j.step("deleted, gone from the list")

        page.get_by_role("link", name="cmp-small").click()
        page.get_by_role("button", name="Delete compute resource").click()
        expect(page.get_by_role("alert")).to_contain_text("cmp-ddp")
        j.step("a compute resource a template links is not deleted")
    kept = service.api.get("/api/v1/asset/compute", params={"name": "cmp-small"})
    assert kept.json()["entries"], kept.text
