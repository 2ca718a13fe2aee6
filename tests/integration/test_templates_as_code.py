"""Templates as code end to end: `trainplate templates` against `trainplate dev`, used as a CI
script uses it (no sleeps, retries or special headers): export, edit, plan, apply, history; an
edit between plan and apply refuses the whole apply; --prune deletes only where it is told;
--scope where a name is in two scopes; a pinned submission, saved as a template."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from infra.cli.embedded import free_port
from tests.integration.test_dev_smoke import ADMIN_SECRET, start_dev
from tests.processes import wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEMPLATES = "/api/v1/workload-templates/distributed"


class Run:
    """The `trainplate` command with a profile of its own (XDG_CONFIG_HOME)."""

    def __init__(self, config: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINPLATE_")}
        self.env["XDG_CONFIG_HOME"] = str(config)

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "infra.cli", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture
def api(server_dir: Path) -> Iterator[str]:
    port = free_port()
    with (server_dir / "dev.log").open("wb") as log:
        dev = start_dev(server_dir / "data", port, output=log)
        try:
            wait_until_ready(f"http://127.0.0.1:{port}/readyz", dev, within_s=120)
            yield f"http://127.0.0.1:{port}"
        finally:
            dev.send_signal(signal.SIGTERM)
            dev.wait(timeout=60)


def admin_client(url: str) -> httpx.Client:
    login = {"grantType": "app_token", "AppId": "trainplate-admin", "AppSecret": ADMIN_SECRET}
    token = httpx.post(f"{url}/api/v1/token", json=login, timeout=10).json()["accessToken"]
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def made(answer: httpx.Response) -> Any:
    assert answer.status_code < 300, answer.text
    return answer.json()


def setup(client: httpx.Client) -> dict[str, Any]:
    """Two projects; an environment and a compute resource; bert and old in llm, keep in vision."""
    cluster = made(client.post("/api/v1/clusters", json={"name": "gitops-east"}))
    projects = {
        name: made(client.post("/api/v1/org-unit/projects",
                               json={"name": name, "clusterId": cluster["uuid"]}))
        for name in ("llm", "vision")
    }  # fmt: skip
    environment = {
        "meta": {"name": "torch", "scope": "tenant",
                 "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"}},
        "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    }  # fmt: skip
    env = made(client.post("/api/v1/asset/environment", json=environment))["meta"]["id"]
    compute = {"meta": {"name": "a100", "scope": "tenant"}, "spec": {"gpuDevicesRequest": 1}}
    gpu = made(client.post("/api/v1/asset/compute", json=compute))["meta"]["id"]
    for name, project in (("bert", "llm"), ("old", "llm"), ("keep", "vision")):
        body = {
            "meta": {"name": name, "scopeType": "project", "scopeId": projects[project]["id"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
            "assets": {"environment": env, "compute": gpu},
        }
        made(client.post(TEMPLATES, json=body))
    return projects


def names(client: httpx.Client) -> list[str]:
    return sorted(t["meta"]["name"] for t in made(client.get(TEMPLATES))["entries"])


def test_export_edit_plan_apply_history_a_refused_apply_and_a_prune(
    api: str, tmp_path: Path
) -> None:
    with admin_client(api) as client:
        journey(api, client, tmp_path)


def journey(api: str, client: httpx.Client, tmp_path: Path) -> None:
    trainplate = Run(tmp_path / "config")
    projects = setup(client)

    logged_in = trainplate("login", "--url", api, "--app-id", "trainplate-admin",
                           "--app-secret", ADMIN_SECRET)  # fmt: skip
    assert logged_in.returncode == 0, logged_in.stderr
    profile = tmp_path / "config" / "trainplate" / "profile.json"
    assert profile.stat().st_mode & 0o777 == 0o600

    folder = tmp_path / "templates"
    exported = trainplate("templates", "export", "--scope", "project:llm", "-o", str(folder))
    assert exported.returncode == 0, exported.stderr
    bert = folder / "project-llm" / "bert.yaml"
    assert sorted(p.name for p in (folder / "project-llm").iterdir()) == ["bert.yaml", "old.yaml"]
    unchanged = trainplate("templates", "plan", "-f", str(folder))
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr

    document = yaml.safe_load(bert.read_text())
    document["spec"]["numWorkers"] = 4
    bert.write_text(yaml.safe_dump(document, sort_keys=False))
    planned = trainplate("templates", "plan", "-f", str(folder), "-o", "json")
    assert planned.returncode == 2, planned.stderr
    plan = json.loads(planned.stdout)
    (update,) = [t for t in plan["templates"] if t["action"] != "unchanged"]
    assert (update["name"], [c["field"] for c in update["changes"]]) == (
        "bert",
        ["/spec/numWorkers"],
    )
    shown = trainplate("templates", "plan", "-f", str(folder))
    assert shown.returncode == 2
    assert "/spec/numWorkers: 2 -> 4" in shown.stdout

    applied = trainplate("templates", "apply", "-f", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    history = trainplate("templates", "history", "bert")
    assert history.returncode == 0, history.stderr
    last = history.stdout.strip().splitlines()[-2]  # the table's last row, above its border
    assert "template.updated.v1" in last
    assert "trainplate-admin" in last
    assert trainplate("templates", "plan", "-f", str(folder)).returncode == 0

    # Planned, saved, then edited by someone else before the apply: nothing is applied.
    document["spec"]["numWorkers"] = 6
    bert.write_text(yaml.safe_dump(document, sort_keys=False))
    saved = tmp_path / "plan.json"
    saved.write_text(trainplate("templates", "plan", "-f", str(folder), "-o", "json").stdout)
    bert_id = update["templateId"]
    made(client.patch(f"{TEMPLATES}/{bert_id}", json={"spec": {"numWorkers": 9}}))
    refused = trainplate("templates", "apply", "--plan", str(saved), "--yes")
    assert refused.returncode == 1
    assert "template project:llm/bert moved from version 2 to 3" in refused.stderr
    assert made(client.get(f"{TEMPLATES}/{bert_id}"))["spec"]["numWorkers"] == 9

    # Pruned in project llm only: old goes, keep (in vision) stays.
    (folder / "project-llm" / "old.yaml").unlink()
    pruned = trainplate("templates", "plan", "-f", str(folder), "--prune",
                        "--scope", "project:llm", "-o", "json")  # fmt: skip
    assert pruned.returncode == 2
    actions = {t["name"]: t["action"] for t in json.loads(pruned.stdout)["templates"]}
    assert actions == {"bert": "update", "old": "delete"}
    applied = trainplate("templates", "apply", "-f", str(folder), "--prune",
                         "--scope", "project:llm", "--yes")  # fmt: skip
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert names(client) == ["bert", "keep"]
    assert made(client.get(f"{TEMPLATES}/{bert_id}"))["spec"]["numWorkers"] == 6

    # A second bert, in vision: the name alone is refused, --scope says which.
    other = {
        "meta": {"name": "bert", "scopeType": "project", "scopeId": projects["vision"]["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 1, "image": "busybox:1"},
    }
    made(client.post(TEMPLATES, json=other))
    ambiguous = trainplate("templates", "rollback", "bert", "--to-version", "1")
    assert ambiguous.returncode == 1
    assert "say which with --scope" in ambiguous.stderr
    rolled = trainplate("templates", "rollback", "bert", "--scope", "project:llm",
                        "--to-version", "1")  # fmt: skip
    assert rolled.returncode == 0, rolled.stderr
    assert made(client.get(f"{TEMPLATES}/{bert_id}"))["spec"]["numWorkers"] == 2
    history = trainplate("templates", "history", "bert", "--scope", "project:vision@gitops-east")
    assert history.returncode == 0, history.stderr
    assert "template.created.v1" in history.stdout
    assert "template.updated.v1" not in history.stdout
    diff = trainplate("templates", "diff", "bert", "--scope", "project:llm", "--from", "1",
                      "--to", "2")  # fmt: skip
    assert diff.returncode == 0, diff.stderr
    assert "/spec/numWorkers: 2 -> 4" in diff.stdout

    # Pinned to version 2 (4 workers, overridden to 1 here), then saved as a template.
    pinned = trainplate("templates", "submit", "bert", "--scope", "project:llm", "--project",
                        "llm", "--version", "2", "--set", "spec.command=/bin/true",
                        "--set", "spec.numWorkers=1")  # fmt: skip
    assert pinned.returncode == 0, pinned.stderr
    workload_id = pinned.stdout.strip()
    workload = made(client.get(f"/api/v1/workloads/distributed/{workload_id}"))
    assert (workload["templateId"], workload["templateVersion"]) == (bert_id, 2)
    kept = trainplate("workloads", "save-template", workload_id, "--name", "bert-once",
                      "--scope", "project:vision")  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert "bert-once" in names(client)
    ran = trainplate("templates", "submit", "keep", "--project", "vision", "--set",
                     "spec.command=/bin/true", "--set", "spec.numWorkers=1", "--env", "A=B",
                     "--wait", "--timeout", "100")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip().splitlines()[-1] == "Completed"
