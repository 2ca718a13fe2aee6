"""`trainplate dev`: embedded PostgreSQL and NATS plus every process, as one supervised tree that
stops whole (children, then NATS, then PostgreSQL) and restarts a dying child; one that keeps
dying stops the tree with exit code 1, rather than leave a half-working service behind."""

import asyncio
import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Final, Protocol

import asyncpg

from infra.cli.admin import create_admin
from infra.cli.embedded import (
    EmbeddedNats,
    EmbeddedPostgres,
    EmbeddedServersMissingError,
    max_payload_for,
    write_private,
)
from infra.cli.kept_ports import kept_port
from infra.cli.processes import PROCESSES
from infra.postgres.migrate import apply_migrations
from infra.settings import Settings, redacted

GRACE_S: Final = 10.0
_WORKERS: Final = ("projector", "relay", "submitter")  # each serves its metrics on a port
log = logging.getLogger("trainplate.dev")


def run_dev(settings: Settings) -> int:
    say = _sayer(settings.log_format)
    data_dir = Path(settings.data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        ports = data_dir / "ports.json"  # kept across restarts, so subscribers' URLs hold
        postgres = EmbeddedPostgres(data_dir / "postgres", ports=ports)
        broker = EmbeddedNats(
            data_dir / "nats", max_payload=max_payload_for(settings.sizes.event_bytes), ports=ports
        )
    except EmbeddedServersMissingError as exc:
        say(f"trainplate dev: {exc}", error=True)
        return 2

    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)

    children: dict[str, subprocess.Popen[bytes]] = {}
    endpoints = data_dir / "endpoints.json"
    try:
        postgres.start()
        broker.start()
        # Others (a local workload's user) may pass through to the workloads below, never list
        # it; its keys, passwords and the servers' data are each private to their owner. (After
        # the start: pgserver opens the folders above its data for its own user to read.)
        data_dir.chmod(0o711)
        asyncio.run(_migrate(postgres.url))
        _, admin_secret = asyncio.run(create_admin(postgres.url, settings, actor="trainplate-dev"))
        api_url = f"http://{settings.api_host}:{settings.api_port}"
        metrics_ports = {name: kept_port(ports, f"{name}-metrics") for name in _WORKERS}
        metrics = {"api": f"{api_url}/metrics"} | {
            name: f"http://127.0.0.1:{port}/metrics" for name, port in metrics_ports.items()
        }
        env = {
            **os.environ,
            "TRAINPLATE_DATABASE_URL": postgres.url,
            "TRAINPLATE_NATS_URL": broker.url,
            "TRAINPLATE_API_HOST": settings.api_host,
            "TRAINPLATE_API_PORT": str(settings.api_port),
            "TRAINPLATE_DATA_DIR": str(data_dir),
            "TRAINPLATE_AUTH__SIGNING_KEY": _local_key(data_dir / "signing.key", 48),
            "TRAINPLATE_CREDENTIALS__ENCRYPTION_KEY": _local_key(data_dir / "credentials.key", 32),
        } | {
            f"TRAINPLATE_{name.upper()}__METRICS_PORT": str(p) for name, p in metrics_ports.items()
        }

        def start(process: str) -> "subprocess.Popen[bytes]":
            return subprocess.Popen([sys.executable, "-m", "infra.cli", "serve", process], env=env)

        for process in PROCESSES:
            children[process] = start(process)
        # The URLs carry the servers' passwords: for this user's scripts only.
        urls = {"api": api_url, "database": postgres.url, "nats": broker.url, "metrics": metrics}
        write_private(endpoints, json.dumps(urls, indent=2))
        say(
            f"\ntrainplate is starting at {api_url}  (readiness: {api_url}/readyz)\n"
            f"  console    {api_url}/console  (sign in with an application's id and secret)\n"
            f"  PostgreSQL {redacted(postgres.url)}\n  NATS       {redacted(broker.url)}\n"
            f"  endpoints  {endpoints}\n  Ctrl-C stops everything.\n"
        )
        if admin_secret is not None and settings.log_format == "json":
            # A log pipeline keeps what it is given: the secret goes to a file of its own.
            kept = data_dir / "admin-secret"
            write_private(kept, admin_secret)
            say(_token_hint(api_url, settings.admin_app_id, None, kept_in=kept))
        else:
            say(_token_hint(api_url, settings.admin_app_id, admin_secret))
        supervisor = Supervisor(children, start, say)
        while not stopping:
            if not supervisor.tend(time.monotonic()):
                return 1
            time.sleep(0.2)
        return 0
    finally:
        _stop_children(children)
        broker.stop()
        postgres.stop()
        endpoints.unlink(missing_ok=True)


class Supervisor:
    """Restarts a child that exits with a growing delay (1, 2, 4, 8, 16 s), saying why; a child
    that exits more than RESTARTS times within RESTART_WINDOW_S is given up on, and with it the
    tree (something is wrong that restarting will not mend)."""

    RESTARTS: Final = 5
    RESTART_WINDOW_S: Final = 60.0

    def __init__(
        self,
        children: dict[str, "subprocess.Popen[bytes]"],
        start: Callable[[str], "subprocess.Popen[bytes]"],
        say: "Say | None" = None,
    ) -> None:
        self._children = children
        self._start = start
        self._say = say or _sayer("text")
        self._exits: dict[str, list[float]] = {}
        self._due: dict[str, float] = {}  # child -> when to start it again

    def tend(self, now: float) -> bool:
        """Notice exits and restart what is due; False once the tree must stop."""
        for name, child in self._children.items():
            code = child.poll()
            if code is None or name in self._due:
                continue
            recent = [t for t in self._exits.get(name, []) if now - t < self.RESTART_WINDOW_S]
            self._exits[name] = [*recent, now]
            if len(recent) >= self.RESTARTS:
                self._say(
                    f"trainplate dev: {name} {_exit(code)}, {len(recent) + 1} times within "
                    f"{self.RESTART_WINDOW_S:.0f} s; stopping everything",
                    error=True,
                )
                return False
            delay = float(2 ** len(recent))
            self._say(
                f"trainplate dev: {name} {_exit(code)}; restarting it in {delay:.0f} s", error=True
            )
            self._due[name] = now + delay
        for name, due in list(self._due.items()):
            if now >= due:
                del self._due[name]
                self._children[name] = self._start(name)
        return True


def _exit(code: int) -> str:
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _local_key(path: Path, size: int) -> str:
    """A key of this data directory (`size` random bytes, URL-safe base64): made once, readable
    by its owner only."""
    if not path.exists():
        write_private(path, secrets.token_urlsafe(size))
    return path.read_text().strip()


class Say(Protocol):
    def __call__(self, text: str, *, error: bool = False) -> None: ...


def _sayer(log_format: str) -> Say:
    """How the supervisor speaks: printed lines, or (JSON logs) log records like its children's."""

    def say(text: str, *, error: bool = False) -> None:
        if log_format == "json":
            log.log(logging.ERROR if error else logging.INFO, "%s", text.strip("\n"))
        else:
            print(text, file=sys.stderr if error else sys.stdout, flush=True)

    return say


def _token_hint(
    api_url: str, app_id: str, generated_secret: str | None, *, kept_in: Path | None = None
) -> str:
    secret = generated_secret or "<its secret>"
    body = json.dumps({"grantType": "app_token", "AppId": app_id, "AppSecret": secret})
    if kept_in is not None:
        shown = f"  admin app  {app_id}, its secret made now and kept in {kept_in} (mode 0600)\n"
    elif generated_secret:
        shown = f"  admin app  {app_id}, secret {generated_secret}  (shown this once: keep it)\n"
    else:
        shown = f"  admin app  {app_id} (its secret: as set or shown when it was created)\n"
    return (
        f"{shown}  get a token:\n"
        f"    curl -s -X POST {api_url}/api/v1/token -H 'content-type: application/json' \\\n"
        f"      -d '{body}'\n"
    )


async def _migrate(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()


def _stop_children(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    for child in children.values():
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
