"""The templates grid and a template's page: filter by name, sort, pages; the combined spec with
the fields a linked environment sets named as its own; and a viewer of one project sees that
project's templates only, exactly as the API would answer them."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _catalogue(service: Service) -> dict[str, Any]:
    cluster = service.made("/api/v1/clusters", {"name": "grid-cluster"})
    projects = {
        name: service.made(
            "/api/v1/org-unit/projects", {"name": name, "clusterId": cluster["uuid"]}
        )
        for name in ("grid-vision", "grid-speech")
    }
    vision = projects["grid-vision"]["id"]
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                "name": "grid-pytorch",
                "scope": "project",
                "projectId": int(vision),
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": {"image": "pytorch/pytorch:2.5", "command": "python train.py"},
        },
    )

    def template(name: str, project: str, **assets: Any) -> None:
        spec: dict[str, Any] = {"distributedFramework": "PyTorch", "numWorkers": 2}
        body: dict[str, Any] = {
            "meta": {"name": name, "scopeType": "project", "scopeId": project},
            "spec": spec,
        }
        if assets:
            body["assets"] = assets
        else:
            spec["image"] = "python:3.12"
        service.made("/api/v1/workload-templates/distributed", body)

    template("grid-linked", vision, environment=environment["meta"]["id"])
    for i in range(21):  # more than one page of 20
        template(f"grid-bulk-{i:02d}", vision)
    template("grid-speech-only", projects["grid-speech"]["id"])
    return projects


def _project(service: Service, name: str, cluster_id: str) -> dict[str, Any]:
    return service.made("/api/v1/org-unit/projects", {"name": name, "clusterId": cluster_id})


def _viewer_of(service: Service, project: dict[str, Any]) -> tuple[str, str]:
    account = service.made("/api/v1/service-accounts", {"name": "grid-viewer"})
    roles = service.api.get("/api/v1/authorization/roles").json()
    viewer = next(r["id"] for r in roles if r["name"] == "viewer")
    rule = {
        "subjectId": account["id"],
        "subjectType": "service-account",
        "roleId": viewer,
        "scopeId": project["id"],
        "scopeType": "project",
    }
    service.made("/api/v1/authorization/access-rules", rule)
    return account["clientId"], account["clientSecret"]


def test_the_grid_filters_sorts_and_pages_and_a_template_shows_what_it_links(
    service: Service,
) -> None:
    projects = _catalogue(service)
    with journey("templates-grid") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        rows = page.locator("table.grid tbody tr")
        # Other journeys share the service: this one counts its own templates only.
        page.get_by_label("Filter by name").fill("grid-")
        page.get_by_role("button", name="Filter").click()
        expect(page.get_by_text("23 templates")).to_be_visible()
        expect(rows).to_have_count(20)
        expect(page.get_by_role("link", name="Next page")).to_be_visible()
        j.step("the first page of the grid")

        page.get_by_role("link", name="Next page").click()
        expect(page.get_by_text("Page 2 of 2")).to_be_visible()
        expect(rows).to_have_count(3)
        j.step("the second page")

        page.get_by_label("Filter by name").fill("linked")
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(1)
        row = rows.first
        expect(row).to_contain_text("Project · grid-vision")
        expect(row).to_contain_text("PyTorch")
        expect(row).to_contain_text("Environment: grid-pytorch")
        expect(row).to_contain_text("(you)")
        j.step("filtered by name")

        page.get_by_label("Filter by name").fill("grid-bulk")
        page.get_by_role("button", name="Filter").click()
        page.get_by_role("link", name="Name").click()  # sorted by name already: now descending
        expect(page.locator("table.grid tbody tr th a").first).to_have_text("grid-bulk-20")
        expect(page.locator("th[aria-sort=descending]")).to_have_count(1)
        j.step("sorted by name, descending")

        page.get_by_label("Filter by name").fill("linked")
        page.get_by_role("button", name="Filter").click()
        page.get_by_role("link", name="grid-linked").click()
        expect(page.get_by_role("heading", name="grid-linked", exact=True)).to_be_visible()
        workers_spec = page.get_by_role("table", name="The workers' combined spec")
        image = workers_spec.get_by_role("row").filter(has_text="Image URL")
        expect(image).to_contain_text("pytorch/pytorch:2.5")
        expect(image).to_contain_text("From environment grid-pytorch (linked: read-only)")
        workers = workers_spec.get_by_role("row").filter(has_text="Number of workers")
        expect(workers).to_contain_text("This template")
        expect(page.get_by_role("row").filter(has_text="Created")).to_have_count(1)
        j.step("a template's page")

        page.get_by_role("button", name="Sign out").click()
        client_id, secret = _viewer_of(service, projects["grid-vision"])
        sign_in(page, service.url, client_id, secret)
        page.get_by_label("Filter by name").fill("grid-")
        page.get_by_role("button", name="Filter").click()
        expect(page.get_by_text("22 templates")).to_be_visible()  # not grid-speech's
        page.get_by_label("Filter by name").fill("speech")
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("No templates")
        j.step("a viewer of one project sees its templates only")

        hidden = service.api.get(
            "/api/v1/workload-templates", params={"filterBy": "name==grid-speech-only"}
        ).json()["entries"][0]["meta"]["id"]
        answer = page.goto(f"{service.url}/console/templates/{hidden}")
        assert answer is not None
        assert answer.status == 404  # out of sight: as if it did not exist
        j.step("another project's template is not found")
