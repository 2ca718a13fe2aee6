"""A template's environment variables take their values from a custom value, a shared secret
or a ConfigMap, the guide's choice per variable: the form shows the fields of the source chosen,
a key the spec refuses is named next to its field with nothing written, and an edit keeps a
variable whose source the form has no fields for (a user credential) as it is."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import fill, journey, refused_next_to, sign_in
from tests.browser.template_steps import created, entry, new_template, project
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def test_variables_from_a_shared_secret_and_a_configmap(service: Service) -> None:
    with new_template(service, "variable-sources", "vars-vision", "vars-ddp") as j:
        page = j.page
        first = page.get_by_role("group", name="Environment variable 1")
        first.get_by_label("Environment variable name").fill("HF_TOKEN")
        expect(first.get_by_label("Custom value")).to_be_visible()
        expect(first.get_by_label("Shared secret name")).to_be_hidden()
        first.get_by_label("Environment variable source").select_option(label="Shared secret")
        expect(first.get_by_label("Custom value")).to_be_hidden()
        fill(first, {"Shared secret name": "Not_A_Name", "Shared secret key": "token"})
        second = page.get_by_role("group", name="Environment variable 2")
        second.get_by_label("Environment variable name").fill("APP_MODE")
        source = second.get_by_label("Environment variable source")
        source.focus()
        source.press("End")  # the keyboard picks the last source: ConfigMap
        expect(source).to_have_value("configMap")
        fill(second, {"ConfigMap name": "app-config", "ConfigMap key": "mode"})
        j.step("a variable from a shared secret, another from a ConfigMap")

        page.get_by_role("button", name="Create template").click()
        name = refused_next_to(page, "f-spec-environmentVariables-0-secret-name", "matching regex")
        expect(name).to_be_visible()  # the chosen source's fields stay shown
        assert entry(service, "vars-ddp") == {}  # nothing was written
        j.step("a shared secret name the spec refuses, named next to its field")

        name.fill("hf-secret")
        made = created(j, service, "vars-ddp")

    assert made["spec"]["environmentVariables"] == [
        {"name": "HF_TOKEN", "secret": {"name": "hf-secret", "key": "token"}},
        {"name": "APP_MODE", "configMap": {"name": "app-config", "key": "mode"}},
    ]


def test_an_edit_keeps_a_variable_from_a_user_credential(service: Service) -> None:
    made_in = project(service, "kept-vars")
    variables = [
        {"name": "MY_KEY", "userCredential": {"name": "my-ngc", "key": "apiKey"}},
        {"name": "LEVEL", "value": "debug", "description": "log level"},
    ]
    made = service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "kept-vars-ddp", "scopeType": "project", "scopeId": made_in["id"]},
            "spec": {
                "distributedFramework": "PyTorch",
                "image": "python:3.12",
                "environmentVariables": variables,
            },
            "masterSpecSameAsWorker": False,
        },
    )
    with journey("variable-sources-edit") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/{made['meta']['id']}/edit")
        first = page.get_by_role("group", name="Environment variable 1")
        source = first.get_by_label("Environment variable source")
        expect(source.locator("option:checked")).to_have_text("My credentials: kept as it is")
        second = page.get_by_role("group", name="Environment variable 2")
        expect(second.get_by_label("Custom value")).to_have_value("debug")
        second.get_by_label("Environment variable source").select_option(label="ConfigMap")
        fill(second, {"ConfigMap name": "levels", "ConfigMap key": "level"})
        j.step("a variable kept as it is, another moved to a ConfigMap")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="kept-vars-ddp", exact=True)).to_be_visible()
        j.step("saved")

    assert entry(service, "kept-vars-ddp")["spec"]["environmentVariables"] == [
        variables[0],
        {
            "name": "LEVEL",
            "configMap": {"name": "levels", "key": "level"},
            "description": "log level",
        },
    ]
