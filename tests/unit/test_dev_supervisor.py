"""`trainplate dev` restarts a child that dies, with a growing delay, and gives up (stopping the
tree) only on one that keeps dying."""

import pytest

from infra.cli.dev import Supervisor


class Child:
    """A child process as the supervisor sees one: running until it is told it exited."""

    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


def test_a_killed_child_is_restarted_after_a_growing_delay(
    capsys: pytest.CaptureFixture[str],
) -> None:
    started: list[str] = []
    children = {"projector": Child(), "api": Child()}

    def start(name: str) -> Child:
        started.append(name)
        children[name] = Child()
        return children[name]

    supervisor = Supervisor(children, start)  # type: ignore[arg-type]
    children["projector"].code = -9
    assert supervisor.tend(0.0)
    assert started == []  # not at once: after 1 s
    assert supervisor.tend(0.5)
    assert supervisor.tend(1.0)
    assert started == ["projector"]
    assert "projector was killed by SIGKILL; restarting it in 1 s" in capsys.readouterr().err
    children["projector"].code = 3
    assert supervisor.tend(2.0)
    assert supervisor.tend(3.9)
    assert started == ["projector"]  # the second exit waits 2 s
    assert supervisor.tend(4.0)
    assert started == ["projector", "projector"]
    assert "projector exited with code 3; restarting it in 2 s" in capsys.readouterr().err
    assert children["api"].poll() is None


def test_a_child_that_keeps_dying_stops_the_tree(capsys: pytest.CaptureFixture[str]) -> None:
    children = {"relay": Child()}

    def start(name: str) -> Child:
        children[name] = Child()
        return children[name]

    supervisor = Supervisor(children, start)  # type: ignore[arg-type]
    now = 0.0
    for exits in range(Supervisor.RESTARTS):
        children["relay"].code = 1  # dies as soon as it is started
        assert supervisor.tend(now)
        now += 2**exits  # its delay: 1, 2, 4, 8, 16 s, 31 s in all
        assert supervisor.tend(now)
        assert children["relay"].poll() is None  # restarted
    children["relay"].code = 1
    assert not supervisor.tend(now)  # the sixth exit within 60 s
    assert "relay exited with code 1, 6 times within 60 s; stopping everything" in (
        capsys.readouterr().err
    )


def test_exits_far_apart_are_each_restarted() -> None:
    children = {"relay": Child()}

    def start(name: str) -> Child:
        children[name] = Child()
        return children[name]

    supervisor = Supervisor(children, start)  # type: ignore[arg-type]
    now = 0.0
    for _ in range(3 * Supervisor.RESTARTS):
        children["relay"].code = 1
        assert supervisor.tend(now)
        now += Supervisor.RESTART_WINDOW_S  # one exit a minute: never more than one recent
        assert supervisor.tend(now)
