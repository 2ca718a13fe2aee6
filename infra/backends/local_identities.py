"""Which ids a root service's local workloads run as: each run its own, from the operator's
range, held by a lease file made exclusively so that submitters sharing the work dir never hand
one out twice (docs/decisions/0001-local-workload-identities.md)."""

import contextlib
import grp
import os
import pwd
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

from domain.template_specs import Security
from infra.backends.local_isolation import (
    Identity,
    IsolationError,
    Taken,
    candidates,
    wanted,
)

LEASES: Final = ".identities"  # no job is named so: job names start with a letter
_CURSOR: Final = "next"


class Held(msgspec.Struct, frozen=True, kw_only=True):
    """A run's identities, by replica (None: the service cannot change users), and its leases."""

    identities: dict[str, Identity | None]
    leased: tuple[int, ...] = ()


class Identities:
    def __init__(self, work_dir: Path, allowed: range, service_dirs: Sequence[Path] = ()) -> None:
        self._work_dir = work_dir
        self._folder = work_dir / LEASES
        self._allowed = allowed
        self._service_dirs = service_dirs

    def take(self, run_dir: Path, securities: Mapping[str, Security | None]) -> Held:
        """The run's own id and the custom ids its replicas name, leased for it; an id that is
        not free is refused, naming its field."""
        if os.geteuid() != 0:
            return Held(identities=dict.fromkeys(securities))
        wants = {name: wanted(security, self._allowed) for name, security in securities.items()}
        self._folder.mkdir(mode=0o700, exist_ok=True)
        taken = self._taken()
        leased: list[int] = []
        try:
            for field, number in sorted({pair for want in wants.values() for pair in want.named()}):
                if number in leased:
                    continue
                why = taken.why(number)
                if why is None and not self._lease(number, run_dir):
                    why = "is another live workload's"
                if why is not None:
                    raise IsolationError(f"{field} {number} {why}")
                leased.append(number)
            own = self._own(run_dir, taken)
            leased.append(own)
        except BaseException:
            self._release(leased)
            raise
        identities = {name: want.identity(own) for name, want in wants.items()}
        return Held(identities=dict(identities), leased=tuple(leased))

    def give_back(self, held: Held, run_dir: Path) -> None:
        """The run is over: nothing of its folder is any workload's to reach again (its ids may
        come back), then its leases go."""
        if not held.leased:
            return
        with contextlib.suppress(FileNotFoundError):
            run_dir.chmod(0o700)
        self._release(held.leased)

    def _own(self, run_dir: Path, taken: Taken) -> int:
        cursor = self._folder / _CURSOR
        try:
            start = int(cursor.read_text())
        except (OSError, ValueError):
            start = self._allowed.start
        for number in candidates(self._allowed, start):
            if taken.why(number) is None and self._lease(number, run_dir):
                following = cursor.with_suffix(f".{os.getpid()}")
                following.write_text(str(number + 1))
                following.replace(cursor)
                return number
        raise IsolationError(
            f"no id of {self._allowed.start}-{self._allowed.stop - 1} is free for another "
            "local workload"
        )

    def _lease(self, number: int, run_dir: Path) -> bool:
        path = self._folder / str(number)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                if not self._take_back(path):
                    return False
                continue
            with os.fdopen(fd, "w") as out:
                out.write(f"{_holder(os.getpid())}\n{run_dir.resolve()}\n")
            return True
        return False

    def _take_back(self, path: Path) -> bool:
        """A lease left by a submitter that is gone (its ids are not running: `_taken` says so)
        is taken back once, by whoever renames it first; its run's folder is closed."""
        try:
            holder, run_dir = path.read_text().splitlines()
            pid = int(holder.split()[0])
        except (OSError, ValueError):
            return False  # being written, or not a lease: not ours to take
        if _holder(pid) == holder:
            return False
        stale = path.with_name(f"{path.name}.{os.getpid()}.stale")
        try:
            path.rename(stale)
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            Path(run_dir).chmod(0o700)
        stale.unlink()
        return True

    def _release(self, leased: Sequence[int]) -> None:
        for number in leased:
            (self._folder / str(number)).unlink(missing_ok=True)

    def _taken(self) -> Taken:
        owners = {os.geteuid(), os.getegid()}
        for user in pwd.getpwall():
            owners.update((user.pw_uid, user.pw_gid))
        owners.update(group.gr_gid for group in grp.getgrall())
        for path in _with_entries(self._service_dirs, self._work_dir):
            with contextlib.suppress(OSError):
                found = path.stat()
                owners.update((found.st_uid, found.st_gid))
        return Taken(owners=frozenset(owners), subordinate=_subordinate(), running=_running())


def _with_entries(folders: Sequence[Path], work_dir: Path) -> list[Path]:
    """The service's folders and what lies directly in them (its servers' data: the embedded
    PostgreSQL's belongs to a user of its own), and the work dir."""
    found = [work_dir]
    for folder in folders:
        found.append(folder)
        with contextlib.suppress(OSError):
            found.extend(folder.iterdir())
    return found


def _holder(pid: int) -> str:
    """A process as no later one with its pid is: its pid and start time (or the pid alone)."""
    try:
        started = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return str(pid)
    return f"{pid} {started}"


def _subordinate() -> tuple[range, ...]:
    found = []
    for listing in ("/etc/subuid", "/etc/subgid"):
        with contextlib.suppress(OSError):
            for line in Path(listing).read_text().splitlines():
                parts = line.strip().split(":")  # user:first:count
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    found.append(range(int(parts[1]), int(parts[1]) + int(parts[2])))
    return tuple(found)


def _running() -> frozenset[int]:
    """Every user and group id a process of this machine (as far as /proc shows) runs under."""
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for line in Path(entry.path, "status").read_text().splitlines():
                if line.startswith(("Uid:", "Gid:", "Groups:")):
                    found.update(int(part) for part in line.split()[1:])
    return frozenset(found)
