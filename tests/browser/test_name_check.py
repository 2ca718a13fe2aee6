"""The new-template form checks the name as it is typed: a name a template in the chosen scope
holds is said to be taken next to the field before anything is sent, a free one available."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def test_a_taken_name_is_said_to_be_taken_as_it_is_typed(service: Service) -> None:
    cluster = service.made("/api/v1/clusters", {"name": "name-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "name-vision", "clusterId": cluster["uuid"]}
    )
    service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "name-ddp", "scopeType": "project", "scopeId": project["id"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"},
        },
    )
    with journey("name-check") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/new")
        page.get_by_label("Scope").select_option(label="Project · name-vision")
        name = page.get_by_label("Template name")
        said = page.locator("#f-meta-name-check")
        expect(said).to_have_attribute("aria-live", "polite")

        name.press_sequentially("name-ddp")
        expect(said).to_have_text("This name is taken")
        expect(page).to_have_url(f"{service.url}/console/templates/new")  # nothing sent
        j.step("a taken name, said as it is typed")

        name.press_sequentially("-2")
        expect(said).to_have_text("This name is available")
        j.step("a free name")

        page.get_by_label("Scope").select_option(label="Tenant")
        name.fill("name-ddp")
        expect(said).to_have_text("This name is available")  # another scope's name
