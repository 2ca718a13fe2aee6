"""What a local run (infra/backends/local.py) leaves in its folder for whoever looks next, this
submitter or another one: `supervisor`, locked while a submitter supervises the run (the lock
dies with its process, even killed with -9); `started`, made once, under that lock, before any
replica starts.
"""

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Final

SUPERVISOR: Final = "supervisor"
STARTED: Final = "started"


def claim(directory: Path) -> int | None:
    """Take the run to start it: its supervisor lock (held while it is supervised), then its
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
    with contextlib.suppress(FileNotFoundError):
        (directory / STARTED).unlink()
    os.close(lock)
