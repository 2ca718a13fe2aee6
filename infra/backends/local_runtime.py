"""The Python a root service's replicas run: its own when others may reach it, else a mirror of
its installation (hard links; paths re-pointed) in /var/cache, since a replica's user cannot pass a
private home such as `/root` (docs/decisions/0017-a-reachable-python.md)."""

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from infra.backends.local_isolation import IsolationError

_STATE_BASE = Path("/var/lib/trainplate")  # a root service's work dirs when its data dir is private
_MIRRORS = Path("/var/cache/trainplate/python")  # one per installation and state of its packages


def passable(path: Path) -> bool:
    """Whether any user may reach `path`: it and every folder above it let others pass (o+x)."""
    try:
        return all(os.stat(f).st_mode & stat.S_IXOTH for f in (path, *path.parents))
    except OSError:
        return False


def default_work_dir(data_dir: Path) -> Path:
    """`<data dir>/workloads`, unless a root service's replicas could not reach it: then a folder
    of its own under /var/lib/trainplate, named after the data dir, kept once it exists."""
    data_dir = data_dir.resolve()
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
    elsewhere = _STATE_BASE / digest / "workloads"
    if elsewhere.is_dir() or (os.geteuid() == 0 and not passable(data_dir)):
        return elsewhere
    return data_dir / "workloads"


def programs(prefix: Path = Path(sys.prefix), mirrors: Path = _MIRRORS) -> dict[str, str]:
    """What a replica's environment needs to run this Python: its `bin` first on PATH, or, when a
    root service's replicas could not reach the installation, its mirror's (and its libraries)."""
    prefix = Path(os.path.abspath(prefix))
    base = _base_of(prefix)
    if os.geteuid() != 0 or all(passable(p / "bin") for p in (prefix, base)):
        return {"PATH": str(prefix / "bin")}
    private = [prefix] if passable(base / "bin") else list(dict.fromkeys((prefix, base)))
    made = mirror(private, mirrors)
    found = {"PATH": str(made.get(prefix, prefix) / "bin")}
    if base in made:  # a libpython linked by absolute path: found through the mirror instead
        found["LD_LIBRARY_PATH"] = str(made[base] / "lib")
    return found


def _base_of(prefix: Path) -> Path:
    """The installation a virtual environment was made from (itself when it is none)."""
    try:
        config = (prefix / "pyvenv.cfg").read_text()
    except FileNotFoundError:
        return prefix
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return Path(value.strip()).parent
    raise IsolationError(f"{prefix / 'pyvenv.cfg'} names no home")


def mirror(prefixes: list[Path], into: Path) -> dict[Path, Path]:
    """A copy of each prefix others may read, built once per state of their packages."""
    into.mkdir(mode=0o711, parents=True, exist_ok=True)
    into.chmod(0o711)  # replicas pass through it, list nothing
    if not passable(into):
        raise IsolationError(f"{into} cannot be passed by the replicas' user")
    target = into / _stamp(prefixes)
    moved = {p: target / str(i) for i, p in enumerate(prefixes)}
    if (target / ".complete").exists():
        return moved
    building = into / f".{target.name}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(mode=0o755)
    for i, prefix in enumerate(prefixes):
        _copy_tree(prefix, building / str(i), moved)
    (building / ".complete").touch(mode=0o644)
    try:
        building.rename(target)
    except OSError:  # another submitter finished the same mirror first
        shutil.rmtree(building, ignore_errors=True)
    return moved


def _stamp(prefixes: list[Path]) -> str:
    """Changes when packages are installed or removed (each changes site-packages' folder)."""
    marks = [str(p) for p in prefixes]
    for prefix in prefixes:
        for found in sorted(prefix.glob("lib*/python*/site-packages")):
            marks.append(f"{found}:{found.stat().st_mtime_ns}")
    return hashlib.sha256("\n".join(marks).encode()).hexdigest()[:16]


def _copy_tree(prefix: Path, to: Path, moved: Mapping[Path, Path]) -> None:
    """Copies `prefix` into `to` as hard links (cp is ~5x faster than Python at 60k files); then a
    link, script or venv config naming a moved prefix is made to name its mirror instead."""
    linked = subprocess.run(["cp", "-a", "--link", str(prefix), str(to)], capture_output=True)
    if linked.returncode != 0:  # another file system
        shutil.rmtree(to, ignore_errors=True)
        subprocess.run(["cp", "-a", str(prefix), str(to)], check=True, capture_output=True)
    folders = [to]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                path = Path(entry.path)
                if entry.is_symlink():
                    target = os.readlink(path)
                    if (now := _moved(target, moved)) != target:
                        path.unlink()
                        path.symlink_to(now)
                elif entry.is_dir():
                    folders.append(path)
                elif path.parent.name == "bin" or entry.name == "pyvenv.cfg":
                    _rewrite(path, moved)


def _moved(path: str, moved: Mapping[Path, Path]) -> str:
    for old, new in moved.items():
        if path == str(old) or path.startswith(f"{old}{os.sep}"):
            return str(new) + path[len(str(old)) :]
    return path


def _rewrite(copy: Path, moved: Mapping[Path, Path]) -> None:
    """A script's first line or a venv's config naming a moved prefix is rewritten, into a new
    file: the copy is a link to the original."""
    data = copy.read_bytes()
    if copy.name == "pyvenv.cfg":
        lines = data.decode().splitlines(keepends=True)
        now = "".join(
            f"{key}= {_moved(value.strip(), moved)}\n" if sep else key
            for key, sep, value in (line.partition("=") for line in lines)
        ).encode()
    elif data.startswith(b"#!"):
        command = data[2:].split(b"\n", 1)[0].rstrip(b"\r")
        rest = data[2 + len(command) :]
        now = b"#!" + os.fsencode(_moved(os.fsdecode(command), moved)) + rest
    else:
        return
    if now != data:
        mode = stat.S_IMODE(copy.stat().st_mode)
        copy.unlink()
        copy.write_bytes(now)
        copy.chmod(mode)
