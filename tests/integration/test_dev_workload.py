"""End to end through `trainplate dev`: a workload submitted over HTTP from a template travels
API -> event store -> relay -> JetStream -> submitter -> local processes -> outcome events ->
projector, and reads back Completed with each replica's output."""

import json
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.cli.embedded import free_port
from tests.integration.test_dev_smoke import ADMIN_SECRET, start_dev
from tests.processes import wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PRINT_RANK = "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])"


def test_a_workload_submitted_over_http_runs_locally_and_completes(replica_work_dir: Path) -> None:
    port = free_port()
    dev = start_dev(replica_work_dir / "data", port)
    api = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(f"{api}/readyz", dev, within_s=120)
        login = {"grantType": "app_token", "AppId": "trainplate-admin", "AppSecret": ADMIN_SECRET}
        token = httpx.post(f"{api}/api/v1/token", json=login, timeout=10).json()["accessToken"]
        with httpx.Client(base_url=api, headers={"authorization": f"Bearer {token}"}) as http:
            workload = submit(http)
            state = wait_for_phase(http, workload["workloadId"], "Completed", within_s=120)
            assert state["phase"] == "Completed", state
            endpoints = json.loads((replica_work_dir / "data" / "endpoints.json").read_text())
            projector = httpx.get(endpoints["metrics"]["projector"], timeout=5).text
            scraped = http.get("/metrics").text
            logs = {
                replica: http.get(
                    f"/api/v1/workloads/{workload['workloadId']}/logs",
                    params={"replica": replica},
                ).text
                for replica in ("master-0", "worker-0")
            }
    finally:
        dev.send_signal(signal.SIGTERM)
        output = dev.communicate(timeout=60)[0].decode(errors="replace")
    assert dev.returncode == 0, output
    assert logs == {"master-0": "rank 0 of 2\n", "worker-0": "rank 1 of 2\n"}
    # The projector applied the workload's events and says so on its own metrics port.
    applied = 'trainplate_projection_events_applied_total{projection="workload_catalogue"}'
    assert applied in projector
    assert 'trainplate_follower_lag_events{follower="workload_catalogue"}' in scraped


def submit(http: httpx.Client) -> dict[str, Any]:
    cluster = http.post("/api/v1/clusters", json={"name": "local"}).json()
    body = {"name": "team", "clusterId": cluster["uuid"]}
    project = http.post("/api/v1/org-unit/projects", json=body).json()
    template = {
        "meta": {"name": "hello", "scopeType": "project", "scopeId": project["id"]},
        "spec": {
            "distributedFramework": "PyTorch",
            "numWorkers": 1,
            "image": "python:3.12",
            "command": f'python -c "{PRINT_RANK}"',
        },
    }
    made = http.post("/api/v1/workload-templates/distributed", json=template)
    assert made.status_code == 202, made.text
    submission = {
        "name": "hello-run",
        "projectId": project["id"],
        "clusterId": cluster["uuid"],
        "templateId": made.json()["meta"]["id"],
    }
    submitted = http.post("/api/v1/workloads/distributed", json=submission)
    assert submitted.status_code == 202, submitted.text
    return submitted.json()  # type: ignore[no-any-return]


def wait_for_phase(
    http: httpx.Client, workload_id: str, phase: str, within_s: float
) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        answer = http.get(f"/api/v1/workloads/{workload_id}")
        if answer.status_code == 200:
            state = answer.json()
            if state["phase"] in (phase, "Failed"):
                return state
        time.sleep(0.25)
    return state
