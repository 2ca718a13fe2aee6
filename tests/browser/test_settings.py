"""The admin settings page: an admin turns NGC catalog on and the new-template form offers the
NGC catalog as the image's source, and turns a framework off on one cluster; a viewer sees
every switch with its value, read-only, and a form sent anyway is refused with nothing
changed."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]
NGC = "workloads.ngcCatalog"
SWITCHES = (
    "Flexible workload submission",
    "Flexible workload templates",
    "NGC catalog",
    "Data volumes",
    "GPU resource optimization",
    "Distributed training with PyTorch",
)


@pytest.fixture
def ngc_off_after(service: Service) -> Iterator[None]:
    """The service is shared by the browser tests: NGC catalog goes back to its default, and so
    does each cluster's PyTorch."""
    yield
    service.api.put("/v1/k8s/setting", json={"key": NGC, "value": False}).raise_for_status()
    for cluster in service.api.get("/api/v1/clusters").json():
        key = f"clusters.{cluster['uuid']}.distributedFrameworks.PyTorch"
        service.api.put("/v1/k8s/setting", json={"key": key, "value": True}).raise_for_status()


def _viewer(service: Service) -> tuple[str, str, str]:
    cluster = service.made("/api/v1/clusters", {"name": "set-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "set-vision", "clusterId": cluster["uuid"]}
    )
    account = service.made("/api/v1/service-accounts", {"name": "set-viewer"})
    roles = service.api.get("/api/v1/authorization/roles").json()
    rule = {
        "subjectId": account["id"],
        "subjectType": "service-account",
        "roleId": next(r["id"] for r in roles if r["name"] == "viewer"),
        "scopeId": project["id"],
        "scopeType": "project",
    }
    service.made("/api/v1/authorization/access-rules", rule)
    return account["clientId"], account["clientSecret"], cluster["uuid"]


def test_an_admin_turns_ngc_catalog_on_and_a_viewer_sees_the_switches_read_only(
    service: Service, ngc_off_after: None
) -> None:
    client_id, secret, cluster_id = _viewer(service)
    on_cluster = f"clusters.{cluster_id}.distributedFrameworks.PyTorch"
    with journey("settings") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="General settings").click()
        for label in SWITCHES:
            expect(page.get_by_role("switch", name=label)).to_be_enabled()
        ngc = page.get_by_role("switch", name="NGC catalog")
        expect(ngc).not_to_be_checked()
        expect(page.get_by_role("switch", name="Data volumes")).to_be_checked()
        j.step("an admin sees every switch with its value")

        ngc.check()
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_role("switch", name="NGC catalog")).to_be_checked()
        j.step("NGC catalog turned on")
        assert service.api.get(f"/v1/k8s/setting/{NGC}").json() is True

        cluster = page.get_by_role("group", name="Cluster set-cluster: distributed frameworks")
        pytorch = cluster.get_by_role("switch", name="PyTorch on set-cluster")
        expect(pytorch).to_be_checked()
        pytorch.uncheck()
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_role("switch", name="PyTorch on set-cluster")).not_to_be_checked()
        expect(page.get_by_role("switch", name="NGC catalog")).to_be_checked()  # left as it was
        j.step("PyTorch turned off on one cluster")
        assert service.api.get(f"/v1/k8s/setting/{on_cluster}").json() is False
        assert service.api.get("/v1/k8s/setting/workloads.distributedFrameworks.PyTorch").json()

        page.get_by_role("link", name="Templates").click()
        page.get_by_role("link", name="+ New template").click()
        page.get_by_label("Scope").select_option(label="Project · set-vision")
        framework = page.get_by_label("Framework")
        expect(framework.locator("option[value=PyTorch]")).to_be_disabled()  # off on its cluster
        framework.select_option("TF")
        page.get_by_label("Workers & master", exact=True).check()
        page.get_by_label("Template name").fill("set-ddp")
        page.get_by_role("button", name="Continue").click()
        source = page.get_by_role("combobox", name="Image source", exact=True)
        expect(source.get_by_role("option", name="Select from the NGC catalog")).to_have_count(1)
        source.select_option(label="Select from the NGC catalog")
        j.step("the new-template form offers the NGC catalog")

        page.get_by_role("button", name="Sign out").click()
        sign_in(page, service.url, client_id, secret)
        page.goto(f"{service.url}/console/settings")
        expect(page.get_by_text("Only tenant administrators change these settings")).to_be_visible()
        for label in SWITCHES:
            expect(page.get_by_role("switch", name=label)).to_be_disabled()
        expect(page.get_by_role("switch", name="NGC catalog")).to_be_checked()
        expect(page.get_by_role("button", name="Save settings")).to_have_count(0)
        for switch in page.get_by_role("switch").all():
            expect(switch).to_be_disabled()
        j.step("a viewer sees the switches read-only")

        token = page.locator("input[name=_csrf_token]").first.get_attribute("value")
        answer = page.request.post(
            f"{service.url}/console/settings", form={"_csrf_token": token or ""}
        )
        assert answer.status == 403, answer.status
        assert "The settings were not saved" in answer.text()
    assert service.api.get(f"/v1/k8s/setting/{NGC}").json() is True  # the viewer changed none
    assert service.api.get(f"/v1/k8s/setting/{on_cluster}").json() is False
