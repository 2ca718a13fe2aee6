"""deploy/kubernetes/: each overlay renders with `kubectl kustomize`, every object is valid for the
Kubernetes versions we support (unknown fields refused), and the objects run what the code runs:
commands the CLI has, settings it reads, probes where it serves them, replicas it can share."""

import base64
import copy
import tomllib
from typing import Any

import kubernetes_validate
import msgspec
import pytest

from infra.cli.processes import PROCESSES
from infra.security.sealing import Sealer
from infra.settings import PREFIX, Settings
from infra.telemetry import tracing
from tests.cli_args import parsed
from tests.kustomize import OVERLAYS, ROOT, Manifest, containers, of_kind, one, rendered

# The three newest minor versions kubernetes-validate ships schemas for.
VERSIONS = ("1.35.0", "1.36.0", "1.37.0")
RUN_AS = 65532  # the Dockerfile's USER
SECRETS = {"trainplate-servers", "trainplate-keys"}


def env_of(overlay: str) -> dict[str, str]:
    """What the API's pod is given: the settings ConfigMap and, in dev, the Secrets."""
    env: dict[str, str] = {}
    for manifest in rendered(overlay):
        if manifest["kind"] == "ConfigMap" and manifest["metadata"]["name"].startswith(
            "trainplate-settings"
        ):
            env |= manifest["data"]
        if manifest["kind"] == "Secret" and manifest["metadata"]["name"].startswith(tuple(SECRETS)):
            env |= {k: _decoded(v) for k, v in manifest["data"].items()}
    return env


def _decoded(value: str) -> str:
    return base64.b64decode(value).decode()


def trainplate(overlay: str) -> dict[str, Manifest]:
    """The four processes' Deployments, by process."""
    return {process: one(overlay, "Deployment", f"trainplate-{process}") for process in PROCESSES}


def pod(deployment: Manifest) -> dict[str, Any]:
    found: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return found


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_is_valid_for_the_supported_kubernetes_versions(
    overlay: str, version: str
) -> None:
    for manifest in rendered(overlay):
        kubernetes_validate.validate(manifest, version, strict=True)


def test_an_unknown_field_is_refused() -> None:
    deployment = copy.deepcopy(one("dev", "Deployment", "trainplate-api"))
    pod(deployment)["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[-1], strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_four_processes_run_from_one_image_with_commands_the_cli_has(overlay: str) -> None:
    images = set()
    for process, deployment in trainplate(overlay).items():
        (container,) = pod(deployment)["containers"]
        command, args = parsed(container["args"])  # raises on an unknown command
        assert (command, args["process"]) == (["serve"], process)
        images.add(container["image"])
        for init in pod(deployment).get("initContainers", ()):
            assert parsed(init["args"])[0] == ["migrate"]
            images.add(init["image"])
    assert len(images) == 1
    # The API migrates before it serves; the workers do it themselves at start-up.
    (migrate,) = pod(trainplate(overlay)["api"])["initContainers"]
    assert migrate["args"] == ["migrate"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_setting_given_is_one_the_service_reads(overlay: str) -> None:
    sections = {f.name: f.type for f in msgspec.structs.fields(Settings)}
    short = {"database_url", "nats_url"}
    env = env_of(overlay)
    for name in env:
        if name.startswith("OTEL_"):  # OpenTelemetry's own, read by its SDK
            continue
        field = name.removeprefix(PREFIX).lower()
        section, _, rest = field.partition("__")
        if rest:
            assert rest in {f.name for f in msgspec.structs.fields(sections[section])}, name
        else:
            assert field in sections or field in short, name
    settings = Settings.from_env(env)
    assert settings.api_host == "0.0.0.0"
    assert settings.submitter.backend == "kubernetes"
    assert settings.submitter.kubeconfig == ""  # the pod's service account
    assert settings.nats.replicas == (3 if overlay == "production" else 1)
    if overlay == "production":
        assert one(overlay, "StatefulSet", "nats")["spec"]["replicas"] == 3


def test_dev_is_given_keys_the_service_takes() -> None:
    settings = Settings.from_env(env_of("dev"))
    assert len(settings.auth.signing_key) >= 32
    Sealer(settings.credentials)  # refuses a key that is not 32 bytes
    assert settings.database.url.startswith("postgresql://trainplate:")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_the_api_holds_the_keys_and_production_keeps_no_secret(overlay: str) -> None:
    for process, deployment in trainplate(overlay).items():
        refs = {
            source["secretRef"]["name"].rsplit("-", 1)[0]
            if overlay == "dev"
            else source["secretRef"]["name"]
            for container in pod(deployment)["containers"]
            for source in container.get("envFrom", ())
            if "secretRef" in source
        }
        assert refs == (SECRETS if process == "api" else {"trainplate-servers"}), process
    if overlay == "production":
        assert of_kind(overlay, "Secret") == []


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_runs_restricted_with_resource_requests(overlay: str) -> None:
    for workload, container in containers(overlay):
        where = f"{workload['metadata']['name']}/{container['name']}"
        context = container["securityContext"]
        assert context["runAsNonRoot"] is True, where
        assert context["readOnlyRootFilesystem"] is True, where
        assert context["allowPrivilegeEscalation"] is False, where
        assert context["capabilities"] == {"drop": ["ALL"]}, where
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert {"cpu", "memory"} <= set(container["resources"]["requests"]), where
    for deployment in trainplate(overlay).values():
        assert pod(deployment)["securityContext"]["runAsUser"] == RUN_AS
        mounts = {m["mountPath"] for m in pod(deployment)["containers"][0]["volumeMounts"]}
        assert "/tmp" in mounts


def test_the_image_runs_as_the_user_the_pods_run_as() -> None:
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    assert sum(line.startswith("FROM ") for line in lines) >= 2  # build, then run
    assert [line for line in lines if line.startswith("USER ")] == [f"USER {RUN_AS}:{RUN_AS}"]
    (install,) = [line for line in lines if "pip install" in line]
    # Production dependencies and the OTLP exporter only: no embedded servers, dev tools, torch.
    assert install.endswith("pip install '.[otlp]'")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch" not in " ".join(extras["dependencies"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_the_api_is_probed_where_it_serves(overlay: str) -> None:
    port = Settings.from_env(env_of(overlay)).api_port
    for process, deployment in trainplate(overlay).items():
        (container,) = pod(deployment)["containers"]
        probes = {key for key in container if key.endswith("Probe")}
        if process != "api":
            assert probes == set(), process  # they serve no HTTP
            continue
        (declared,) = container["ports"]
        assert (declared["name"], declared["containerPort"]) == ("http", port)
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_replicas_the_code_can_share_or_stand_by_with(overlay: str) -> None:
    replicas = {p: d["spec"].get("replicas") for p, d in trainplate(overlay).items()}
    # The API's are the autoscaler's to set, which a `replicas` in the manifest would undo.
    assert replicas == {"api": None, "relay": 2, "projector": 2, "submitter": 2}
    (hpa,) = of_kind(overlay, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "trainplate-api"
    assert hpa["spec"]["minReplicas"] >= 2
    budgets = {b["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"]: b for b in
               of_kind(overlay, "PodDisruptionBudget")}  # fmt: skip
    assert "trainplate" in budgets
    api_budget = one(overlay, "PodDisruptionBudget", "trainplate-api")
    assert api_budget["spec"]["minAvailable"] == 1


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_the_api_and_scrapes_of_metrics_get_in_and_only_trainplate_reaches_the_servers(
    overlay: str,
) -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in of_kind(overlay, "NetworkPolicy")}
    deny = policies.pop("default-deny-ingress")
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}
    api = policies.pop("trainplate-api-ingress")
    assert api["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "api"
    assert api["ingress"] == [{"ports": [{"port": 8080, "protocol": "TCP"}]}]
    scrapes = policies.pop("trainplate-metrics-ingress")
    served = metrics_ports(Settings.from_env(env_of(overlay)))
    workers = {process for process in served if process != "api"}
    pods = {p: d["spec"]["template"]["metadata"]["labels"] for p, d in trainplate(overlay).items()}
    assert {p for p, labels in pods.items() if selects(scrapes["podSelector"], labels)} == workers
    (rule,) = scrapes["ingress"]
    assert rule["from"] == [{"namespaceSelector": {}}]  # pods of the cluster, no address block
    assert {(port["port"], port["protocol"]) for port in rule["ports"]} == {
        (served[process], "TCP") for process in workers
    }
    servers = {"nats"} if overlay == "production" else {"nats", "postgres"}
    assert {p["podSelector"]["matchLabels"]["app.kubernetes.io/name"] for p in policies.values()} \
        == servers  # fmt: skip
    for spec in policies.values():
        for rule in spec["ingress"]:
            (peer,) = rule["from"]
            assert set(peer) == {"podSelector"}  # pods of this namespace, no address block
            allowed = peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
            assert allowed in ("trainplate", "nats")  # nats: the cluster's own routes
    for labels in pods.values():
        assert labels["app.kubernetes.io/name"] == "trainplate"


def metrics_ports(settings: Settings) -> dict[str, int]:
    """Where each process serves /metrics by its settings: the API on its own port, a worker
    whose settings have a `metrics_port` on that (0: it serves none)."""
    served = {"api": settings.api_port}
    for process in PROCESSES:
        port = getattr(getattr(settings, process, None), "metrics_port", None)
        if isinstance(port, int):
            served[process] = port
    return served


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a label selector (matchLabels, matchExpressions with In) takes these labels."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", ()):
        assert expression["operator"] == "In", expression  # the one operator these use
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_process_serving_metrics_has_the_port_its_settings_name_and_is_scraped(
    overlay: str,
) -> None:
    settings = Settings.from_env(env_of(overlay))
    served = metrics_ports(settings)
    assert set(served) == set(PROCESSES)  # every worker serves its own today
    policies = of_kind(overlay, "NetworkPolicy")
    for process, deployment in trainplate(overlay).items():
        port = served[process]
        (container,) = pod(deployment)["containers"]
        named = "http" if process == "api" else "metrics"
        declared = {p["name"]: (p["containerPort"], p["protocol"]) for p in container["ports"]}
        assert declared == {named: (port, "TCP")}, process
        if process != "api":  # served beside the pod's network interface, not on loopback
            assert getattr(settings, process).metrics_host == "0.0.0.0", process
        template = deployment["spec"]["template"]["metadata"]
        assert template["annotations"] == {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(port),
            "prometheus.io/path": "/metrics",
        }, process
        admitted = {
            (p["port"], p.get("protocol", "TCP"))
            for policy in policies
            if selects(policy["spec"]["podSelector"], template["labels"])
            for rule in policy["spec"].get("ingress", ())
            for p in rule.get("ports", ())
        }
        assert (port, "TCP") in admitted, process


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_process_names_itself_in_its_traces_and_production_says_where_they_go(
    overlay: str,
) -> None:
    settings = Settings.from_env(env_of(overlay))
    for process, deployment in trainplate(overlay).items():
        (container,) = pod(deployment)["containers"]
        env = {e["name"]: e["value"] for e in container.get("env", ())}
        # The name the process gives itself when none is set (infra/cli/main.py).
        assert env == {"OTEL_SERVICE_NAME": f"{settings.service_name}-{process}"}, process
    endpoint = env_of(overlay).get("OTEL_EXPORTER_OTLP_ENDPOINT")
    assert endpoint == ("" if overlay == "production" else None)
    # Left empty, nothing is recorded until the operator names a collector.
    assert tracing.configure("trainplate-api", env_of(overlay)) is False


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_the_submitter_has_a_token_and_a_role(overlay: str) -> None:
    for process, deployment in trainplate(overlay).items():
        spec = pod(deployment)
        assert spec["serviceAccountName"] == f"trainplate-{process}"
        assert spec["automountServiceAccountToken"] is (process == "submitter")
    assert of_kind(overlay, "Role") == []
    assert of_kind(overlay, "RoleBinding") == []
    (binding,) = of_kind(overlay, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "trainplate-submitter"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "trainplate-submitter", "namespace": "trainplate"}
    ]
    (role,) = of_kind(overlay, "ClusterRole")
    assert role["rules"] == one("dev", "ClusterRole", "trainplate-submitter")["rules"]


def test_the_namespace_enforces_the_restricted_pod_security_standard() -> None:
    for overlay in OVERLAYS:
        namespace = one(overlay, "Namespace", "trainplate")
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
        assert {m["metadata"].get("namespace", "trainplate") for m in rendered(overlay)} == {
            "trainplate"
        }
