"""A template's combined specs: its assets overlaid by its own spec over the defaults (reference
§7, §8, §15), and whether it can be submitted as it is. The workload-wide fields are the worker
spec's, in the master's too, since that is what runs (docs/decisions/0016-domain-shapes.md)."""

from collections.abc import Mapping, Sequence
from typing import Any, Final
from uuid import UUID

import msgspec

from domain import cluster_facts, priorities
from domain.assets import Asset
from domain.cluster_facts import ClusterFacts
from domain.specs import (
    ComputeSpec,
    ConfigMapSpec,
    EnvironmentSpec,
    GitSpec,
    HostPathSpec,
    NfsSpec,
    PvcSpec,
    S3Spec,
    SecretVolumeSpec,
)
from domain.template_rules import MPI_ONLY, PYTORCH_ONLY, WORKLOAD_WIDE, camel, runnable_issue
from domain.template_specs import (
    DataSourceLink,
    DistributedTemplateSpec,
    MasterTemplateSpec,
    ReplicaSpec,
    TemplateAssets,
)
from domain.templates import TemplateBody

_NONE: Final[Mapping[str, Any]] = {}
# Defaults of a distributed (Train category) workload, and per framework. The image pull
# policy follows Kubernetes (pull_policy below).
DEFAULTS: Final[Mapping[str, Any]] = {
    "preemptibility": "preemptible",
    "priorityClass": priorities.DEFAULT,
    "backoffLimit": 6,
    "terminationGracePeriodSeconds": 30,
    "autoDeletionTimeAfterCompletionSeconds": 2_592_000,  # 30 days
}
CLEAN_POD_POLICY: Final[Mapping[str, str]] = {
    "MPI": "Running",
    "PyTorch": "None",
    "XGBoost": "None",
    "TF": "Running",
    "JAX": "None",
}
MPI_DEFAULTS: Final[Mapping[str, Any]] = {
    "slotsPerWorker": 1,
    "sshAuthMountPath": "/root/.ssh",
    "mpiLauncherCreationPolicy": "AtStartup",
}
# The AssetKind of a data volume mounted through a template's assets block.
DATA_VOLUME: Final = "data-volume"
REPLICA_FIELDS: Final = frozenset(f.encode_name for f in msgspec.structs.fields(ReplicaSpec))
MASTER_FIELDS: Final = frozenset(f.encode_name for f in msgspec.structs.fields(MasterTemplateSpec))
WORKLOAD_WIDE_FIELDS: Final = tuple(camel(field) for field in WORKLOAD_WIDE)
# The wire names of the fields only one framework takes, worked out once: every template's
# combined specs go through _drop_foreign.
FRAMEWORK_ONLY_FIELDS: Final = (
    (tuple(map(camel, MPI_ONLY)), "MPI"),
    (tuple(map(camel, PYTORCH_ONLY)), "PyTorch"),
)


class Runnable(msgspec.Struct, frozen=True, rename="camel"):
    is_runnable: bool
    issue: str | None = None


class Combined(msgspec.Struct, frozen=True, kw_only=True):
    spec: DistributedTemplateSpec
    master: MasterTemplateSpec | None
    runnable: Runnable


def credential_secret_name(asset_id: UUID) -> str:
    """The Kubernetes secret a credential asset becomes in a workload's namespace."""
    return f"credential-{asset_id}"


def combine(
    body: TemplateBody,
    assets: Mapping[UUID, Asset],
    *,
    worker_defaults: Mapping[str, Any] = _NONE,
    master_defaults: Mapping[str, Any] = _NONE,
    copy_master: bool = True,
    cluster: ClusterFacts = cluster_facts.NOTHING,
) -> Combined:
    """`assets`: every asset the template refers to that still exists, by id; `cluster`: what its
    cluster holds, for `runnable`. A project's policy defaults lie beneath the assets, above ours.
    `copy_master` False leaves the same-as-worker master out (None), for a store that copies it."""
    problems: list[str] = []
    worker = _resolve(body.assets, body.spec, assets, problems, worker_defaults)
    framework = worker.get("distributedFramework")
    _drop_foreign(worker, worker_defaults, framework)
    _fill(worker, DEFAULTS)
    fill_pull_policy(worker)
    if isinstance(framework, str):
        _fill(worker, {"cleanPodPolicy": CLEAN_POD_POLICY[framework]})
        if framework == "MPI":
            _fill(worker, MPI_DEFAULTS)
    spec = msgspec.convert(worker, DistributedTemplateSpec)
    master: MasterTemplateSpec | None = None
    if body.master_spec_same_as_worker:
        master = master_copy(worker) if copy_master else None
    elif body.master is not None:
        resolved = _resolve(body.master.assets, body.master.spec, assets, problems, master_defaults)
        fill_pull_policy(resolved)
        master = msgspec.convert(with_workload_wide(resolved, worker), MasterTemplateSpec)
    issue = runnable_issue(spec, master, body.master_spec_same_as_worker)
    if issue is not None:
        problems.append(issue)
    problems.extend(cluster_facts.issues(spec, master, body.master_spec_same_as_worker, cluster))
    runnable = Runnable(not problems, "; ".join(problems) or None)
    return Combined(spec=spec, master=master, runnable=runnable)


def _drop_foreign(worker: dict[str, Any], defaults: Mapping[str, Any], framework: object) -> None:
    """A policy's default of a field of one framework's (MPI's slots, PyTorch's elastic
    replicas) is for workloads of that framework: beneath another's it is no value at all."""
    if not defaults:  # no policy beneath (a template's own combined specs): nothing to drop
        return
    for names, only in FRAMEWORK_ONLY_FIELDS:
        for name in names:
            if framework != only and name in defaults and worker.get(name) == defaults[name]:
                del worker[name]


def master_copy(worker: Mapping[str, Any]) -> MasterTemplateSpec:
    """The master of `masterSpecSameAsWorker`: the worker's fields a master has."""
    return msgspec.convert(
        {k: v for k, v in worker.items() if k in MASTER_FIELDS}, MasterTemplateSpec
    )


def master_of(spec: DistributedTemplateSpec) -> MasterTemplateSpec:
    """The master of `masterSpecSameAsWorker`, from the combined worker spec: as master_copy
    makes it from the worker's values."""
    return master_copy(msgspec.to_builtins(spec))


def with_workload_wide(master: dict[str, Any], worker: Mapping[str, Any]) -> dict[str, Any]:
    """The master's own fields, with the whole workload's values as the worker spec has them."""
    for key in WORKLOAD_WIDE_FIELDS:
        master.pop(key, None)
        if worker.get(key) is not None:
            master[key] = worker[key]
    return master


def pull_policy(image: str) -> str:
    """Kubernetes' default for a container that names none: `Always` for an image tagged
    `latest` or not tagged at all (nothing pins what it is), `IfNotPresent` otherwise (a tag
    or a digest pins it)."""
    name, _, digest = image.partition("@")
    tag = name.rsplit("/", 1)[-1].partition(":")[2]
    return "Always" if tag == "latest" or not (tag or digest) else "IfNotPresent"


def fill_pull_policy(resolved: dict[str, Any]) -> None:
    image = resolved.get("image")
    if isinstance(image, str) and resolved.get("imagePullPolicy") is None:
        resolved["imagePullPolicy"] = pull_policy(image)


def _resolve(
    links: TemplateAssets | None,
    own: ReplicaSpec | None,
    assets: Mapping[UUID, Asset],
    problems: list[str],
    beneath: Mapping[str, Any],
) -> dict[str, Any]:
    """`beneath` (a policy's defaults), overlaid by the asset values, overlaid by the template's
    own. (overlay makes new nested values: `beneath` is never changed.)"""
    merged: dict[str, Any] = dict(beneath)
    if links is not None:
        for kind, asset_id in (("environment", links.environment), ("compute", links.compute)):
            if asset_id is None:
                continue
            asset = assets.get(asset_id)
            if asset is None:
                problems.append(f"the linked {kind} {asset_id} no longer exists")
            elif isinstance(asset.spec, EnvironmentSpec):
                overlay(merged, from_environment(asset.spec))
            elif isinstance(asset.spec, ComputeSpec):
                overlay(merged, {"compute": msgspec.to_builtins(asset.spec)})
        storage = _storage(links.datasources or (), assets, problems)
        if storage:
            overlay(merged, {"storage": storage})
    if own is not None:
        overlay(merged, msgspec.to_builtins(own))
    return merged


def from_environment(spec: EnvironmentSpec) -> dict[str, Any]:
    """An environment asset's values in the template spec's shape (reference §8)."""
    found: dict[str, Any] = {
        name: value
        for name, value in msgspec.to_builtins(spec).items()
        if name
        in (
            "image", "imagePullPolicy", "command", "args", "workingDir", "createHomeDir",
            "probes", "stdin", "tty",
        )
    }  # fmt: skip
    variables = []
    for v in spec.environment_variables or ():
        item: dict[str, Any] = {"name": v.name}
        if v.credential is not None:
            secret = credential_secret_name(v.credential.asset_id)
            item["secret"] = {"name": secret, "key": v.credential.key}
        elif v.config_map is not None:
            item["configMap"] = msgspec.to_builtins(v.config_map)
        elif v.pod_field_ref is not None:
            item["podFieldRef"] = msgspec.to_builtins(v.pod_field_ref)
        else:
            item["value"] = v.value
        if v.exclude:
            item["exclude"] = True
        variables.append(item)
    if variables:
        found["environmentVariables"] = variables
    security = {
        name: value
        for name, value in msgspec.to_builtins(spec).items()
        if name
        in (
            "uidGidSource", "runAsUid", "runAsGid", "supplementalGroups", "capabilities",
            "allowPrivilegeEscalation", "seccompProfileType", "runAsNonRoot",
            "readOnlyRootFilesystem", "hostIpc", "hostNetwork",
        )
    }  # fmt: skip
    if security:
        found["security"] = security
    found.update(_connections(spec))
    return found


def _connections(spec: EnvironmentSpec) -> dict[str, list[dict[str, Any]]]:
    urls: list[dict[str, Any]] = []
    ports: list[dict[str, Any]] = []
    related: list[dict[str, Any]] = []
    for c in spec.connections or ():
        if c.external_tool_info is not None:
            related.append(
                {
                    "name": c.name,
                    "type": c.external_tool_info.tool_type,
                    "url": c.external_tool_info.external_url,
                }
            )
        elif c.internal_tool_info is not None:
            tool = c.internal_tool_info
            base = {"name": c.name, "container": tool.container_port, "toolType": tool.tool_type}
            if tool.connection_type in ("ExternalUrl", "ServingPort"):
                url = tool.external_url_info.external_url if tool.external_url_info else None
                urls.append({**base, **({"url": url} if url else {})})
            else:
                ports.append({**base, "serviceType": tool.connection_type})
    found = {"exposedUrls": urls, "ports": ports, "relatedUrls": related}
    return {key: items for key, items in found.items() if items}


def _storage(
    links: Sequence[DataSourceLink], assets: Mapping[UUID, Asset], problems: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each loaded data source becomes one storage item of its kind, with the overrides."""
    storage: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        if link.kind == DATA_VOLUME:  # not an asset: the item is the link itself
            path = link.overrides.container_path if link.overrides else None
            storage.setdefault("dataVolume", []).append({"id": str(link.id), "mountPath": path})
            continue
        asset = assets.get(link.id)
        if asset is None:
            problems.append(f"the data source {link.id} no longer exists")
            continue
        overrides = link.overrides
        path = overrides.container_path if overrides else None
        name = asset.meta.name
        match asset.spec:
            case NfsSpec() as s:
                key, item = (
                    "nfs",
                    {
                        "server": s.server,
                        "path": s.path,
                        "mountPath": path or s.mount_path,
                        "readOnly": s.read_only,
                    },
                )
            case PvcSpec() as s:
                item = {k: v for k, v in msgspec.to_builtins(s).items() if k != "kind"}
                key, item = "pvc", {**item, "path": path or s.path}
            case S3Spec() as s:
                key, item = "s3", {"bucket": s.bucket, "path": path or s.path, "url": s.url}
            case GitSpec() as s:
                key, item = (
                    "git",
                    {
                        "repository": s.repository,
                        "branch": s.branch,
                        "revision": s.revision,
                        "path": path or s.path,
                    },
                )
            case HostPathSpec() as s:
                key, item = (
                    "hostPath",
                    {
                        "path": s.path,
                        "mountPath": path or s.mount_path,
                        "readOnly": s.read_only,
                        "mountPropagation": s.mount_propagation,
                    },
                )
            case ConfigMapSpec() as s:
                sub_path = overrides.sub_path if overrides and overrides.sub_path else s.sub_path
                key, item = (
                    "configMapVolume",
                    {
                        "configMap": s.config_map,
                        "mountPath": path or s.mount_path,
                        "subPath": sub_path,
                        "defaultMode": s.default_mode,
                    },
                )
            case SecretVolumeSpec() as s:
                secret = (
                    credential_secret_name(s.credential_asset_id) if s.credential_asset_id else None
                )
                key, item = (
                    "secretVolume",
                    {
                        "secret": secret,
                        "mountPath": path or s.mount_path,
                        "defaultMode": s.default_mode,
                    },
                )
            case _:
                continue
        storage.setdefault(key, []).append(
            {"name": name, **{k: v for k, v in item.items() if v is not None}}
        )
    return storage


def _fill(target: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    for key, value in defaults.items():
        if target.get(key) is None:
            target[key] = value


def overlay(base: dict[str, Any], top: Mapping[str, Any]) -> None:
    """Top's values win; objects merge field by field; lists of named items merge by name."""
    for key, value in top.items():
        if value is None:
            continue
        current = base.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged = dict(current)
            overlay(merged, value)
            base[key] = merged
        elif isinstance(value, list) and isinstance(current, list):
            base[key] = _merge_named(current, value)
        else:
            base[key] = value


def _merge_named(below: list[Any], above: list[Any]) -> list[Any]:
    by_name = {item.get("name"): i for i, item in enumerate(below) if isinstance(item, dict)}
    merged = list(below)
    for item in above:
        name = item.get("name") if isinstance(item, dict) else None
        if name is not None and name in by_name:
            merged[by_name[name]] = item
        else:
            merged.append(item)
    return [item for item in merged if not (isinstance(item, dict) and item.get("exclude"))]


class FieldChange(msgspec.Struct, frozen=True):
    field: str  # a JSON pointer into the template response, e.g. /combinedSpec/image
    before: Any
    after: Any


def changes(before: Combined, after: Combined) -> list[FieldChange]:
    """What differs between two combined views of one template, field by field."""
    found: list[FieldChange] = []
    for name, old, new in (
        ("combinedSpec", before.spec, after.spec),
        ("combinedMasterSpec", before.master, after.master),
        ("runnable", before.runnable, after.runnable),
    ):
        _diff(f"/{name}", msgspec.to_builtins(old), msgspec.to_builtins(new), found)
    return found


def diff_values(at: str, old: Any, new: Any) -> list[FieldChange]:
    """Field by field (objects recursively, lists as wholes), as JSON pointers under `at`."""
    found: list[FieldChange] = []
    _diff(at, msgspec.to_builtins(old), msgspec.to_builtins(new), found)
    return found


def _diff(at: str, old: Any, new: Any, found: list[FieldChange]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _diff(f"{at}/{key}", old.get(key), new.get(key), found)
    elif old != new:
        found.append(FieldChange(at, old, new))
