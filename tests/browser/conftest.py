"""The browser tier: Playwright driving Debian's Chromium, headless, against `trainplate dev`
started as `make run` starts it."""

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.cli.embedded import free_port
from tests.browser.journey import CHROMIUM
from tests.integration.test_dev_smoke import ADMIN_SECRET, start_dev
from tests.processes import wait_until_ready

ADMIN_ID = "trainplate-admin"


if not Path(CHROMIUM).exists():  # only in CI: elsewhere tests/conftest.py leaves the tier out
    raise pytest.UsageError(f"CI needs Chromium at {CHROMIUM}: apt-get install chromium")


class Service:
    """A running `trainplate dev`, and an admin's API client for arranging what a journey needs."""

    def __init__(self, url: str) -> None:
        self.url = url
        login = {"grantType": "app_token", "AppId": ADMIN_ID, "AppSecret": ADMIN_SECRET}
        token = httpx.post(f"{url}/api/v1/token", json=login, timeout=10).json()["accessToken"]
        self.api = httpx.Client(
            base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=10
        )

    def made(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.api.post(path, json=body)
        assert answer.status_code in (200, 201, 202), answer.text
        found: dict[str, Any] = answer.json()
        return found


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    port = free_port()
    directory = tmp_path_factory.mktemp("console")
    # Its output to a file: it runs for the whole tier, and would fill a pipe (then block).
    with open(directory / "dev.log", "wb") as output:
        dev = start_dev(directory / "data", port, output=output)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(f"{url}/readyz", dev, within_s=120)
            running = Service(url)
            yield running
            running.api.close()
        finally:
            dev.send_signal(signal.SIGTERM)
            dev.wait(timeout=60)
