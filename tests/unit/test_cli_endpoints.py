"""The tool commands find the local service by its endpoints file, never by a default port; a
service they cannot find or reach is one line saying what to do, not a traceback."""

import json
import socket
from pathlib import Path

import pytest

from infra.cli.endpoints import ServiceNotFoundError, located
from infra.cli.kept_ports import kept_port
from infra.cli.main import main
from infra.settings import Settings


def settings_in(data_dir: Path) -> Settings:
    return Settings(data_dir=str(data_dir))


def test_without_a_url_the_local_services_servers_are_used(tmp_path: Path) -> None:
    endpoints = {
        "database": "postgresql://postgres:pw@127.0.0.1:6001/postgres",
        "nats": "nats://u:pw@127.0.0.1:6002",
    }
    (tmp_path / "endpoints.json").write_text(json.dumps(endpoints))
    found = located(settings_in(tmp_path), {}, needs=("database", "nats"))
    assert (found.database.url, found.nats.url) == (endpoints["database"], endpoints["nats"])
    given = {"TRAINPLATE_DATABASE_URL": "postgresql://elsewhere/db"}
    kept = located(settings_in(tmp_path), given, needs=("database",))
    assert kept.database.url == Settings().database.url  # the environment's, untouched here


def test_with_no_service_running_it_says_how_to_start_one(tmp_path: Path) -> None:
    with pytest.raises(ServiceNotFoundError, match="make run"):
        located(settings_in(tmp_path), {}, needs=("database",))


def test_audit_verify_with_nothing_running_is_one_line_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRAINPLATE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TRAINPLATE_DATABASE_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["audit", "verify"])
    assert exited.value.code == 2
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert "make run" in said


def test_a_service_that_is_gone_is_one_line_naming_it_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://postgres:s3cret@127.0.0.1:{port}/postgres"
    (tmp_path / "endpoints.json").write_text(json.dumps({"database": url}))
    monkeypatch.setenv("TRAINPLATE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TRAINPLATE_DATABASE_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["audit", "verify"])
    assert exited.value.code == 1
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert f"127.0.0.1:{port}" in said
    assert "s3cret" not in said


def test_a_server_keeps_its_port_unless_another_program_took_it(tmp_path: Path) -> None:
    record = tmp_path / "ports.json"
    first = kept_port(record, "nats")
    assert kept_port(record, "nats") == first
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", first))
        squatter.listen()
        moved = kept_port(record, "nats")
    assert moved != first
    assert kept_port(record, "nats") == moved  # and it is kept from then on
    assert kept_port(record, "postgres") != moved
    assert set(json.loads(record.read_text())) == {"nats", "postgres"}
