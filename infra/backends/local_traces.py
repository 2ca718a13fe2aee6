"""What a local run leaves in its folder for whoever looks next, this submitter or one after a
restart: `supervisor` (locked while supervised; the lock dies with its process), `started` (made
once, before any replica), `pids`, and `outcome` (written before it is reported)."""

import asyncio
import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import msgspec

from domain.workloads import Outcome
from services.ports.workload_backends import RunStatus

SUPERVISOR: Final = "supervisor"
STARTED: Final = "started"
PIDS: Final = "pids"
OUTCOME: Final = "outcome"
GONE: Final = "no process behind it after a submitter restart (its end was not seen)"
_PROC: Final = Path("/proc")


class Pid(msgspec.Struct, frozen=True):
    replica: str
    pid: int
    since: int | None  # when it started, from /proc: a pid used again by another differs


def claim(directory: Path) -> int | None:
    """Take the run to start it: its supervisor lock (held until its outcome is kept), then its
    `started` marker. None when it was started already, by this submitter or another."""
    lock = os.open(directory / SUPERVISOR, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        (directory / STARTED).open("x").close()
    except (BlockingIOError, FileExistsError):
        os.close(lock)
        return None
    except BaseException:
        os.close(lock)
        raise
    return lock


def started(directory: Path) -> bool:
    return (directory / STARTED).exists()


def release(directory: Path, lock: int) -> None:
    """A start that failed: nothing of it says it started, so a retry starts it again."""
    for name in (STARTED, PIDS):
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
    os.close(lock)


def keep_pids(directory: Path, pids: Mapping[str, int]) -> None:
    found = [Pid(replica, pid, _since(pid)) for replica, pid in pids.items()]
    _write(directory / PIDS, msgspec.json.encode(found))


def keep_outcome(directory: Path, outcome: Outcome, reason: str | None) -> None:
    _write(directory / OUTCOME, msgspec.json.encode(RunStatus(outcome, reason)))


def status(directory: Path) -> RunStatus | None:
    """What became of a run no task of this process supervises: its outcome as kept; nothing
    while another submitter supervises it; running while a replica is alive without one (its
    submitter died); else failed, with nothing behind it."""
    if (kept := _outcome(directory)) is not None:
        return kept
    if not started(directory):
        return RunStatus("failed", f"nothing of it on this machine (no {directory / STARTED})")
    if supervised(directory):
        return None
    if (kept := _outcome(directory)) is not None:  # kept as its supervisor let go
        return kept
    if _alive(directory):
        return RunStatus("running")
    return RunStatus("failed", GONE)


def supervised(directory: Path) -> bool:
    """Whether a submitter (this process or another) holds the run's supervisor lock."""
    try:
        fd = os.open(directory / SUPERVISOR, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


async def stop_unsupervised(directory: Path, grace: float) -> None:
    """Stop the replicas of a run left without a supervisor: their process groups, SIGTERM,
    then SIGKILL after `grace` (they are not this process's children: it cannot wait on them)."""
    if supervised(directory):
        return  # another submitter's: stopping it is its supervisor's part
    left = [p for p in _pids(directory) if _running(p)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for process in left:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
        deadline = time.monotonic() + grace
        # Not this process's children: nothing wakes it when they end, so it looks.
        while (left := [p for p in left if _running(p)]) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.1)


def _alive(directory: Path) -> bool:
    return any(_running(p) for p in _pids(directory))


def _running(process: Pid) -> bool:
    """Still the process that was started (Linux's /proc tells; elsewhere none is seen)."""
    return process.since is not None and _since(process.pid) == process.since


def _pids(directory: Path) -> list[Pid]:
    try:
        return msgspec.json.decode((directory / PIDS).read_bytes(), type=list[Pid])
    except (FileNotFoundError, msgspec.DecodeError):
        return []


def _outcome(directory: Path) -> RunStatus | None:
    try:
        return msgspec.json.decode((directory / OUTCOME).read_bytes(), type=RunStatus)
    except (FileNotFoundError, msgspec.DecodeError):
        return None


def _since(pid: int) -> int | None:
    """When the process started (clock ticks after boot), None when it is gone or a zombie."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    state, *fields = stat.rsplit(")", 1)[1].split()  # after its name, which may hold spaces
    return None if state in ("Z", "X") else int(fields[18])


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: a reader never sees half of it."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    partial.replace(path)
