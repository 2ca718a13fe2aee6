"""Templates as code in the console: a template's exported document, one field edited and pasted,
is planned as an update of exactly that field, with the asset its name resolved to; applied, the
template holds the edit; applied again at the same versions, the service's 409 is on the page."""

import pytest
import yaml
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _template(service: Service) -> str:
    cluster = service.made("/api/v1/clusters", {"name": "plan-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "plan-team", "clusterId": cluster["uuid"]}
    )
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "plan-env"},
            "spec": {"image": "python:3.12"},
        },
    )
    template = service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "plan-ddp", "scopeType": "project", "scopeId": project["id"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
            "assets": {"environment": environment["meta"]["id"]},
        },
    )
    return str(template["meta"]["id"])


def test_a_pasted_document_is_planned_as_one_field_applied_and_refused_once_moved(
    service: Service,
) -> None:
    template_id = _template(service)
    answer = service.api.get(
        "/api/v1/trainplate/template-documents", params={"scope": "project:plan-team"}
    )
    assert answer.status_code == 200, answer.text
    (document,) = [d["document"] for d in answer.json()["documents"]]
    document["spec"]["numWorkers"] = 5
    with journey("template-plans") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        nav = page.get_by_role("navigation", name="Workload manager")
        nav.get_by_role("link", name="Plans").click()
        page.get_by_label("YAML documents").fill("---\n" + yaml.safe_dump(document))
        page.get_by_role("button", name="Plan").click()
        expect(page.get_by_role("heading", level=2)).to_have_count(1)
        expect(page.get_by_role("heading", level=2)).to_contain_text("plan-ddp: update")
        changes = page.get_by_role("table", name="Changes to plan-ddp")
        expect(changes.get_by_role("row")).to_have_count(2)
        expect(changes.get_by_role("row").nth(1)).to_contain_text("/spec/numWorkers")
        expect(changes.get_by_role("row").nth(1)).to_contain_text("5")
        assets = page.get_by_role("table", name="Assets plan-ddp names")
        expect(assets).to_contain_text("plan-env")
        expect(page.get_by_text("Runnable.")).to_be_visible()
        j.step("one field planned, its environment resolved")

        applying = page.locator("form:has(input[name=action][value=apply])")
        sent_back: dict[str, str | float | bool] = {
            name: applying.locator(f"input[name={name}]").first.get_attribute("value") or ""
            for name in ("_csrf_token", "action", "versions", "documents", "scopes")
        }
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("status")).to_contain_text("Applied:")
        j.step("the plan applied")
        kept = service.api.get(f"/api/v1/workload-templates/{template_id}").json()
        assert kept["spec"]["numWorkers"] == 5

        # The same Apply again: the template has moved since the plan read it.
        again = page.request.post(f"{service.url}/console/template-plans", form=sent_back)
        assert again.status == 409, again.status
        assert "Conflict: the documents were not applied" in again.text()
        assert "plan-ddp" in again.text()

        page.get_by_label("YAML documents").fill("kind: [unclosed")
        page.get_by_role("button", name="Plan").click()
        expect(page.get_by_role("alert")).to_contain_text("not YAML at line 1")
        page.get_by_label("YAML documents").fill(
            yaml.safe_dump({**document, "assets": {"environment": {"name": "no-such-env"}}})
        )
        page.get_by_role("button", name="Plan").click()
        expect(page.get_by_role("alert")).to_contain_text("document 1")
        expect(page.get_by_role("alert")).to_contain_text("no-such-env")
        j.step("bad documents refused, naming the document")
    assert (
        service.api.get(f"/api/v1/workload-templates/{template_id}").json()["spec"]["numWorkers"]
        == 5
    )
