"""Clusters and projects in the console: a tenant admin creates a cluster and a project in it
(each refused next to its field first), deletes a project, is refused deleting a cluster that
still holds one, and scopes a new template to the project; a viewer has no such entries, and a
cluster it creates anyway is refused as the API refuses it (403)."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _viewer(service: Service) -> tuple[str, str]:
    """A service account that views the project the journey made."""
    project = service.api.get("/api/v1/org-unit/projects", params={"filterBy": "name==org-team"})
    (found,) = project.json()["projects"]
    account = service.made("/api/v1/service-accounts", {"name": "org-viewer"})
    roles = service.api.get("/api/v1/authorization/roles").json()
    rule = {
        "subjectId": account["id"],
        "subjectType": "service-account",
        "roleId": next(r["id"] for r in roles if r["name"] == "viewer"),
        "scopeId": found["id"],
        "scopeType": "project",
    }
    service.made("/api/v1/authorization/access-rules", rule)
    return account["clientId"], account["clientSecret"]


def test_a_tenant_admin_makes_clusters_and_projects_and_a_viewer_is_refused(
    service: Service,
) -> None:
    with journey("org-units") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        nav = page.get_by_role("navigation", name="Workload manager")
        nav.get_by_role("link", name="Clusters").click()
        page.get_by_role("button", name="Create cluster").click()
        expect(page.get_by_role("alert")).to_contain_text("The cluster was not created")
        expect(page.get_by_label("Cluster name")).to_have_attribute("aria-invalid", "true")
        j.step("a nameless cluster refused next to its name")

        page.get_by_label("Cluster name").fill("org-cluster")
        page.get_by_role("button", name="Create cluster").click()
        expect(page.get_by_role("status")).to_have_text("Cluster org-cluster created.")
        expect(page.get_by_role("row").filter(has_text="org-cluster")).to_have_count(1)
        j.step("the cluster created")

        nav.get_by_role("link", name="Projects").click()
        page.get_by_label("Project name").fill("org-team")
        page.get_by_role("button", name="Create project").click()
        expect(page.get_by_label("Cluster")).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("Project name")).to_have_value("org-team")
        j.step("a project without a cluster refused next to its cluster")

        page.get_by_label("Cluster").select_option(label="org-cluster")
        page.get_by_role("button", name="Create project").click()
        expect(page.get_by_role("status")).to_have_text("Project org-team created.")
        expect(page.get_by_role("row").filter(has_text="org-team")).to_contain_text("org-cluster")
        page.get_by_label("Project name").fill("org-scratch")
        page.get_by_label("Cluster").select_option(label="org-cluster")
        page.get_by_role("button", name="Create project").click()
        page.get_by_role("button", name="Delete project org-scratch").click()
        expect(page.get_by_role("heading", name="Projects")).to_be_visible()
        expect(page.get_by_role("row").filter(has_text="org-scratch")).to_have_count(0)
        expect(page.get_by_role("row").filter(has_text="org-team")).to_have_count(1)
        j.step("a project created, another deleted")

        nav.get_by_role("link", name="Clusters").click()
        page.get_by_role("button", name="Delete cluster org-cluster").click()
        expect(page.get_by_role("alert")).to_contain_text("The cluster was not deleted")
        expect(page.get_by_role("alert")).to_contain_text("still holds project org-team")
        expect(page.get_by_role("row").filter(has_text="org-cluster")).to_have_count(1)
        j.step("a cluster that holds a project is not deleted")

        nav.get_by_role("link", name="Templates").click()
        page.get_by_role("link", name="+ New template").click()
        scope = page.get_by_label("Scope")
        expect(scope.get_by_role("option", name="Project · org-team")).to_have_count(1)
        scope.select_option(label="Project · org-team")
        j.step("a new template can be scoped to the new project")

        client_id, secret = _viewer(service)
        page.get_by_role("button", name="Sign out").click()
        sign_in(page, service.url, client_id, secret)
        expect(page.get_by_role("link", name="Templates")).to_be_visible()
        expect(page.get_by_role("link", name="Clusters")).to_have_count(0)
        expect(page.get_by_role("link", name="Projects")).to_have_count(0)
        page.goto(f"{service.url}/console/clusters")
        page.get_by_label("Cluster name").fill("org-rogue")
        with page.expect_response(lambda r: r.request.method == "POST") as sent:
            page.get_by_role("button", name="Create cluster").click()
        assert sent.value.status == 403, sent.value.status
        expect(page.get_by_role("heading", name="Not permitted")).to_be_visible()
        j.step("a viewer's cluster refused as the API refuses it")
    clusters = [c["name"] for c in service.api.get("/api/v1/clusters").json()]
    assert "org-cluster" in clusters
    assert "org-rogue" not in clusters
