"""What a backend on Kubernetes creates for one run of a workload, in the Kubeflow API the
cluster runs (the submitter's `kubeflow_api` setting): one Training Operator v1 job, or a Trainer
v2 TrainingRuntime and the TrainJob that runs it. The dry run records exactly these."""

from typing import Any

from domain.workload_plans import WorkloadPlan
from infra.backends.kubeflow_jobs import to_kubeflow_job
from infra.backends.scheduling import Scheduling
from infra.backends.trainer_v2 import to_trainer_v2
from infra.settings import KubeflowApi


def render(
    plan: WorkloadPlan, api: KubeflowApi, scheduling: Scheduling
) -> tuple[dict[str, Any], ...]:
    if api == "v1":
        return (to_kubeflow_job(plan, scheduling),)
    return to_trainer_v2(plan, scheduling)
