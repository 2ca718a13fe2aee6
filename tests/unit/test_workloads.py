"""The workload aggregate: what a user wants and what the backend reports, kept apart and
numbered by run, so a stale report cannot move the current run."""

from uuid import UUID

import pytest

from domain import workloads
from domain.events import WorkloadEvent, WorkloadRequested
from domain.workloads import InvalidWorkloadError, WorkloadNotFoundError, WorkloadStateError
from tests.workload_samples import requested_workload

ID = UUID("3f2b8c1d-9a4e-4f6b-8d2c-7e1a5b9c0d4f")


def requested(name: str = "ddp") -> WorkloadRequested:
    spec = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"}
    return requested_workload(spec, name=name, workload_id=ID)


def fold_after(*steps: list[WorkloadEvent]) -> workloads.Workload:
    state = workloads.fold(event for step in steps for event in step)
    assert state is not None
    return state


def test_a_request_is_creating_until_the_backend_takes_it_then_pending_running_completed() -> None:
    history = workloads.request(None, requested())
    state = fold_after(history)
    assert (state.desired, state.actual, state.run) == ("Running", "Creating", 1)
    submitted = workloads.submitted(state, ID, 1, "dry-run")
    state = fold_after(history, submitted)
    assert state.actual == "Pending"
    assert workloads.submitted(state, ID, 1, "dry-run") == []  # a redelivery adds nothing
    running = workloads.reported(state, ID, 1, "running", None)
    state = fold_after(history, submitted, running)
    assert state.actual == "Running"
    assert workloads.reported(state, ID, 1, "running", None) == []
    done = workloads.reported(state, ID, 1, "succeeded", None)
    state = fold_after(history, submitted, running, done)
    assert state.actual == "Completed"
    assert workloads.reported(state, ID, 1, "failed", "late") == []  # finished is final


def test_a_failure_keeps_its_reason() -> None:
    history = [*workloads.request(None, requested())]
    history += workloads.submitted(fold_after(history), ID, 1, "local")
    history += workloads.reported(fold_after(history), ID, 1, "failed", "worker-1 exited with 3")
    state = fold_after(history)
    assert (state.actual, state.reason) == ("Failed", "worker-1 exited with 3")
    with pytest.raises(WorkloadStateError):
        workloads.suspend(state, ID)


def test_suspend_then_resume_starts_a_new_run_and_ignores_the_old_runs_reports() -> None:
    history = [*workloads.request(None, requested())]
    history += workloads.submitted(fold_after(history), ID, 1, "local")
    history += workloads.suspend(fold_after(history), ID)
    assert workloads.suspend(fold_after(history), ID) == []  # idempotent
    state = fold_after(history)
    assert (state.desired, state.actual) == ("Stopped", "Stopping")
    assert workloads.reported(state, ID, 1, "running", None) == []  # not while stopping
    history += workloads.reported(state, ID, 1, "stopped", None)
    assert fold_after(history).actual == "Stopped"
    history += workloads.resume(fold_after(history), ID)
    state = fold_after(history)
    assert (state.desired, state.actual, state.run) == ("Running", "Resuming", 2)
    assert workloads.reported(state, ID, 1, "failed", "killed") == []  # the old run
    assert workloads.submitted(state, ID, 1, "local") == []
    history += workloads.submitted(state, ID, 2, "local")
    assert fold_after(history).actual == "Pending"


def test_delete_frees_the_workload_and_a_deleted_one_is_not_found() -> None:
    history = [*workloads.request(None, requested())]
    history += workloads.delete(fold_after(history), ID)
    state = fold_after(history)
    assert (state.desired, state.actual, state.deleted) == ("Deleted", "Deleting", True)
    with pytest.raises(WorkloadNotFoundError):
        workloads.resume(state, ID)
    history += workloads.reported(state, ID, 1, "stopped", None)
    assert fold_after(history).actual == "Stopped"


@pytest.mark.parametrize("name", ["Upper", "1st", "a_b", "x" * 41, "trailing-", "line\n"])
def test_a_name_that_cannot_be_a_kubernetes_name_is_refused(name: str) -> None:
    with pytest.raises(InvalidWorkloadError) as caught:
        workloads.request(None, requested(name))
    assert caught.value.field == "/name"


def test_the_job_name_is_the_name_and_the_id_and_stays_a_dns_label() -> None:
    name = workloads.job_name("x" * 40, ID)
    assert name == "x" * 40 + "-3f2b8c1d"
    assert len(f"{name}-launcher-0") <= 63
