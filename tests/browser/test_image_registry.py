"""The NGC private registry in the new-template form: offered where the template's scope can
use a registry, with the registries to pick from; the template made picks its image from it,
and its page names the registry."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]
SOURCE = "Select from the NGC private registry"


def test_a_template_picks_its_image_from_a_registry_its_scope_can_use(service: Service) -> None:
    cluster = service.made("/api/v1/clusters", {"name": "reg-cluster"})
    projects = [
        service.made("/api/v1/org-unit/projects", {"name": name, "clusterId": cluster["uuid"]})
        for name in ("reg-vision", "reg-speech")
    ]
    registry = service.made(
        "/api/v1/asset/registries",
        {
            "meta": {"name": "reg-ngc", "scope": "project", "projectId": int(projects[0]["id"])},
            "spec": {
                "url": "https://registry.example.com",
                "credentialKind": "password",
                "user": "puller",
                "password": "not-a-real-one",
            },
        },
    )
    with journey("image-registry") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        for project, offered in (("reg-speech", False), ("reg-vision", True)):
            page.goto(f"{service.url}/console/templates/new")
            page.get_by_label("Scope").select_option(label=f"Project · {project}")
            page.get_by_label("Framework").select_option("PyTorch")
            page.get_by_label("Workers only", exact=True).check()
            page.get_by_label("Template name").fill("reg-ddp")
            page.get_by_role("button", name="Continue").click()
            source = page.locator("#f-spec-imageSource")
            expect(source).to_be_visible()
            expect(source.locator("option", has_text=SOURCE)).to_have_count(1 if offered else 0)
            expect(page.get_by_label("Registry", exact=True)).to_have_count(1 if offered else 0)

        source.select_option(label=SOURCE)
        page.get_by_label("Registry", exact=True).select_option(label="reg-ngc")
        page.get_by_label("Image URL").fill("registry.example.com/team/train:v1")
        j.step("the NGC private registry and the registry to pick from")
        page.get_by_role("button", name="Create template").click()
        expect(page.get_by_role("heading", name="reg-ddp", exact=True)).to_be_visible()
        facts = page.locator("dl.facts")
        expect(facts).to_contain_text("Image registry")
        expect(facts).to_contain_text("reg-ngc (NGC private registry)")
        workers = page.get_by_role("table", name="The workers' combined spec")
        registry_row = workers.get_by_role("row").filter(has_text="/imageRegistryId")
        expect(registry_row.get_by_role("cell").first).to_have_text("reg-ngc")
        expect(workers).not_to_contain_text(registry["meta"]["id"])  # named, not its id
        j.step("the template picking its image from the registry, named")

    made = service.api.get(
        "/api/v1/workload-templates", params={"filterBy": "name==reg-ddp"}
    ).json()["entries"][0]
    assert made["spec"]["imageSource"] == "ngcPrivateRegistry"
    assert made["spec"]["imageRegistryId"] == registry["meta"]["id"]
