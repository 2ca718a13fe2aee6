"""Starting one of the service's processes (`trainplate serve <process>`) against test servers,
for the tests that kill them."""

import os
import subprocess
import sys


def serve(
    process: str, postgres_url: str, nats_url: str, **settings: str
) -> "subprocess.Popen[bytes]":
    """`settings`: more TRAINPLATE_ variables, e.g. RELAY__BATCH_SIZE="1000"."""
    env = {
        **os.environ,
        "TRAINPLATE_DATABASE_URL": postgres_url,
        "TRAINPLATE_NATS_URL": nats_url,
        "TRAINPLATE_LOG_LEVEL": "WARNING",
        **{f"TRAINPLATE_{name}": value for name, value in settings.items()},
    }
    return subprocess.Popen([sys.executable, "-m", "infra.cli", "serve", process], env=env)
