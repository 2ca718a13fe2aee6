"""What a backend reports of a run's replicas: recorded when the set changes, for the current
run only; a Kubernetes pod read as a replica, whichever Kubeflow API made it."""

from datetime import UTC, datetime
from uuid import UUID

from kubernetes_asyncio import client

from domain import workloads
from domain.events import Event, PodObserved, WorkloadPodsChanged, WorkloadResumed
from infra.backends.kubernetes_pods import observed
from tests.workload_samples import requested_workload

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def replica(name: str, phase: str = "Running") -> PodObserved:
    return PodObserved(
        name=name, uid=UUID(int=1), role="worker", phase=phase,  # type: ignore[arg-type]
        created_at=AT, phase_changed_at=AT,
    )  # fmt: skip


def test_a_change_of_the_current_runs_replicas_is_recorded_once() -> None:
    event = requested_workload({"distributedFramework": "JAX", "numWorkers": 2, "image": "i"})
    state = workloads.fold([event])
    pods = (replica("a"), replica("b"))
    (recorded,) = workloads.pods_observed(state, event.workload_id, None, pods)
    assert isinstance(recorded, WorkloadPodsChanged)
    assert (recorded.run, recorded.pods, recorded.gone) == (1, pods, ())
    after = workloads.fold([event, recorded])
    assert after is not None
    assert after.pods == pods
    assert workloads.pods_observed(after, event.workload_id, 1, pods) == []  # nothing new
    assert workloads.pods_observed(after, event.workload_id, 0, ()) == []  # an earlier run's
    (gone,) = workloads.pods_observed(after, event.workload_id, 1, ())
    assert isinstance(gone, WorkloadPodsChanged)
    assert (gone.pods, gone.gone) == ((), ("a", "b"))


def test_only_what_changed_is_recorded_and_the_changes_make_the_set() -> None:
    event = requested_workload({"distributedFramework": "JAX", "numWorkers": 3, "image": "i"})
    events: list[Event] = [event]
    reports = [
        (replica("b", "Pending"), replica("a", "Pending")),
        (replica("a"), replica("b", "Pending")),
        (replica("a"), replica("b"), replica("c", "Pending")),
        (replica("a", "Succeeded"), replica("c")),
        (replica("c"), replica("c", "Failed")),  # a name twice: the last
    ]
    for pods in reports:
        state = workloads.fold(events)
        events.extend(workloads.pods_observed(state, event.workload_id, None, pods))
        after = workloads.fold(events)
        assert after is not None
        assert after.pods == tuple(sorted({p.name: p for p in pods}.values(), key=name_of))
    changes = [e for e in events if isinstance(e, WorkloadPodsChanged)]
    assert [([p.name for p in e.pods], list(e.gone)) for e in changes] == [
        (["a", "b"], []),
        (["a"], []),
        (["b", "c"], []),
        (["a", "c"], ["b"]),
        (["c"], ["a"]),
    ]


def test_a_new_runs_first_report_drops_the_old_runs_replicas() -> None:
    event = requested_workload({"distributedFramework": "JAX", "numWorkers": 1, "image": "i"})
    first = WorkloadPodsChanged(
        workload_id=event.workload_id, run=1, pods=(replica("job-worker-0"),)
    )
    resumed = WorkloadResumed(workload_id=event.workload_id, run=2)
    state = workloads.fold([event, first, resumed])
    again = PodObserved(
        name="job-worker-0", uid=UUID(int=2), role="worker", phase="Pending",
        created_at=AT, phase_changed_at=AT,
    )  # fmt: skip
    (change,) = workloads.pods_observed(state, event.workload_id, 2, (again,))
    assert isinstance(change, WorkloadPodsChanged)
    assert (change.run, change.pods, change.gone) == (2, (again,), ())
    after = workloads.fold([event, first, resumed, change])
    assert after is not None
    assert after.pods == (again,)


def name_of(pod: PodObserved) -> str:
    return pod.name


def test_a_kubernetes_pod_reads_as_a_replica() -> None:
    started = datetime(2026, 12, 1, 9, 5, tzinfo=UTC)
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name="ddp-1a2b3c4d-node-0-1",
            namespace="runai-team",
            uid="6f9b3c2e-1d4a-4e8f-9a0b-3c5d7e9f1a2b",
            creation_timestamp=AT,
            labels={"jobset.sigs.k8s.io/replicatedjob-name": "node"},
        ),
        spec=client.V1PodSpec(
            node_name="gpu-7",
            containers=[client.V1Container(name="node", image="pytorch:2")],
        ),
        status=client.V1PodStatus(
            phase="Running",
            pod_ip="10.1.2.3",
            conditions=[
                client.V1PodCondition(type="Ready", status="True", last_transition_time=started)
            ],
            container_statuses=[
                client.V1ContainerStatus(
                    name="node",
                    image="pytorch:2",
                    image_id="",
                    ready=True,
                    restart_count=2,
                    state=client.V1ContainerState(
                        running=client.V1ContainerStateRunning(started_at=started)
                    ),
                )
            ],
        ),
    )
    found = observed(pod)
    assert (found.name, found.role, found.phase, found.node_name) == (
        "ddp-1a2b3c4d-node-0-1", "worker", "Running", "gpu-7",
    )  # fmt: skip
    assert found.uid == UUID("6f9b3c2e-1d4a-4e8f-9a0b-3c5d7e9f1a2b")
    assert (found.restarts, found.ip, found.phase_changed_at) == (2, "10.1.2.3", started)
    assert found.containers[0].started_at == started
    launcher = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name="x-launcher-0-0",
            labels={"training.kubeflow.org/replica-type": "Launcher"},
        ),
        status=client.V1PodStatus(phase="Weird"),
    )
    read = observed(launcher)
    assert (read.role, read.phase, read.containers) == ("master", "Unknown", ())
