"""The workloads list and a workload's actions: the workloads, newest first, with their project,
phase and template; a running one's pods, suspended (its pods gone), resumed (a second run) and
deleted (gone from the list); a completed one's suspend refused on its page."""

import re
import socket
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

RUN_WITHIN_MS = 120_000


def _submitted(service: Service) -> tuple[dict[str, Any], dict[str, Any]]:
    """A workload that completes at once, then one that sleeps until it is stopped."""
    cluster = service.made("/api/v1/clusters", {"name": "wl-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "wl-team", "clusterId": cluster["uuid"]}
    )
    made = []
    for name, command in (
        ("wl-hello", "python -c \"print('hello')\""),
        ("wl-sleep", 'python -c "import time; time.sleep(600)"'),
    ):
        template = service.made(
            "/api/v1/workload-templates/distributed",
            {
                "meta": {"name": name, "scopeType": "project", "scopeId": project["id"]},
                "spec": {
                    "distributedFramework": "PyTorch",
                    "numWorkers": 1,
                    "image": "python:3.12",
                    "command": command,
                },
            },
        )
        made.append(
            service.made(
                "/api/v1/workloads/distributed",
                {
                    "name": f"{name}-run",
                    "projectId": project["id"],
                    "clusterId": cluster["uuid"],
                    "templateId": template["meta"]["id"],
                },
            )
        )
    return made[0], made[1]


def test_workloads_are_listed_and_suspended_resumed_deleted_or_refused_on_their_page(
    service: Service,
) -> None:
    hello, _ = _submitted(service)
    with journey("workloads") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.get_by_role("link", name="Workloads").click()
        expect(page.get_by_role("heading", name="Workloads")).to_be_visible()
        rows = page.get_by_role("row").filter(has_text=re.compile(r"wl-(hello|sleep)-run"))
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("wl-sleep-run")  # newest first
        expect(rows.nth(1)).to_contain_text("wl-hello-run")
        expect(rows.nth(0)).to_contain_text("wl-team")
        expect(rows.nth(0).get_by_role("link", name="wl-sleep", exact=True)).to_be_visible()
        j.step("the workloads, newest first, with their template")

        rows.nth(1).get_by_role("link", name="wl-hello-run").click()
        phase = page.locator("#workload-phase")
        expect(phase).to_have_text(re.compile("^(Completed|Failed)$"), timeout=RUN_WITHIN_MS)
        page.get_by_role("button", name="Suspend workload").click()
        expect(page.get_by_role("alert")).to_contain_text(
            f"cannot suspend workload {hello['workloadId']}: it is"
        )
        expect(page.locator("#workload-phase")).to_have_text(re.compile("^(Completed|Failed)$"))
        j.step("a finished workload's suspend refused on its page")

        page.get_by_role("navigation").get_by_role("link", name="Workloads").click()
        page.get_by_role("link", name="wl-sleep-run").click()
        expect(page.get_by_role("link", name="wl-sleep", exact=True)).to_be_visible()
        expect(page.locator("#workload-phase")).to_have_text("Running", timeout=RUN_WITHIN_MS)
        pods = page.get_by_role("table", name="The pods of its current run")
        worker = pods.get_by_role("row").filter(has_text="-worker-0")
        expect(worker).to_contain_text("Running", timeout=RUN_WITHIN_MS)
        expect(worker).to_contain_text(socket.gethostname())
        j.step("a running workload with its pods")

        page.get_by_role("button", name="Suspend workload").click()
        expect(page.get_by_role("status")).to_have_text("Suspend asked for.")
        expect(page.locator("#workload-phase")).to_have_text("Stopped", timeout=RUN_WITHIN_MS)
        expect(pods.get_by_role("row").filter(has_text="-worker-0")).to_have_count(0)
        j.step("suspended: its pods gone")

        page.get_by_role("button", name="Resume workload").click()
        expect(page.get_by_role("status")).to_have_text("Resume asked for.")
        expect(page.locator("#workload-phase")).to_have_text("Running", timeout=RUN_WITHIN_MS)
        run = page.locator("#workload-status dd").nth(1)
        expect(run).to_have_text("2")
        j.step("resumed: its second run")

        page.get_by_role("button", name="Delete workload").click()
        expect(page.get_by_role("heading", name="Workloads")).to_be_visible()
        expect(page.get_by_role("row").filter(has_text="wl-sleep-run")).to_have_count(0)
        j.step("deleted: gone from the list")
