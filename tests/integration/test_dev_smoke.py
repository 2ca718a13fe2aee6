"""`trainplate dev` (what `make run` runs): starts everything, reports ready, stops everything."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import httpx
import pytest

from infra.cli.embedded import free_port
from tests.processes import wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ADMIN_SECRET = "smoke-test-admin-secret"


def start_dev(
    data_dir: Path,
    port: int,
    output: IO[bytes] | int = subprocess.PIPE,
    settings: dict[str, str] | None = None,
) -> "subprocess.Popen[bytes]":
    """`trainplate dev` as `make run` starts it, with none of this shell's TRAINPLATE_ settings
    (but `settings`) and a known admin secret; its output is captured (a pipe read at its end),
    or written to `output`: a service that runs for long fills a pipe nobody reads, and then
    blocks on its next log line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAINPLATE_", "OTEL_"))}
    env["TRAINPLATE_ADMIN_APP_SECRET"] = ADMIN_SECRET
    env.update(settings or {})
    command = ["dev", "--port", str(port), "--data-dir", str(data_dir)]
    return subprocess.Popen(
        [sys.executable, "-m", "infra.cli", *command],
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
    )


def _listening(url: str) -> bool:
    host_port = url.split("//", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    host, port = host_port.rsplit(":", 1)
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, int(port))) == 0


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found


def test_trainplate_dev_serves_readiness_and_stops_everything_on_sigterm(server_dir: Path) -> None:
    data_dir = server_dir / "data"
    first = _run_dev_once(data_dir)
    assert "trainplate is starting at" in first
    assert "get a token:" in first
    assert ADMIN_SECRET not in first  # given, not generated: nothing to show


def test_a_restart_reuses_the_data_and_the_admin_application(server_dir: Path) -> None:
    data_dir = server_dir / "data"
    _run_dev_once(data_dir)
    second = _run_dev_once(data_dir)  # logs in with the same secret: the same application
    assert "its secret: as set or shown when it was created" in second
    assert (data_dir / "postgres" / "PG_VERSION").exists()


def _run_dev_once(data_dir: Path) -> str:
    """Start `trainplate dev`, check it serves and logs in, stop it, check nothing is left."""
    port = free_port()
    dev = start_dev(data_dir, port)
    try:
        body = wait_until_ready(f"http://127.0.0.1:{port}/readyz", dev, within_s=120)
        assert body["status"] == "ready"
        assert {name: check["ready"] for name, check in body["checks"].items()} == {
            "database": True,
            "migrations": True,
            "broker": True,
            "followers": True,
        }
        endpoints = json.loads((data_dir / "endpoints.json").read_text())
        assert endpoints["api"] == f"http://127.0.0.1:{port}"
        # The servers' URLs carry their passwords: the file is its owner's alone, and the data
        # dir may be passed through (to a workload's folder), never listed.
        assert (data_dir / "endpoints.json").stat().st_mode & 0o777 == 0o600
        assert data_dir.stat().st_mode & 0o777 == 0o711
        passwords = [urlsplit(endpoints[name]).password for name in ("database", "nats")]
        assert all(passwords)
        assert all(_listening(endpoints[name]) for name in ("api", "database", "nats"))
        assert _processes_mentioning(str(data_dir)), "the embedded servers should be running"
        login = {"grantType": "app_token", "AppId": "trainplate-admin", "AppSecret": ADMIN_SECRET}
        token = httpx.post(f"{endpoints['api']}/api/v1/token", json=login, timeout=10)
        assert token.status_code == 200, token.text
        assert token.json()["accessToken"]
    finally:
        dev.send_signal(signal.SIGTERM)
        output = dev.communicate(timeout=60)[0].decode(errors="replace")
    assert dev.returncode == 0, output
    assert not any(password in output for password in passwords if password)
    assert not any(_listening(endpoints[name]) for name in ("api", "database", "nats"))
    assert _processes_mentioning(str(data_dir)) == []
    assert not (data_dir / "endpoints.json").exists()
    return output


def _child(parent: int, process: str) -> int | None:
    """The pid of `parent`'s child running `trainplate serve <process>`, if there is one."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and f"serve {process}" in cmdline:
            return int(stat.parent.name)
    return None


def test_a_child_killed_with_sigkill_is_restarted_and_the_service_stays_up(
    server_dir: Path,
) -> None:
    port = free_port()
    dev = start_dev(server_dir / "data", port)
    try:
        wait_until_ready(f"http://127.0.0.1:{port}/readyz", dev, within_s=120)
        killed = {}
        for process in ("projector", "relay"):
            pid = _child(dev.pid, process)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            killed[process] = pid
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = {process: _child(dev.pid, process) for process in killed}
            if all(pid not in (None, killed[process]) for process, pid in now.items()):
                break
            time.sleep(0.2)
        assert dev.poll() is None, "trainplate dev stopped"
        assert all(pid not in (None, killed[process]) for process, pid in now.items()), now
        wait_until_ready(f"http://127.0.0.1:{port}/readyz", dev, within_s=30)
    finally:
        dev.send_signal(signal.SIGTERM)
        output = dev.communicate(timeout=60)[0].decode(errors="replace")
    assert dev.returncode == 0, output
    assert "projector was killed by SIGKILL; restarting it in 1 s" in output
    assert "relay was killed by SIGKILL; restarting it in 1 s" in output


def test_json_logs_are_one_object_a_line_naming_trace_span_and_request(server_dir: Path) -> None:
    port = free_port()
    dev = start_dev(server_dir / "data", port, settings={"TRAINPLATE_LOG_FORMAT": "json"})
    api = f"http://127.0.0.1:{port}"
    traced = {"traceparent": TRACEPARENT, "x-request-id": "smoke-request-1"}
    try:
        wait_until_ready(f"{api}/readyz", dev, within_s=120)
        assert httpx.get(f"{api}/readyz", headers=traced, timeout=10).status_code == 200
        wrong = {"grantType": "app_token", "AppId": "trainplate-admin", "AppSecret": "not-it"}
        assert httpx.post(f"{api}/api/v1/token", json=wrong, timeout=10).status_code == 401
    finally:
        dev.send_signal(signal.SIGTERM)
        output = dev.communicate(timeout=60)[0].decode(errors="replace")
    assert dev.returncode == 0, output
    lines = output.splitlines()
    records = [json.loads(line) for line in lines]  # every line, whichever process wrote it
    assert all({"time", "level", "logger", "message", "process"} <= set(r) for r in records)
    assert {r["process"] for r in records} >= {"dev", "api", "relay", "projector", "submitter"}
    (answered,) = [r for r in records if r.get("request_id") == "smoke-request-1"]
    assert answered["trace_id"] == TRACEPARENT[3:35]
    assert answered["span_id"] == TRACEPARENT[36:52]
    assert "GET /readyz" in answered["message"]
    assert any(r["message"].startswith("trainplate is starting at") for r in records)
    assert ADMIN_SECRET not in output
    assert "not-it" not in output


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
