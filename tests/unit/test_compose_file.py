"""docker-compose.yml cannot run here (no Docker daemon): check what can be checked statically."""

import tomllib
from pathlib import Path
from typing import Any

import yaml

from infra.cli.processes import PROCESSES
from infra.settings import Settings
from tests.cli_args import parsed

ROOT = Path(__file__).parents[2]
COMPOSE = ROOT / "docker-compose.yml"


def _services() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    return services


def test_every_process_runs_from_the_trainplate_image_with_a_real_entry_point() -> None:
    entry = [
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if "ENTRYPOINT" in line
    ]
    assert entry == ['ENTRYPOINT ["trainplate"]']
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["trainplate"] == "infra.cli.main:main"
    services = _services()
    for process in PROCESSES:
        service = services[process]
        assert service["image"] == "trainplate:latest"
        command, args = parsed(service["command"])  # raises on an unknown command
        assert (command, args["process"]) == (["serve"], process)


def test_the_servers_are_postgres_16_and_nats_with_jetstream() -> None:
    services = _services()
    assert services["postgres"]["image"] == "postgres:16"
    assert "-js" in services["nats"]["command"]


def test_the_processes_are_wired_by_settings_the_service_reads() -> None:
    env = _services()["api"]["environment"]
    settings = Settings.from_env(env)
    assert settings.database.url == env["TRAINPLATE_DATABASE_URL"]
    assert settings.nats.url == env["TRAINPLATE_NATS_URL"]
    assert settings.api_port == 8080


def test_the_submitter_dry_runs_for_want_of_a_framework_in_the_image_or_a_cluster() -> None:
    env = _services()["submitter"]["environment"]
    assert Settings.from_env(env).submitter.backend == "dry-run"
    assert env.items() >= _services()["api"]["environment"].items()  # wired as the others
