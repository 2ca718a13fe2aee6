"""End to end through `trainplate dev`: a workload submitted over HTTP from a template travels
API -> event store -> relay -> JetStream -> submitter -> local processes -> outcome events ->
projector, and reads back Completed with each replica's output; then every process's metrics
show it, and each metric the Grafana dashboard asks for is among them."""

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
from tests.unit.test_dashboard import dashboard_metrics

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
        wrong = {**login, "AppSecret": "not-the-secret"}
        assert httpx.post(f"{api}/api/v1/token", json=wrong, timeout=10).status_code == 401
        with httpx.Client(base_url=api, headers={"authorization": f"Bearer {token}"}) as http:
            workload = submit(http)
            state = wait_for_phase(http, workload["workloadId"], "Completed", within_s=120)
            assert state["phase"] == "Completed", state
            fan_out(http)
            endpoints = json.loads((replica_work_dir / "data" / "endpoints.json").read_text())
            scrapes = scraped_until_fanned_out(endpoints["metrics"])
            projector, scraped = scrapes["projector"], scrapes["api"]
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
    # What an operator asks of each process, after one workload ran and one asset fanned out.
    assert value(scraped, "trainplate_workloads", phase="Completed") == 1
    route = {"route": "/api/v1/workloads/distributed", "method": "POST"}
    assert value(scraped, "trainplate_http_requests_total", **route, status="202") == 1
    assert value(scraped, "trainplate_http_request_duration_seconds_count", **route) == 1
    assert value(scraped, "trainplate_login_failures_total", reason="bad_credentials") == 1
    for delay in ("submitted", "running"):
        assert value(projector, f"trainplate_workload_requested_to_{delay}_seconds_count") == 1
    assert value(projector, "trainplate_fanout_duration_seconds_count") >= 1
    assert value(projector, "trainplate_fanout_templates_total") >= 1
    assert value(scrapes["relay"], "trainplate_relay_events_published_total") > 0
    call = {"backend": "local", "call": "submit", "result": "ok"}
    assert (
        value(scrapes["submitter"], "trainplate_backend_call_duration_seconds_count", **call) == 1
    )
    assert value(scrapes["submitter"], "trainplate_submitter_messages_total", outcome="acked") >= 1
    exported = {line.split("{")[0].split()[0] for text in scrapes.values()
                for line in text.splitlines() if line and not line.startswith("#")}  # fmt: skip
    assert dashboard_metrics() <= exported, sorted(dashboard_metrics() - exported)


def fan_out(http: httpx.Client) -> None:
    """An environment, a template linking it, and a change to the environment to fan out."""
    body = {"meta": {"name": "env", "scope": "tenant"}, "spec": {"image": "python:3.12"}}
    environment = http.post("/api/v1/asset/environment", json=body).json()["meta"]["id"]
    linking = {
        "meta": {"name": "linked", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 1},
        "assets": {"environment": environment},
    }
    assert http.post("/api/v1/workload-templates/distributed", json=linking).status_code == 202
    changed = {"meta": {"name": "env"}, "spec": {"image": "python:3.13"}}
    assert http.put(f"/api/v1/asset/environment/{environment}", json=changed).status_code == 202


def scraped_until_fanned_out(urls: dict[str, str], within_s: float = 30) -> dict[str, str]:
    """Each process's metrics, once the projector has counted the fan-out."""
    deadline = time.monotonic() + within_s
    while True:
        scrapes = {name: httpx.get(url, timeout=5).text for name, url in urls.items()}
        if value(scrapes["projector"], "trainplate_fanout_templates_total") >= 1:
            return scrapes
        if time.monotonic() > deadline:
            return scrapes
        time.sleep(0.25)


def value(scrape: str, name: str, **labels: str) -> float:
    """The sample `name` with these labels (among others) in Prometheus text, else 0."""
    for line in scrape.splitlines():
        if not line.startswith(name) or line[len(name) : len(name) + 1] not in ("{", " "):
            continue
        sample, _, number = line.rpartition(" ")
        if all(f'{key}="{wanted}"' in sample for key, wanted in labels.items()):
            return float(number)
    return 0.0


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
