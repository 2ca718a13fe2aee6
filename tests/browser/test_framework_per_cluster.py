"""A framework turned off on a cluster (General settings, per cluster) is disabled in the
new-template form for the scopes in that cluster, and said so, and enabled again for a scope
elsewhere; a form sent with it all the same (as without scripts) is refused at CONTINUE next to
the framework, by the rule the creation applies."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.browser.template_steps import entry, project
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


@pytest.fixture
def pytorch_off(service: Service) -> Iterator[str]:
    """PyTorch off on the cluster of project fw-off, on again afterwards (the service is
    shared by the browser tests)."""
    cluster = project(service, "fw-off")["clusterId"]
    project(service, "fw-on")
    key = f"clusters.{cluster}.distributedFrameworks.PyTorch"
    service.api.put("/v1/k8s/setting", json={"key": key, "value": False}).raise_for_status()
    yield cluster
    service.api.put("/v1/k8s/setting", json={"key": key, "value": True}).raise_for_status()


def test_a_framework_off_on_the_scopes_cluster_is_not_offered(
    service: Service, pytorch_off: str
) -> None:
    with journey("framework-per-cluster") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/new")
        framework = page.get_by_label("Framework")
        pytorch = framework.locator("option[value=PyTorch]")
        page.get_by_label("Scope").select_option(label="Project · fw-off")
        expect(pytorch).to_be_disabled()
        expect(page.locator("#f-spec-distributedFramework-off")).to_have_text(
            "Turned off on this scope's cluster (General settings): PyTorch"
        )
        expect(framework).not_to_have_value("PyTorch")
        j.step("PyTorch disabled for a project on the cluster that turns it off")

        page.get_by_label("Scope").select_option(label="Project · fw-on")
        expect(pytorch).to_be_enabled()
        framework.select_option("PyTorch")
        j.step("PyTorch offered for a project elsewhere")

        page.get_by_label("Scope").select_option(label="Project · fw-off")
        # What a page without scripts sends: the framework as chosen before the scope.
        pytorch.evaluate("option => { option.disabled = false; option.selected = true; }")
        page.get_by_label("Workers only", exact=True).check()
        page.get_by_label("Template name").fill("fw-ddp")
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("#f-spec-distributedFramework-error")).to_contain_text("PyTorch")
        expect(framework).to_have_attribute("aria-invalid", "true")
        expect(pytorch).to_be_disabled()
        j.step("sent all the same: refused at CONTINUE next to the framework")
    assert entry(service, "fw-ddp") == {}
