"""Editing a template through the guide's form, filled in from the template: the linked
environment's fields read-only, a toleration of its own changed, a field emptied; a backoff
limit the domain refuses shown next to that field with nothing written; the saved template as
the API answers it, and its history. The template holds more tolerations and annotations than
the new-template form has rows for: the edit shows a row for each, and saving keeps them all."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


# More than the new-template form's two rows each; a toleration's seconds has no field.
TOLERATIONS: list[dict[str, Any]] = [
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "example.com/zone", "operator": "Equal", "value": "a", "effect": "NoSchedule"},
    {"key": "example.com/spot", "operator": "Exists", "effect": "NoExecute", "seconds": 60},
]
ANNOTATIONS = [{"name": f"example.com/note-{i}", "value": f"n{i}"} for i in range(3)]


def _template(service: Service) -> dict[str, Any]:
    cluster = service.made("/api/v1/clusters", {"name": "edit-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "edit-vision", "clusterId": cluster["uuid"]}
    )
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                "scope": "project",
                "projectId": int(project["id"]),
                "name": "edit-pytorch",
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": {"image": "pytorch/pytorch:2.5", "command": "torchrun train.py"},
        },
    )
    return service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "edit-ddp", "scopeType": "project", "scopeId": project["id"]},
            "spec": {
                "distributedFramework": "PyTorch",
                "numWorkers": 2,
                "backoffLimit": 3,
                "tolerations": TOLERATIONS,
                "annotations": ANNOTATIONS,
            },
            "assets": {"environment": environment["meta"]["id"]},
        },
    )


def test_a_template_edited_through_the_form_keeps_its_links_and_saves_what_was_changed(
    service: Service,
) -> None:
    made = _template(service)
    template_id = made["meta"]["id"]
    with journey("template-edit") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/{template_id}")
        page.get_by_role("link", name="Edit template").click()
        expect(page.get_by_role("heading", name="Edit template edit-ddp")).to_be_visible()
        image = page.locator("#f-spec-image")
        expect(image).to_have_value("pytorch/pytorch:2.5")
        expect(image).to_have_attribute("readonly", "")
        expect(page.locator("#f-spec-image-hint")).to_have_text(
            "From environment edit-pytorch (linked: read-only)"
        )
        expect(page.get_by_label("Number of workers")).to_have_value("2")
        expect(page.get_by_label("Backoff limit")).to_have_value("3")
        toleration = page.locator("#f-spec-tolerations-0-key")
        expect(toleration).to_have_value("nvidia.com/gpu")
        expect(toleration).to_be_editable()
        expect(page.locator("#f-spec-tolerations-2-key")).to_have_value("example.com/spot")
        expect(page.locator("#f-spec-tolerations-4-key")).to_have_value("")  # for adding
        expect(page.locator("#f-spec-tolerations-5-key")).to_have_count(0)
        expect(page.locator("#f-spec-annotations-2-name")).to_have_value("example.com/note-2")
        j.step("the edit form filled in from the template")

        page.get_by_label("Backoff limit").fill("101")
        toleration.fill("example.com/dedicated")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("alert")).to_contain_text("The template was not saved")
        backoff = page.get_by_label("Backoff limit")
        expect(backoff).to_have_attribute("aria-invalid", "true")
        expect(backoff).to_have_value("101")
        expect(page.locator("#f-spec-backoffLimit-error")).to_contain_text("0 to 100")
        expect(page.locator("#f-spec-tolerations-0-key")).to_have_value("example.com/dedicated")
        j.step("a refused backoff limit, named next to its field")
        unchanged = service.api.get(f"/api/v1/workload-templates/{template_id}").json()
        assert unchanged["spec"]["backoffLimit"] == 3  # nothing was written

        page.get_by_label("Backoff limit").fill("")
        page.get_by_label("Number of workers").fill("4")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="edit-ddp", exact=True)).to_be_visible()
        workers = page.get_by_role("table", name="The workers' combined spec")
        key_row = workers.get_by_role("row").filter(has_text="/tolerations/0/key")
        expect(key_row).to_contain_text("example.com/dedicated")
        expect(key_row).to_contain_text("This template")
        backoff_row = workers.get_by_role("row").filter(has_text="Backoff limit")
        expect(backoff_row).to_contain_text("6")  # emptied: the default again
        expect(backoff_row).to_contain_text("Default")
        for i, kept in enumerate(TOLERATIONS[1:], start=1):
            row = workers.get_by_role("row").filter(has_text=f"/tolerations/{i}/key")
            expect(row).to_contain_text(kept["key"])
        for i, note in enumerate(ANNOTATIONS):
            row = workers.get_by_role("row").filter(has_text=f"/annotations/{i}/name")
            expect(row).to_contain_text(note["name"])
        history = page.get_by_role("table", name="Every version, newest first")
        expect(history.get_by_role("row").nth(1)).to_contain_text("Updated")
        j.step("the saved template's page")

    saved = service.api.get(f"/api/v1/workload-templates/{template_id}").json()
    assert saved["spec"]["numWorkers"] == 4
    assert "backoffLimit" not in saved["spec"] or saved["spec"]["backoffLimit"] is None
    assert saved["spec"]["tolerations"] == [
        {"key": "example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"},
        *TOLERATIONS[1:],
    ]
    assert saved["spec"]["annotations"] == ANNOTATIONS
    assert saved["assets"]["environment"] == made["assets"]["environment"]
    assert saved["spec"].get("image") is None  # the image is still the linked environment's
    assert saved["combinedSpec"]["image"] == "pytorch/pytorch:2.5"
