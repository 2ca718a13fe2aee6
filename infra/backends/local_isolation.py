"""What a local replica is given, and nothing more, since it runs other people's code: its spec's
and the operator's variables over a minimal PATH, HOME and LANG, and under a root service ids and
a home of its run's own (docs/decisions/0001-local-workload-identities.md)."""

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import msgspec

from domain.template_specs import Security

# root, nobody, 16-bit (uid_t) -1 and 32-bit (uid_t) -1: never a workload's, whatever the range.
RESERVED: Final = frozenset({0, 65534, 65535, 2**32 - 1})
# Programs the replica's command may name without a path, wherever the service was started.
_SYSTEM_PATH: Final = "/usr/local/bin:/usr/bin:/bin"


class Identity(msgspec.Struct, frozen=True, kw_only=True):
    uid: int
    gid: int
    groups: tuple[int, ...] = ()


class IsolationError(ValueError):
    """The replica cannot be started as isolated as this module promises."""


class Wanted(msgspec.Struct, frozen=True, kw_only=True):
    """The ids a replica's spec names; what it leaves out is its run's own id."""

    uid: int | None = None
    gid: int | None = None
    groups: tuple[int, ...] = ()

    def named(self) -> Iterator[tuple[str, int]]:
        if self.uid is not None:
            yield "runAsUid", self.uid
        if self.gid is not None:
            yield "runAsGid", self.gid
        yield from (("supplementalGroups", group) for group in self.groups)

    def identity(self, own: int) -> Identity:
        uid = own if self.uid is None else self.uid
        return Identity(uid=uid, gid=own if self.gid is None else self.gid, groups=self.groups)


def wanted(security: Security | None, allowed: range) -> Wanted:
    """The custom ids a spec names (only a custom source names any): each must lie in the
    operator's range, or the replica is refused, naming the field."""
    if security is None or security.uid_gid_source != "custom":
        return Wanted()
    found = Wanted(
        uid=security.run_as_uid,
        gid=security.run_as_gid,
        groups=_groups(security.supplemental_groups),
    )
    for field, number in found.named():
        if number not in allowed or number in RESERVED:
            raise IsolationError(
                f"{field} {number} is not one the local backend runs workloads as "
                f"(its range is {allowed.start}-{allowed.stop - 1})"
            )
    return found


def _groups(listed: str | None) -> tuple[int, ...]:
    if not listed:
        return ()
    try:
        return tuple(int(part) for part in listed.replace(" ", "").split(",") if part)
    except ValueError as error:
        raise IsolationError(f"supplementalGroups is not a list of ids: {listed!r}") from error


class Taken(msgspec.Struct, frozen=True, kw_only=True):
    """What this machine already gives ids to, as found at one moment."""

    owners: frozenset[int] = frozenset()  # users, groups, and owners of the service's folders
    subordinate: tuple[range, ...] = ()  # users' namespaces' ids (/etc/subuid, /etc/subgid)
    running: frozenset[int] = frozenset()  # every id a live process runs under

    def why(self, number: int) -> str | None:
        if number in RESERVED or number in self.owners:
            return "belongs to the service or to a user or group of this machine"
        if any(number in ids for ids in self.subordinate):
            return "is a subordinate id of a user of this machine"
        if number in self.running:
            return "is in use by a process of this machine"
        return None


def candidates(allowed: range, start: int) -> Iterator[int]:
    """Every id of the range once, from `start` round to the one before it: a run's id comes
    back only after the whole range has been handed out."""
    offset = (start - allowed.start) % len(allowed)
    yield from allowed[offset:]
    yield from allowed[:offset]


def environment(own: dict[str, str], home: Path, programs: Mapping[str, str]) -> dict[str, str]:
    """The replica's whole environment: the minimal base, then its own variables. PATH holds
    the service's Python (local_runtime.py), then the system's; never the rest of the service's."""
    path = f"{programs['PATH']}:{_SYSTEM_PATH}"
    return {**programs, "PATH": path, "HOME": str(home), "LANG": "C.UTF-8", **own}


def prepare_run_dir(directory: Path, work_dir: Path) -> None:
    """The backend's folders from its work dir down to the run's are passed through, never
    listed (0711); a folder above the work dir that a root service's replicas cannot pass is an
    error naming it, never changed."""
    work_dir = work_dir.resolve()
    for folder in (directory.resolve(), *directory.resolve().parents):
        if folder == work_dir or work_dir in folder.parents:
            folder.chmod(0o711)
            continue
        mode = stat.S_IMODE(folder.stat().st_mode)
        if os.geteuid() == 0 and not mode & stat.S_IXOTH:
            raise IsolationError(
                f"{folder} (mode {mode:o}) cannot be traversed by the replicas' user: "
                "choose a work dir whose parents others may pass (o+x)"
            )


def prepare_home(directory: Path, name: str, identity: Identity | None) -> Path:
    """The replica's own directory (its HOME, and its working directory unless the spec names
    one this machine has): owned by its user, mode 0700."""
    home = directory / name
    home.mkdir(mode=0o700, exist_ok=True)
    if identity is not None:
        os.chown(home, identity.uid, identity.gid)
    return home
