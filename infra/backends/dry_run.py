"""The dry-run backend: renders each run's Kubeflow job and records it, starting nothing. For
reviewing what the Kubernetes backend would create, and for CI."""

from typing import Any

from domain.workload_plans import WorkloadPlan
from infra.backends.kubeflow_jobs import DEFAULT_SCHEDULER, to_kubeflow_job
from services.ports import Submission


class DryRunBackend:
    name = "dry-run"

    def __init__(self, *, scheduler_name: str = DEFAULT_SCHEDULER) -> None:
        self._scheduler = scheduler_name

    async def submit(self, plan: WorkloadPlan) -> Submission:
        manifest: dict[str, Any] = to_kubeflow_job(plan, scheduler_name=self._scheduler)
        return Submission(backend=self.name, manifests=(manifest,))

    async def stop(self, plan: WorkloadPlan) -> None:
        """Nothing runs, so nothing stops."""
