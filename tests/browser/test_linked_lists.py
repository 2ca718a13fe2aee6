"""A linked environment's and compute resource's lists show every item, read-only and named as
that asset's, however many rows the form has of its own: the workers' and a master's that links
its own, after loading, after a refusal, and in the edit form; saving keeps them the asset's,
not the template's own."""

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, refused_next_to, sign_in
from tests.browser.template_steps import (
    compute_resource,
    created,
    entry,
    own_settings,
    project,
    pytorch_environment,
)
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

VARIABLES = [f"LINKED_{i}" for i in range(4)]
PORTS = [8000, 8001, 8002]
RESOURCES = [f"example.com/r{i}" for i in range(3)]


def _assets(service: Service, project_id: int) -> dict[str, str]:
    connections = [
        {
            "name": f"port-{port}",
            "internalToolInfo": {
                "toolType": "custom",
                "connectionType": "NodePort",
                "containerPort": port,
            },
        }
        for port in PORTS
    ]
    variables = [{"name": name, "value": str(i)} for i, name in enumerate(VARIABLES)]
    environment = pytorch_environment(
        service,
        project_id,
        "items-env",
        {
            "image": "pytorch/pytorch:2.5",
            "environmentVariables": variables,
            "connections": connections,
        },
    )
    compute = compute_resource(
        service,
        project_id,
        "items-gpu",
        {
            "cpuCoreRequest": 1,
            "extendedResources": [{"resource": r, "quantity": "1"} for r in RESOURCES],
        },
    )
    return {"environment": environment["meta"]["id"], "compute": compute["meta"]["id"]}


def _read_only(field: Locator, value: str, source: str) -> None:
    expect(field).to_have_value(value)
    expect(field).to_have_attribute("readonly", "")
    field_id = field.get_attribute("id")
    expect(field.page.locator(f"#{field_id}-hint")).to_have_text(
        f"From {source} (linked: read-only)"
    )


def _every_item_shown(page: Page, at: str) -> None:
    """Each variable, port and extended resource of the linked assets, under `at` (the field
    ids' prefix: f-spec or f-master-spec), read-only and named as the asset's."""
    for i, name in enumerate(VARIABLES):
        _read_only(
            page.locator(f"#{at}-environmentVariables-{i}-name"), name, "environment items-env"
        )
        _read_only(
            page.locator(f"#{at}-environmentVariables-{i}-value"), str(i), "environment items-env"
        )
    for i, port in enumerate(PORTS):
        _read_only(page.locator(f"#{at}-ports-{i}-container"), str(port), "environment items-env")
    for i, resource in enumerate(RESOURCES):
        _read_only(
            page.locator(f"#{at}-compute-extendedResources-{i}-resource"),
            resource,
            "compute resource items-gpu",
        )
    expect(page.locator(f"#{at}-environmentVariables-{len(VARIABLES)}-name")).to_have_count(0)


def _link(page: Page, select: str, asset: str, load: str) -> None:
    page.get_by_role("combobox", name=select, exact=True).select_option(label=asset)
    page.get_by_role("button", name=load).click()


def test_every_item_of_a_linked_asset_s_lists_is_shown_and_kept_the_asset_s(
    service: Service,
) -> None:
    made = _assets(service, int(project(service, "items-vision")["id"]))
    with journey("linked-lists") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        own_settings(page, service.url, "items-vision", "all-items-ddp", "Workers & master")
        _link(page, "Environment", "items-env", "Load environment")
        _link(page, "Compute resource", "items-gpu", "Load compute resource")
        _every_item_shown(page, "f-spec")
        j.step("every variable, port and extended resource of the linked assets")

        page.get_by_label("Different setup for the master").check()
        _link(page, "Master environment", "items-env", "Load master environment")
        _link(page, "Master compute resource", "items-gpu", "Load master compute resource")
        _every_item_shown(page, "f-master-spec")
        _every_item_shown(page, "f-spec")
        j.step("the master links its own: every item of them too")

        page.get_by_label("Number of workers").fill("two")
        page.get_by_role("button", name="Create template").click()
        workers = refused_next_to(page, "f-spec-numWorkers", "int")
        assert entry(service, "all-items-ddp") == {}
        _every_item_shown(page, "f-spec")
        _every_item_shown(page, "f-master-spec")
        j.step("refused, every linked item still shown")

        workers.fill("2")
        template = created(j, service, "all-items-ddp")
        assert template["assets"]["environment"] == made["environment"]
        assert template["assets"]["compute"] == made["compute"]
        assert template["master"]["assets"]["environment"] == made["environment"]
        assert template["master"]["assets"]["compute"] == made["compute"]
        for spec in (template["spec"], template["master"].get("spec") or {}):
            # The assets' items are theirs, not the template's own.
            assert not spec.get("environmentVariables")
            assert not spec.get("ports")
            assert not (spec.get("compute") or {}).get("extendedResources")
        combined = [v["name"] for v in template["combinedSpec"]["environmentVariables"]]
        assert combined == VARIABLES

        page.goto(f"{service.url}/console/templates/{template['meta']['id']}/edit")
        _every_item_shown(page, "f-spec")
        _every_item_shown(page, "f-master-spec")
        j.step("the edit form shows every item of the linked assets")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="all-items-ddp", exact=True)).to_be_visible()

    saved = entry(service, "all-items-ddp")
    for key in ("assets", "spec", "master"):
        assert saved[key] == template[key]  # saved unchanged
