"""Data sources in the console: the list of every kind with the templates loading each, a new
NFS data source (a refusal next to its field first) edited (not over a change made meanwhile
elsewhere) and deleted, one a template loads not deleted, and a new PVC of its scope's classes."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.browser.test_storage_classes import a_configured_cluster
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def loaded(service: Service) -> dict[str, Any]:
    """A PVC data source a template loads, in a project of its own."""
    cluster = service.made("/api/v1/clusters", {"name": "ds-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "ds-vision", "clusterId": cluster["uuid"]}
    )
    pvc = service.made(
        "/api/v1/asset/datasource/pvc",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "ds-claim"},
            "spec": {"existingPvc": True, "claimName": "datasets", "path": "/data"},
        },
    )
    service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "ds-ddp", "scopeType": "project", "scopeId": project["id"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"},
            "assets": {"datasources": [{"id": pvc["meta"]["id"], "kind": "pvc"}]},
        },
    )
    return pvc


def test_a_data_source_is_created_edited_and_deleted_but_not_while_a_template_loads_it(
    service: Service, loaded: dict[str, Any]
) -> None:
    with journey("data-sources") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="Data sources").click()
        row = page.get_by_role("row").filter(has_text="ds-claim")
        expect(row).to_contain_text("PVC")
        expect(row).to_contain_text("/data")
        expect(row).to_contain_text("ds-ddp")
        j.step("the data sources, with the templates that load each")

        page.get_by_role("link", name="+ New data source").click()
        for kind in ("NFS", "PVC", "S3 Bucket", "Git", "Host path", "ConfigMap", "Secret"):
            expect(page.get_by_role("link", name=kind, exact=True)).to_be_visible()
        j.step("the kinds of data source")

        page.get_by_role("link", name="NFS", exact=True).click()
        expect(page.get_by_label("Prevent data modification (read-only)")).to_be_checked()
        page.get_by_label("Scope").select_option(label="Project · ds-vision")
        page.get_by_label("NFS server (host name or host IP)").fill("nfs.example.com")
        page.get_by_label("NFS path").fill("/exports/datasets")
        page.get_by_label("Container path").fill("/mnt/datasets")
        page.get_by_role("button", name="Create data source").click()
        expect(page.get_by_role("alert")).to_contain_text("The data source was not created")
        name = page.get_by_label("Data source name")
        expect(name).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("NFS path")).to_have_value("/exports/datasets")
        j.step("a nameless data source refused next to its name")

        name.fill("ds-nfs")
        page.get_by_role("button", name="Create data source").click()
        expect(page.get_by_role("heading", name="Data source ds-nfs")).to_be_visible()
        expect(page.get_by_label("Container path")).to_have_value("/mnt/datasets")
        j.step("the new NFS data source's page")

        # Someone else changes it while the page is open: the save made on what the page
        # showed is refused, and their change stays.
        nfs = "/api/v1/asset/datasource/nfs"
        (made,) = service.api.get(nfs, params={"name": "ds-nfs"}).json()["entries"]
        theirs = {
            "meta": {"name": "ds-nfs"},
            "spec": {**made["spec"], "server": "nfs2.example.com"},
        }
        changed = service.api.put(f"{nfs}/{made['meta']['id']}", json=theirs)
        assert changed.status_code in (200, 202), changed.text
        page.get_by_label("Container path").fill("/mnt/shared")
        page.get_by_role("button", name="Save data source").click()
        expect(page.get_by_role("alert")).to_contain_text("changed since this page was opened")
        (kept,) = service.api.get(nfs, params={"name": "ds-nfs"}).json()["entries"]
        assert kept["spec"]["server"] == "nfs2.example.com"
        assert kept["spec"]["mountPath"] == "/mnt/datasets"
        j.step("an edit made meanwhile elsewhere is not overwritten")

        page.goto(page.url)  # the page again, as it now is
        expect(page.get_by_label("NFS server (host name or host IP)")).to_have_value(
            "nfs2.example.com"
        )
        page.get_by_label("Container path").fill("/mnt/shared")
        page.get_by_label("Prevent data modification (read-only)").uncheck()
        page.get_by_role("button", name="Save data source").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_label("Container path")).to_have_value("/mnt/shared")
        expect(page.get_by_label("Prevent data modification (read-only)")).not_to_be_checked()
        j.step("the data source edited")

        page.get_by_role("button", name="Delete data source").click()
        expect(page.get_by_role("heading", name="Data sources")).to_be_visible()
        expect(page.get_by_role("row").filter(has_text="ds-nfs")).to_have_count(0)
        j.step("deleted, gone from the list")

        page.get_by_role("link", name="ds-claim").click()
        expect(page.get_by_label("Existing PVC")).to_be_checked()
        expect(page.get_by_label("Claim name")).to_have_value("datasets")
        page.get_by_role("button", name="Delete data source").click()
        expect(page.get_by_role("alert")).to_contain_text("ds-ddp")
        j.step("a data source a template loads is not deleted")
    kept = service.api.get("/api/v1/asset/datasource/pvc", params={"name": "ds-claim"})
    assert kept.json()["entries"], kept.text


def test_a_new_pvc_offers_its_scope_s_storage_classes_as_the_volume_step_does(
    service: Service,
) -> None:
    cluster = service.made("/api/v1/clusters", {"name": "pvc-cluster"})["uuid"]
    service.made("/api/v1/org-unit/projects", {"name": "pvc-llm", "clusterId": cluster})
    a_configured_cluster(service, cluster)
    claim = "f-spec-claimInfo"
    with journey("pvc-storage-classes") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/data-sources/pvc/new")
        expect(page.locator(f"input#{claim}-storageClass")).to_be_visible()  # no scope: typed
        page.get_by_label("Data source name").fill("pvc-scratch")
        page.get_by_label("Scope").select_option(label="Project · pvc-llm")
        storage_class = page.locator(f"select#{claim}-storageClass")
        expect(storage_class.locator("option")).to_have_text(["None", "fast", "standard (default)"])
        expect(page.get_by_label("Data source name")).to_have_value("pvc-scratch")  # kept
        j.step("the scope chosen: its cluster's classes offered")

        storage_class.select_option("fast")
        expect(page.locator(f"#{claim}-accessModes")).to_be_hidden()  # RWO alone
        expect(page.locator(f"#{claim}-size--fast-hint")).to_contain_text("from 1Gi; to 10Gi")
        page.locator(f"#{claim}-size--fast").fill("100Gi")
        page.locator("#f-spec-path").fill("/scratch")
        page.get_by_role("button", name="Create data source").click()
        expect(page.get_by_role("alert")).to_contain_text("The data source was not created")
        size = page.locator(f"#{claim}-size--fast")
        expect(size).to_have_attribute("aria-invalid", "true")
        expect(page.locator(f"#{claim}-size--fast-error")).to_contain_text("'fast' takes sizes")
        j.step("a size the class does not take, refused next to it")

        expect(page.locator(f"#{claim}-storageClass")).to_have_value("fast")
        size.fill("")  # the class's default, unasked
        page.get_by_role("button", name="Create data source").click()
        expect(page.get_by_role("heading", name="Data source pvc-scratch")).to_be_visible()
        expect(page.locator(f"#{claim}-storageClass")).to_have_value("fast")
        j.step("made with the class's default size")

    pvc = "/api/v1/asset/datasource/pvc"
    (made,) = service.api.get(pvc, params={"name": "pvc-scratch"}).json()["entries"]
    assert made["spec"]["claimInfo"]["storageClass"] == "fast"
    assert made["spec"]["claimInfo"]["size"] == "5Gi"
