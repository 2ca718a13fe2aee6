"""An edit of a template whose image comes from the NGC catalog once that switch is off: the
form shows the source as kept; saving is refused by the service's own rule, next to the field,
with the template unchanged; with the switch on again, saving keeps the source. The switch is
put back as it was, as the browser tests share one service."""

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]
NGC = "workloads.ngcCatalog"
KEPT = "Select from the NGC catalog (the NGC catalog is off: kept as it is)"


def _switch(service: Service, on: bool) -> None:
    service.api.put("/v1/k8s/setting", json={"key": NGC, "value": on}).raise_for_status()


@pytest.fixture
def ngc_as_it_was(service: Service) -> Iterator[bool]:
    was = bool(service.api.get(f"/v1/k8s/setting/{NGC}").json())
    yield was
    _switch(service, was)


def _template(service: Service) -> dict[str, Any]:
    cluster = service.made("/api/v1/clusters", {"name": "kept-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "kept-vision", "clusterId": cluster["uuid"]}
    )
    _switch(service, True)
    return service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "kept-ngc", "scopeType": "project", "scopeId": project["id"]},
            "spec": {
                "distributedFramework": "PyTorch",
                "numWorkers": 2,
                "imageSource": "ngcCatalog",
                "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            },
        },
    )


def _read(service: Service, template_id: str) -> tuple[dict[str, Any], str]:
    answer = service.api.get(f"/api/v1/workload-templates/{template_id}")
    answer.raise_for_status()
    return answer.json(), answer.headers["etag"]


def test_an_edit_keeps_an_image_source_the_form_would_not_offer(
    service: Service, ngc_as_it_was: bool
) -> None:
    template_id = _template(service)["meta"]["id"]
    _switch(service, False)
    before, opened_at = _read(service, template_id)
    with journey("kept-image-source") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/{template_id}/edit")
        source = page.locator("#f-spec-imageSource")  # the workers'; the master has its own
        expect(source.locator("option:checked")).to_have_text(KEPT)
        j.step("the NGC catalog kept as the image's source while the switch is off")

        page.get_by_label("Description").fill("tuned")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("alert")).to_contain_text("The template was not saved")
        expect(source).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#f-spec-imageSource-error")).to_contain_text("NGC catalog")
        expect(source.locator("option:checked")).to_have_text(KEPT)  # still kept, not changed
        j.step("the save refused next to the image source")
        after, version = _read(service, template_id)
        assert (after, version) == (before, opened_at)  # nothing written

        _switch(service, True)
        page.goto(f"{service.url}/console/templates/{template_id}/edit")
        expect(source.locator("option:checked")).to_have_text("Select from the NGC catalog")
        page.get_by_label("Description").fill("tuned")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="kept-ngc", exact=True)).to_be_visible()
        j.step("saved with the switch on: the source kept")

    saved, version = _read(service, template_id)
    assert version != opened_at
    assert saved["meta"]["description"] == "tuned"
    assert saved["spec"]["imageSource"] == "ngcCatalog"
    assert saved["spec"]["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"
