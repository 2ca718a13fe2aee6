"""What a local replica is given, and nothing more: it runs other people's code.

Its environment is exactly its spec's variables and the operator's contract
(infra/backends/local_environment.py) over a minimal `PATH`, `HOME` and `LANG`: nothing of the
service's own environment (keys, database and broker addresses) reaches it.

When the service runs as root, a replica runs as the user its spec names (`uidGidSource: custom`
with `runAsUid`, `runAsGid` and `supplementalGroups`) or, failing that, as `nobody`, and never as
root. Its home is a directory of its own under the run's directory, which it owns and nothing
else can read; the run's directories above it can be traversed but not listed, and the logs and
hostfile the service writes there are the service's. A service that is not root cannot change
users: its replicas run as its own user (the local backend is for one trusted team on one
machine; isolating tenants from each other is the Kubernetes backend's job).
"""

import os
import stat
import sys
from pathlib import Path
from typing import Final

import msgspec

from domain.template_specs import Security

UNPRIVILEGED: Final = 65534  # nobody / nogroup
# Programs the replica's command may name without a path, wherever the service was started.
_SYSTEM_PATH: Final = "/usr/local/bin:/usr/bin:/bin"


class Identity(msgspec.Struct, frozen=True, kw_only=True):
    uid: int
    gid: int
    groups: tuple[int, ...] = ()


class IsolationError(ValueError):
    """The replica cannot be started as isolated as this module promises."""


def identity_for(security: Security | None) -> Identity | None:
    """Who a replica runs as; None where the service cannot change users (it is not root)."""
    if os.geteuid() != 0:
        return None
    # Only a custom source names ids; from the image or the identity provider, none is known here.
    custom = security if security is not None and security.uid_gid_source == "custom" else None
    uid = None if custom is None else custom.run_as_uid
    gid = None if custom is None else custom.run_as_gid
    if uid == 0 or gid == 0:
        raise IsolationError("the local backend never runs a replica as root (runAsUid/runAsGid 0)")
    groups = _groups(None if custom is None else custom.supplemental_groups)
    if 0 in groups:
        raise IsolationError("the local backend never runs a replica in group root")
    return Identity(
        uid=UNPRIVILEGED if uid is None else uid,
        gid=UNPRIVILEGED if gid is None else gid,
        groups=groups,
    )


def _groups(listed: str | None) -> tuple[int, ...]:
    if not listed:
        return ()
    try:
        return tuple(int(part) for part in listed.replace(" ", "").split(",") if part)
    except ValueError as error:
        raise IsolationError(f"supplementalGroups is not a list of ids: {listed!r}") from error


def environment(own: dict[str, str], home: Path) -> dict[str, str]:
    """The replica's whole environment: the minimal base, then its own variables."""
    return {"PATH": _path(), "HOME": str(home), "LANG": "C.UTF-8", **own}


def _path() -> str:
    """This interpreter's folder first (the programs installed with the service, such as
    `python`), then the system's; never the rest of the service's PATH."""
    here = str(Path(sys.executable).parent)
    return f"{here}:{_SYSTEM_PATH}"


def prepare_run_dir(directory: Path, work_dir: Path, identity: Identity | None) -> None:
    """Let the replicas' user pass through the run's directory and those above it: the backend's
    own folders (from its work dir down) are opened for traversal, never for listing; a folder
    above the work dir that the user cannot pass is an error naming it, never changed."""
    if identity is None:
        return
    work_dir = work_dir.resolve()
    for folder in (directory.resolve(), *directory.resolve().parents):
        mode = stat.S_IMODE(folder.stat().st_mode)
        if mode & stat.S_IXOTH:
            continue
        if folder == work_dir or work_dir in folder.parents:
            folder.chmod(mode | stat.S_IXOTH)
        else:
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
