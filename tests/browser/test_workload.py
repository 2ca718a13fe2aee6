"""A workload submitted from a template's page, watched on its own page as it moves to
Completed, with each replica's output."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

PRINT_RANK = "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])"
RUN_WITHIN_MS = 120_000


def test_a_workload_submitted_from_a_template_runs_to_completed_with_its_logs(
    service: Service,
) -> None:
    cluster = service.made("/api/v1/clusters", {"name": "run-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "run-team", "clusterId": cluster["uuid"]}
    )
    template = {
        "meta": {"name": "run-hello", "scopeType": "project", "scopeId": project["id"]},
        "spec": {
            "distributedFramework": "PyTorch",
            "numWorkers": 1,
            "image": "python:3.12",
            "command": f'python -c "{PRINT_RANK}"',
        },
    }
    made = service.made("/api/v1/workload-templates/distributed", template)
    with journey("workload") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{service.url}/console/templates/{made['meta']['id']}")
        page.get_by_role("button", name="Submit").click()
        expect(page.locator("#workload-name-error")).to_be_visible()  # no name: refused
        j.step("a workload without a name is refused")

        page.get_by_label("Workload name").fill("hello-run")
        page.get_by_label("Project").select_option(label="run-team")
        page.get_by_role("button", name="Submit").click()
        expect(page.get_by_role("heading", name="Workload hello-run")).to_be_visible()
        j.step("the workload, just submitted")

        phase = page.locator("#workload-phase")
        expect(phase).to_have_text(re.compile("^(Completed|Failed)$"), timeout=RUN_WITHIN_MS)
        status = phase.locator("xpath=..").inner_text()  # the phase and, if failed, why
        assert phase.inner_text() == "Completed", f"the workload ended {status}"
        expect(page.get_by_label("Output of master-0")).to_have_text("rank 0 of 2")
        expect(page.get_by_label("Output of worker-0")).to_have_text("rank 1 of 2")
        j.step("completed, with each replica's output")
