"""The API under uvicorn and under granian in one run, against the same servers and rows:
GETs of one template by id and template creates, with the serving process tree's CPU per
request. `TRAINPLATE_API_SERVER` picks the default; decision 0035 records the choice."""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from uuid import uuid4

from bench.harness import Figure, cpu_seconds, nats, postgres, report
from bench.read import caught_up, read_load
from bench.template_create import _created, drive, server, service_env, setup
from infra.cli.embedded import free_port

SERVERS = ("uvicorn", "granian")
TEMPLATES = "/api/v1/workload-templates/distributed"


def _projector(env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "infra.cli", "serve", "projector"]
    return subprocess.Popen(argv, env={**os.environ, **env})


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its children: granian serves from a worker process."""
    with open(f"/proc/{pid}/task/{pid}/children") as listed:
        children = [int(child) for child in listed.read().split()]
    return cpu_seconds(pid) + sum(tree_cpu_seconds(child) for child in children)


async def _body_maker(
    url: str, headers: dict[str, str]
) -> tuple[str, Callable[[], dict[str, object]]]:
    supports = {"distributed": True, "distFramework": "PyTorch"}
    environment = await _created(url, "/api/v1/asset/environment", headers, {
        "meta": {"name": f"pt-{uuid4().hex[:8]}", "scope": "tenant",
                 "workloadSupportedTypes": supports},
        "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    })  # fmt: skip
    compute = await _created(url, "/api/v1/asset/compute", headers, {
        "meta": {"name": f"gpu-{uuid4().hex[:8]}", "scope": "tenant"},
        "spec": {"gpuDevicesRequest": 8},
    })  # fmt: skip
    one = await _created(url, TEMPLATES, headers, _template(environment, compute))
    return one, lambda: _template(environment, compute)


def _template(environment: str, compute: str) -> dict[str, object]:
    return {
        "meta": {"name": f"ddp-{uuid4().hex[:12]}", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 4},
        "assets": {"environment": environment, "compute": compute},
    }


async def one_round(
    name: str, database_url: str, nats_url: str, headers: dict[str, str], seconds: float, n: int
) -> tuple[float, float, float, float]:
    """GETs/s, creates/s and the CPU seconds per GET and per create of one server."""
    port = free_port()
    env = {**service_env(database_url, nats_url, port), "TRAINPLATE_API_SERVER": name}
    url = f"http://127.0.0.1:{port}"
    with server([sys.executable, "-m", "infra.cli", "serve", "api"], env, f"{url}/healthz") as pid:
        one, body = await _body_maker(url, headers)
        await caught_up(database_url)  # the GETs read the template's read model
        path = f"{TEMPLATES}/{one}"
        before = tree_cpu_seconds(pid)
        get_rate, got = await read_load(url, lambda: path, headers, seconds, n)
        get_cpu = (tree_cpu_seconds(pid) - before) / len(got)
        before = tree_cpu_seconds(pid)
        post_rate, posted = await drive(url, TEMPLATES, headers, body, seconds, n)
        post_cpu = (tree_cpu_seconds(pid) - before) / len(posted)
    return get_rate, post_rate, get_cpu, post_cpu


async def main(rounds: int, seconds: float, connections: int) -> None:
    gets = {name: Figure(name=f"GET by id, {connections} in flight") for name in SERVERS}
    posts = {name: Figure(name=f"template create, {connections} in flight") for name in SERVERS}
    cpu: dict[str, dict[str, list[float]]] = {n: {"get": [], "post": []} for n in SERVERS}
    with postgres() as database_url, nats() as nats_url:
        token, _ = await setup(database_url)
        headers = {"authorization": f"Bearer {token}"}
        projector = _projector(service_env(database_url, nats_url, free_port()))
        try:
            for _ in range(rounds):
                for name in SERVERS:  # one server at a time, beside the one projector
                    measured = await one_round(
                        name, database_url, nats_url, headers, seconds, connections
                    )
                    gets[name].ours.append(measured[0])
                    posts[name].ours.append(measured[1])
                    cpu[name]["get"].append(measured[2])
                    cpu[name]["post"].append(measured[3])
        finally:
            projector.terminate()
            projector.wait(timeout=15)
    for figure in (gets, posts):
        figure["granian"].baseline = figure["uvicorn"].ours
        figure["granian"].target = None
    report("The API under granian", "the API under uvicorn", [gets["granian"], posts["granian"]])
    for name in SERVERS:
        print(
            f"  {name:8} CPU per request: GET {statistics.median(cpu[name]['get']) * 1e6:.0f} us,"
            f" create {statistics.median(cpu[name]['post']) * 1e6:.0f} us (medians of rounds)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.seconds, args.connections))
