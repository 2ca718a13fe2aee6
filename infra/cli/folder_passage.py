"""Let one user pass the folders above a path (a POSIX ACL entry `user:<uid>:--x` on each), so a
root service's embedded PostgreSQL reaches its files while everyone else still cannot pass a
private `/root`. A file system without ACLs gets the old `o+x` instead, and a warning."""

import logging
import os
import stat
import struct
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

_XATTR: Final = "system.posix_acl_access"
_VERSION: Final = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_NO_ID: Final = 0xFFFFFFFF
_EXECUTE: Final = 1
_ENTRY: Final = struct.Struct("<HHI")


def grant_passage(path: Path, uid: int, gid: int) -> None:
    """Every folder above `path` that `uid` could not pass lets it pass, and only it."""
    for folder in path.resolve().parents:
        if not _passable_by(folder, uid, gid):
            _allow(folder, uid)


def _passable_by(folder: Path, uid: int, gid: int) -> bool:
    found = folder.stat()
    if found.st_uid == uid:
        return bool(found.st_mode & stat.S_IXUSR)
    if found.st_mode & stat.S_IXOTH or (found.st_gid == gid and found.st_mode & stat.S_IXGRP):
        return True
    entries = _entries(folder)
    mask = next((p for tag, p, _ in entries if tag == _MASK), 7)  # `chmod g-x` lowers it
    return any(tag == _USER and i == uid and p & mask & _EXECUTE for tag, p, i in entries)


def _allow(folder: Path, uid: int) -> None:
    entries = [e for e in _entries(folder) if e[0] != _MASK]
    mine = [e for e in entries if e[0] == _USER and e[2] == uid]
    entries = [e for e in entries if e not in mine]
    entries.append((_USER, (mine[0][1] if mine else 0) | _EXECUTE, uid))
    mask = 0
    for tag, perm, _ in entries:
        if tag in (_USER, _GROUP_OBJ, _GROUP):
            mask |= perm
    entries.append((_MASK, mask, _NO_ID))
    entries.sort(key=lambda e: (e[0], e[2]))
    data = struct.pack("<I", _VERSION) + b"".join(_ENTRY.pack(*e) for e in entries)
    try:
        os.setxattr(folder, _XATTR, data)
    except OSError as error:  # no ACLs on this file system
        log.warning("%s: no ACL (%s); letting everyone pass it (o+x)", folder, error.strerror)
        folder.chmod(stat.S_IMODE(folder.stat().st_mode) | stat.S_IXOTH)


def _entries(folder: Path) -> list[tuple[int, int, int]]:
    try:
        data = os.getxattr(folder, _XATTR)
    except OSError:
        return _from_mode(folder.stat().st_mode)
    return [_ENTRY.unpack_from(data, 4 + i * 8) for i in range((len(data) - 4) // 8)]


def _from_mode(mode: int) -> list[tuple[int, int, int]]:
    """The ACL a folder without one has: its mode's owner, group and other bits."""
    return [
        (_USER_OBJ, (mode >> 6) & 7, _NO_ID),
        (_GROUP_OBJ, (mode >> 3) & 7, _NO_ID),
        (_OTHER, mode & 7, _NO_ID),
    ]
