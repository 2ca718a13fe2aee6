"""Where workloads run, and how what became of a run comes back."""

from collections.abc import Mapping, Sequence
from typing import Protocol
from uuid import UUID

import msgspec

from domain.cluster_specs import StorageClassSpec
from domain.events import PodObserved
from domain.workload_plans import WorkloadPlan
from domain.workloads import Outcome


class Submission(msgspec.Struct, frozen=True, kw_only=True):
    """What a backend did with a plan: its name, and what it rendered (kept by a dry run)."""

    backend: str
    manifests: tuple[dict[str, object], ...] = ()


class RunStatus(msgspec.Struct, frozen=True):
    """What a backend sees of a run it took: the outcome to record, and why."""

    outcome: Outcome
    reason: str | None = None


class WorkloadBackend(Protocol):
    """Where workloads run (local, Kubernetes, nowhere for a dry run); idempotent by the plan's job
    name: submitting what runs starts nothing, stopping what is gone succeeds. Outcomes come back
    through `Reports`; `status` answers again for a run whose report was lost."""

    name: str

    async def submit(self, plan: WorkloadPlan) -> Submission:
        """Start the plan's run. Raises BackendRejectedError when it can never start."""
        ...

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        """Stop the plan's run; `suspend`: the workload is to resume later (a backend that can
        keep what it made, suspended, does; the others stop it all the same)."""
        ...

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        """What became of the plan's run, which it took: running, its outcome, or failed when
        nothing of it is left; None when it has nothing to add (under way elsewhere, or it
        cannot tell)."""
        ...


class Reports(Protocol):
    """Where a backend sends what became of a run."""

    async def __call__(
        self, workload_id: UUID, run: int, outcome: Outcome, reason: str | None = None
    ) -> None: ...


class PodReports(Protocol):
    """Where a backend sends the replicas of a run as it now sees them (the whole set; `run`
    None: the workload's current run)."""

    async def __call__(
        self, workload_id: UUID, run: int | None, pods: Sequence[PodObserved]
    ) -> None: ...


class StorageClassReports(Protocol):
    """Where a backend sends every StorageClass its cluster has now, by name."""

    async def __call__(self, classes: Mapping[str, StorageClassSpec]) -> None: ...
