"""The Grafana dashboard (deploy/grafana/) asks only for metrics the service exports: every name
in its queries is one the registries of the API, the projector, the relay and the submitter
hold (tests/integration/test_dev_workload.py finds them all in real scrapes too)."""

import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from infra.followers.metrics import LagGauges, ProjectorMetrics, workloads_exposition
from infra.http.consistency import STALE_READS
from infra.telemetry.meters import ApiMetrics, RelayMetrics, SubmitterMetrics

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "trainplate.json"
METRIC = re.compile(r"\btrainplate_[a-z_]+\b")
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gauge": ("",),
}


def queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def dashboard_metrics() -> set[str]:
    return {name for query in queries() for name in METRIC.findall(query)}


def exported() -> set[str]:
    """Every sample name the service's registries can expose."""
    lag = CollectorRegistry()
    LagGauges(lag)
    registries = [
        ApiMetrics().registry,
        ProjectorMetrics().registry,
        RelayMetrics().registry,
        SubmitterMetrics().registry,
        STALE_READS,
        lag,
    ]
    names = {
        family.name + suffix
        for registry in registries
        for family in registry.collect()
        for suffix in SUFFIXES[family.type]
    }
    return names | set(METRIC.findall(workloads_exposition({}).decode()))


def test_every_query_names_only_metrics_the_service_exports() -> None:
    assert queries()
    unknown = dashboard_metrics() - exported()
    assert not unknown, f"the dashboard asks for metrics nobody exports: {sorted(unknown)}"
