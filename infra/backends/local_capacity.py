"""How many replica processes the local backend (infra/backends/local.py) runs at once: a run
with more replicas is refused for good, naming both counts; one that does not fit beside the
runs under way is refused for now, and the queue delivers it again after its backoff."""

import os
import resource
from typing import Final

from infra.errors import InfraError
from services.errors import BackendRejectedError

SETTING: Final = "TRAINPLATE_SUBMITTER__LOCAL_MAX_PROCESSES"
PER_CPU: Final = 32
# While a replica starts the service holds its log, /dev/null, the exec pipe and its port.
FILES_PER_PROCESS: Final = 4
FILES_KEPT: Final = 256  # the service's own: its database and broker connections, its logs


def default_capacity() -> int:
    """32 processes per CPU this process may use, and no more than its open-files limit leaves
    room to start."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    by_cpu = PER_CPU * (cpus or 1)
    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files == resource.RLIM_INFINITY:
        return by_cpu
    return max(1, min(by_cpu, (files - FILES_KEPT) // FILES_PER_PROCESS))


class LocalBackendBusyError(InfraError):
    """The run cannot start now (it does not fit beside the runs under way): it may, later."""

    slug = "local-backend-busy"

    def __init__(self, job_name: str, reason: str) -> None:
        super().__init__(f"{job_name}: {reason}")
        self.job_name = job_name
        self.reason = reason


class Capacity:
    def __init__(self, most: int) -> None:
        self.most = most
        self.in_use = 0

    def take(self, job_name: str, count: int) -> None:
        """Hold room for `count` processes, or refuse: for good when they can never fit."""
        if count > self.most:
            raise BackendRejectedError(
                job_name,
                f"{count} processes: more than the local backend runs at once ({self.most}, "
                f"{SETTING})",
            )
        if self.in_use + count > self.most:
            raise LocalBackendBusyError(
                job_name,
                f"{count} processes do not fit beside the {self.in_use} under way "
                f"(the local backend runs {self.most} at once)",
            )
        self.in_use += count

    def give_back(self, count: int) -> None:
        self.in_use -= count
