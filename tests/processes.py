"""Starting one of the service's processes (`trainplate serve <process>`) against test servers,
for the tests that kill them, and waiting for one to answer."""

import os
import subprocess
import sys
import time
from typing import IO, Any

import httpx


def serve(
    process: str, postgres_url: str, nats_url: str, **settings: str
) -> "subprocess.Popen[bytes]":
    """`settings`: more TRAINPLATE_ variables, e.g. RELAY__BATCH_SIZE="1000"."""
    return serve_logged(None, process, postgres_url, nats_url, **settings)


def serve_logged(
    log: IO[bytes] | None, process: str, postgres_url: str, nats_url: str, **settings: str
) -> "subprocess.Popen[bytes]":
    """`serve`, its log (standard error) written to `log` (None: the test's own)."""
    env = {
        **os.environ,
        "TRAINPLATE_DATABASE_URL": postgres_url,
        "TRAINPLATE_NATS_URL": nats_url,
        "TRAINPLATE_LOG_LEVEL": "WARNING",
        **{f"TRAINPLATE_{name}": value for name, value in settings.items()},
    }
    command = [sys.executable, "-m", "infra.cli", "serve", process]
    return subprocess.Popen(command, env=env, stderr=log)


def wait_until_ready(url: str, process: "subprocess.Popen[bytes]", within_s: float) -> Any:
    """Until `url` answers 200 (its JSON body is returned), failing at once if the process
    exits, and naming the last answer if `within_s` runs out."""
    deadline = time.monotonic() + within_s
    last = "no answer"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args!r} exited with {process.returncode}")
        try:
            response = httpx.get(url, timeout=2)
            if response.status_code == 200:
                return response.json()
            last = response.text
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(0.25)
    raise AssertionError(f"not ready after {within_s} s: {last}")
