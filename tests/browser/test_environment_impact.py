"""Environments in the console: the list, a new one (a refusal next to its field first), and
the journey the guide's fan-out asks for: edit the linked environment, see the impact preview
(which templates change, and how), save, and see the template's history name the environment
update that changed it, with the changes between its two versions; an environment a template
links is not deleted, an unused one is."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _linked(service: Service) -> dict[str, Any]:
    cluster = service.made("/api/v1/clusters", {"name": "fan-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "fan-vision", "clusterId": cluster["uuid"]}
    )
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                "scope": "project",
                "projectId": int(project["id"]),
                "name": "fan-pytorch",
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": {"image": "pytorch/pytorch:2.5", "command": "torchrun train.py"},
        },
    )
    scope = {"scopeType": "project", "scopeId": project["id"]}
    spec = {"distributedFramework": "PyTorch", "numWorkers": 2}
    service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "fan-ddp", **scope},
            "spec": spec,
            "assets": {"environment": environment["meta"]["id"]},
        },
    )
    service.made(
        "/api/v1/workload-templates/distributed",
        {"meta": {"name": "fan-own", **scope}, "spec": {**spec, "image": "python:3.12"}},
    )
    return environment


def test_an_environment_edit_shows_its_impact_then_fans_out_to_the_template_history(
    service: Service,
) -> None:
    _linked(service)
    with journey("environment-impact") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="Environments").click()
        row = page.get_by_role("row").filter(has_text="fan-pytorch")
        expect(row).to_contain_text("pytorch/pytorch:2.5")
        expect(row).to_contain_text("fan-ddp")
        j.step("the environments, with the templates that use each")

        row.get_by_role("link", name="fan-pytorch").click()
        expect(page.get_by_label("Image URL")).to_have_value("pytorch/pytorch:2.5")
        expect(page.get_by_text("Project · fan-vision")).to_be_visible()
        expect(page.get_by_role("button", name="Save environment")).to_have_count(0)
        page.get_by_label("Image URL").fill("pytorch/pytorch:2.6")
        page.get_by_role("button", name="Preview the impact").click()
        impact = page.get_by_role("table", name="Template fan-ddp would change")
        image = impact.get_by_role("row").filter(has_text="/combinedSpec/image")
        expect(image).to_contain_text("pytorch/pytorch:2.5")
        expect(image).to_contain_text("pytorch/pytorch:2.6")
        expect(page.get_by_role("table", name="Template fan-own would change")).to_have_count(0)
        j.step("the impact preview: which templates change and how")
        unchanged = service.api.get("/api/v1/asset/environment", params={"name": "fan-pytorch"})
        assert unchanged.json()["entries"][0]["spec"]["image"] == "pytorch/pytorch:2.5"

        page.get_by_role("button", name="Save environment").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_label("Image URL")).to_have_value("pytorch/pytorch:2.6")
        j.step("the environment saved")

        # Opened once, never reloaded: a read waits for the fan-out of its caller's own writes.
        page.get_by_role("link", name="fan-ddp").click()
        expect(page.get_by_role("heading", name="fan-ddp", exact=True)).to_be_visible()
        history = page.get_by_role("table", name="Every version, newest first")
        latest = history.get_by_role("row").nth(1)
        expect(latest).to_contain_text("Linked asset updated")
        expect(latest).to_contain_text("Environment fan-pytorch updated (its version 2)")
        expect(latest.get_by_role("link", name="Environment fan-pytorch updated")).to_be_visible()
        workers = page.get_by_role("table", name="The workers' combined spec")
        expect(workers.get_by_role("row").filter(has_text="Image URL")).to_contain_text(
            "pytorch/pytorch:2.6"
        )
        j.step("the template's history names the environment update")

        page.get_by_label("From version").select_option("1")
        page.get_by_label("To version").select_option("2")
        page.get_by_role("button", name="Show the changes").click()
        changes = page.get_by_role("table", name="Changes from version 1 to version 2")
        image_change = changes.get_by_role("row").filter(has_text="Image URL (combined)")
        expect(image_change).to_contain_text("pytorch/pytorch:2.5")
        expect(image_change).to_contain_text("pytorch/pytorch:2.6")
        j.step("the changes between versions 1 and 2")


def test_environments_are_created_and_deleted_but_not_while_a_template_links_them(
    service: Service,
) -> None:
    with journey("environments") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/environments")
        page.get_by_role("link", name="+ New environment").click()
        page.get_by_label("Scope").select_option(label="Project · fan-vision")
        page.get_by_label("Distributed framework").select_option("PyTorch")
        page.get_by_label("Image URL").fill("python:3.12")
        page.get_by_label("Working directory").fill("")
        page.get_by_role("button", name="Create environment").click()
        expect(page.get_by_role("alert")).to_contain_text("The environment was not created")
        name = page.get_by_label("Environment name")
        expect(name).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("Image URL")).to_have_value("python:3.12")
        j.step("a nameless environment refused next to its name")

        name.fill("fan-scratch")
        page.get_by_role("button", name="Create environment").click()
        expect(page.get_by_role("heading", name="Environment fan-scratch")).to_be_visible()
        j.step("the new environment's page")

        page.get_by_role("button", name="Delete environment").click()
        expect(page.get_by_role("heading", name="Environments")).to_be_visible()
        expect(page.get_by_role("row").filter(has_text="fan-scratch")).to_have_count(0)
        j.step("deleted, gone from the list")

        page.get_by_role("link", name="fan-pytorch").click()
        page.get_by_role("button", name="Delete environment").click()
        expect(page.get_by_role("alert")).to_contain_text("fan-ddp")
        j.step("an environment a template links is not deleted")
    kept = service.api.get("/api/v1/asset/environment", params={"name": "fan-pytorch"})
    assert kept.json()["entries"], kept.text
