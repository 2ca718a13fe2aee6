"""The ports the embedded servers of one data directory listen on, kept across restarts
(`<data dir>/ports.json`), so a subscriber's URL stays good: a port found taken by another
program is reported, and a free one chosen and kept instead."""

import contextlib
import json
import logging
import socket
from pathlib import Path

log = logging.getLogger(__name__)


def kept_port(record: Path, name: str) -> int:
    """`name`'s port as `record` keeps it, while nothing else listens there; else a free one,
    kept from now on."""
    ports: dict[str, int] = {}
    with contextlib.suppress(OSError, ValueError):
        found = json.loads(record.read_text())
        ports = {k: v for k, v in found.items() if isinstance(v, int)}
    wanted = ports.get(name)
    if wanted is not None and _free(wanted):
        return wanted
    port = _any_free()
    if wanted is not None:
        log.warning(
            "%s: port %d is taken by another program; it listens on %d now", name, wanted, port
        )
    record.write_text(json.dumps({**ports, name: port}, indent=2))
    return port


def _free(port: int) -> bool:
    """Whether a server may listen on the port now (as the servers do, with SO_REUSEADDR, so a
    port its own last run left in TIME_WAIT counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _any_free() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
