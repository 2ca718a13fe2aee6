"""The "Load from existing" side pane of the new-template form, from the keyboard: it lists the
environments and compute resources the template's scope can use (a sibling project's are not
among them), each with its summary; Escape closes it and gives focus back to its button; an
environment picked with "Link" is linked and a compute resource picked with "Use without
linking" is copied into the template's spec."""

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _assets(service: Service) -> dict[str, str]:
    cluster = service.made("/api/v1/clusters", {"name": "pane-cluster"})
    projects = [
        service.made("/api/v1/org-unit/projects", {"name": name, "clusterId": cluster["uuid"]})
        for name in ("pane-vision", "pane-speech")
    ]
    meta: dict[str, Any] = {"scope": "project", "projectId": int(projects[0]["id"])}
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                **meta,
                "name": "pane-pytorch",
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": {"image": "pytorch/pytorch:2.5", "command": "torchrun train.py"},
        },
    )
    service.made(
        "/api/v1/asset/environment",
        {
            "meta": {"scope": "project", "projectId": int(projects[1]["id"]), "name": "pane-tf"},
            "spec": {"image": "tensorflow/tensorflow:2.17"},
        },
    )
    service.made(
        "/api/v1/asset/compute",
        {
            "meta": {**meta, "name": "pane-gpu"},
            "spec": {
                "gpuDevicesRequest": 1,
                "cpuCoreRequest": 2,
                "cpuCoreLimit": 4,
                "cpuMemoryRequest": "2G",
            },
        },
    )
    return {"environment": environment["meta"]["id"]}


def _press(page: Page, selector: str) -> None:
    """Reach a control and press Enter on it, as a keyboard user does."""
    page.locator(selector).focus()
    page.keyboard.press("Enter")


def test_the_side_pane_links_an_environment_and_copies_a_compute_resource(
    service: Service,
) -> None:
    made = _assets(service)
    with journey("asset-pane") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/new")
        page.get_by_label("Scope").select_option(label="Project · pane-vision")
        page.get_by_label("Framework").select_option("PyTorch")
        page.get_by_label("Workers only", exact=True).check()
        page.get_by_label("Template name").fill("pane-ddp")
        page.get_by_role("button", name="Continue").click()

        opener = page.locator("#environment-pane-opener")
        expect(opener).to_have_text("Load from existing")
        _press(page, "#environment-pane-opener")
        pane = page.get_by_role("dialog", name="Environments this scope can use")
        expect(pane).to_be_visible()
        pytorch = pane.get_by_role("listitem").filter(has_text="pane-pytorch")
        expect(pytorch).to_contain_text("Image pytorch/pytorch:2.5 · Framework PyTorch")
        expect(pane).not_to_contain_text("pane-tf")  # the sibling project's
        expect(pytorch.get_by_role("button", name="Link", exact=True)).to_be_focused()
        j.step("the environments pane, open", full_page=False)
        page.keyboard.press("Escape")
        expect(pane).to_be_hidden()
        expect(opener).to_be_focused()

        _press(page, "#environment-pane-opener")
        expect(pane).to_be_visible()
        pytorch.get_by_role("button", name="Link", exact=True).press("Enter")
        expect(pane).to_be_hidden()
        image = page.locator("#f-spec-image")
        expect(image).to_have_value("pytorch/pytorch:2.5")
        expect(image).to_have_attribute("readonly", "")
        expect(page.locator("#f-spec-image-hint")).to_have_text(
            "From environment pane-pytorch (linked: read-only)"
        )
        expect(opener).to_be_focused()
        j.step("the environment linked from the pane")

        _press(page, "#compute-pane-opener")
        computes = page.get_by_role("dialog", name="Compute resources this scope can use")
        expect(computes).to_be_visible()
        gpu = computes.get_by_role("listitem").filter(has_text="pane-gpu")
        expect(gpu).to_contain_text("GPU devices per pod 1 · CPU 2 to 4 cores · Memory 2G")
        j.step("the compute resources pane, open", full_page=False)
        gpu.get_by_role("button", name="Use without linking").press("Enter")
        expect(computes).to_be_hidden()
        cpu = page.locator("#f-spec-compute-cpuCoreRequest")
        expect(cpu).to_have_value("2")
        expect(cpu).to_be_editable()  # copied: the template's own
        expect(page.get_by_role("combobox", name="Compute resource", exact=True)).to_have_value("")
        expect(page.locator("#f-spec-image")).to_have_attribute("readonly", "")  # still linked
        j.step("the compute resource used without linking")

        page.get_by_role("button", name="Create template").click()
        expect(page.get_by_role("heading", name="pane-ddp", exact=True)).to_be_visible()
        j.step("the template's page")

    template = service.api.get(
        "/api/v1/workload-templates", params={"filterBy": "name==pane-ddp"}
    ).json()["entries"][0]
    assert template["assets"]["environment"] == made["environment"]
    assert not template["assets"].get("compute")
    compute = template["spec"]["compute"]
    assert (compute["gpuDevicesRequest"], compute["cpuCoreRequest"]) == (1, 2)
    assert (compute["cpuCoreLimit"], compute["cpuMemoryRequest"]) == (4, "2G")
