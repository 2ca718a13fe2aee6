"""The dry-run backend: renders each run's Kubeflow objects and records them, starting nothing.
For reviewing what the Kubernetes backend would create (`GET /api/v1/workloads/{id}/manifests`),
and for CI."""

from domain.workload_plans import WorkloadPlan
from infra.backends.manifests import render
from infra.backends.scheduling import Scheduling
from infra.settings import KubeflowApi
from services.ports.workload_backends import RunStatus, Submission


class DryRunBackend:
    name = "dry-run"

    def __init__(
        self, *, kubeflow_api: KubeflowApi = "trainer-v2", scheduling: Scheduling | None = None
    ) -> None:
        self._api: KubeflowApi = kubeflow_api
        self._scheduling = scheduling or Scheduling()

    async def submit(self, plan: WorkloadPlan) -> Submission:
        return Submission(backend=self.name, manifests=render(plan, self._api, self._scheduling))

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        """Nothing runs, so nothing stops."""

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        """Nothing runs, so nothing happens to it: a dry run stays Pending."""
        return None
