"""An environment's variables in the console: created with a custom value, a credential's key
and a pod field (a key the credential lacks refused next to that row's field first), shown on
its page with the other spec fields, then one removed and one added by its rows and saved, as
the API then answers."""

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _credential(service: Service) -> dict[str, Any]:
    cluster = service.made("/api/v1/clusters", {"name": "var-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "var-team", "clusterId": cluster["uuid"]}
    )
    answer = service.api.post(
        "/api/v1/asset/credentials/generic-secret",
        json={
            "meta": {"name": "var-token", "scope": "project", "projectId": int(project["id"])},
            "spec": {"keyValuePairs": [{"key": "token", "value": "s3cret"}]},
        },
    )
    assert answer.status_code in (201, 202, 204), answer.text
    listed = service.api.get("/api/v1/asset/credentials").json()["entries"]
    found: dict[str, Any] = next(e for e in listed if e["meta"]["name"] == "var-token")
    return found


def _spec(service: Service) -> dict[str, Any]:
    listed = service.api.get("/api/v1/asset/environment", params={"name": "var-train"})
    entries = listed.json()["entries"]
    assert len(entries) == 1, listed.text
    found: dict[str, Any] = entries[0]["spec"]
    return found


def test_environment_variables_are_created_refused_by_their_row_edited_and_removed(
    service: Service,
) -> None:
    credential = _credential(service)
    with journey("environment-variables") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="Environments").click()
        page.get_by_role("link", name="+ New environment").click()
        page.get_by_label("Scope").select_option(label="Project · var-team")
        page.get_by_label("Environment name").fill("var-train")
        page.get_by_label("Image URL").fill("python:3.12")
        first = page.get_by_role("group", name="Environment variable 1")
        first.get_by_label("Environment variable name").fill("LR")
        first.get_by_label("Custom value").fill("0.1")
        second = page.get_by_role("group", name="Environment variable 2")
        second.get_by_label("Environment variable name").fill("TOKEN")
        second.get_by_label("Environment variable source").select_option(label="Credential")
        expect(second.get_by_label("Custom value")).to_be_hidden()
        second.get_by_label("Credential", exact=True).select_option(
            label="var-token (genericSecret)"
        )
        second.get_by_label("Credential key").fill("nope")
        page.get_by_label("Run as a non-root user").select_option(label="Yes")
        page.get_by_label("Linux capabilities").select_option(["CHOWN", "KILL"])
        j.step("a new environment with a custom value and a credential's key")

        page.get_by_role("button", name="Create environment").click()
        alert = page.get_by_role("alert")
        expect(alert).to_contain_text("The environment was not created")
        expect(alert).to_contain_text("Environment variable 2: Credential key")
        second = page.get_by_role("group", name="Environment variable 2")
        key = second.get_by_label("Credential key")
        expect(key).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#f-spec-environmentVariables-1-credential-key-error")).to_contain_text(
            "no key 'nope'"
        )
        first = page.get_by_role("group", name="Environment variable 1")
        expect(first.get_by_label("Custom value")).to_have_value("0.1")
        j.step("a key the credential lacks refused next to its row's field")

        key.fill("token")
        third = page.get_by_role("group", name="Environment variable 3")
        third.get_by_label("Environment variable name").fill("POD")
        third.get_by_label("Environment variable source").select_option(label="A pod field")
        third.get_by_label("Pod field path").fill("metadata.name")
        page.get_by_role("button", name="Create environment").click()
        expect(page.get_by_role("heading", name="Environment var-train")).to_be_visible()
        second = page.get_by_role("group", name="Environment variable 2")
        expect(second.get_by_label("Credential", exact=True)).to_have_value(
            credential["meta"]["id"]
        )
        expect(page.get_by_label("Run as a non-root user")).to_have_value("true")
        j.step("the environment's page shows its variables and the other fields")
        spec = _spec(service)
        assert (spec["runAsNonRoot"], spec["capabilities"]) == (True, ["CHOWN", "KILL"])
        assert spec["environmentVariables"] == [
            {"name": "LR", "value": "0.1"},
            {"name": "TOKEN", "credential": {"assetId": credential["meta"]["id"], "key": "token"}},
            {"name": "POD", "podFieldRef": {"path": "metadata.name"}},
        ]

        first = page.get_by_role("group", name="Environment variable 1")
        first.get_by_label("Environment variable name").fill("")
        first.get_by_label("Custom value").fill("")
        fourth = page.get_by_role("group", name="Environment variable 4")
        fourth.get_by_label("Environment variable name").fill("MODE")
        fourth.get_by_label("Environment variable source").select_option(label="ConfigMap")
        fourth.get_by_label("ConfigMap name").fill("train-config")
        fourth.get_by_label("ConfigMap key").fill("mode")
        page.get_by_role("button", name="Preview the impact").click()
        expect(page.locator("#no-impact")).to_be_visible()
        page.get_by_role("button", name="Save environment").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        first = page.get_by_role("group", name="Environment variable 1")
        expect(first.get_by_label("Environment variable name")).to_have_value("TOKEN")
        j.step("one variable removed and one added by its rows, saved")
    assert _spec(service)["environmentVariables"] == [
        {"name": "TOKEN", "credential": {"assetId": credential["meta"]["id"], "key": "token"}},
        {"name": "POD", "podFieldRef": {"path": "metadata.name"}},
        {"name": "MODE", "configMap": {"name": "train-config", "key": "mode"}},
    ]
