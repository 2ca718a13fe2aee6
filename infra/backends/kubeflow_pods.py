"""The pod-level parts of a replica's pod template (infra/backends/pod_templates.py):
tolerations, affinity, the pod security context and the volumes of the template's storage."""

from typing import Any, Final

from domain.template_specs import ReplicaSpec, Storage, Toleration

WORKLOAD_LABEL: Final = "trainplate.io/workload-id"
NODE_POOL_LABEL: Final = "runai/node-pool"


def toleration(t: Toleration) -> dict[str, Any]:
    found: dict[str, Any] = {"operator": t.operator or "Equal"}
    if t.key is not None:
        found["key"] = t.key
    if t.value is not None and t.operator != "Exists":
        found["value"] = t.value
    if t.effect is not None and t.effect != "Any":
        found["effect"] = t.effect
    if t.seconds is not None:
        found["tolerationSeconds"] = t.seconds
    return found


def affinity(spec: ReplicaSpec, peers: dict[str, Any]) -> dict[str, Any]:
    """`peers`: the part of a pod-affinity term that selects the workload's other pods."""
    affinity: dict[str, Any] = {}
    terms: list[dict[str, list[dict[str, Any]]]] = []
    required = spec.node_affinity_required
    for selector in (required.node_selector_terms or ()) if required else ():
        terms.append(
            {
                "matchExpressions": [
                    {
                        "key": e.key,
                        "operator": e.operator,
                        **({"values": list(e.values)} if e.values else {}),
                    }
                    for e in selector.match_expressions or ()
                ]
            }
        )
    if spec.node_pools:
        terms = terms or [{"matchExpressions": []}]
        for term in terms:
            term["matchExpressions"].append(
                {"key": NODE_POOL_LABEL, "operator": "In", "values": list(spec.node_pools)}
            )
    if terms:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    if spec.pod_affinity is not None and spec.pod_affinity.key:
        pod_term: dict[str, Any] = {**peers, "topologyKey": spec.pod_affinity.key}
        if spec.pod_affinity.type == "Required":
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term]}
        else:
            preferred = [{"weight": 100, "podAffinityTerm": pod_term}]
            affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
    return affinity


def pod_security(spec: ReplicaSpec) -> dict[str, Any]:
    security = spec.security
    assert security is not None
    context: dict[str, Any] = {}
    if security.uid_gid_source == "custom":
        if security.run_as_uid is not None:
            context["runAsUser"] = security.run_as_uid
        if security.run_as_gid is not None:
            context["runAsGroup"] = security.run_as_gid
        if security.supplemental_groups:
            context["supplementalGroups"] = [
                int(g) for g in security.supplemental_groups.split(",") if g.strip()
            ]
    if security.run_as_non_root is not None:
        context["runAsNonRoot"] = security.run_as_non_root
    if security.seccomp_profile_type is not None:
        context["seccompProfile"] = {"type": security.seccomp_profile_type}
    return context


def volumes(storage: Storage | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Kubernetes volumes and their mounts. Git and S3 sources are fetched by Run:ai's own
    sidecars, which a plain cluster lacks, so they are not rendered."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if storage is None:
        return volumes, mounts

    def add(volume: dict[str, Any], mount_path: str | None, **mount: Any) -> None:
        name = f"vol-{len(volumes)}"
        volumes.append({"name": name, **volume})
        if mount_path:
            mounts.append({"name": name, "mountPath": mount_path, **mount})

    for pvc in storage.pvc or ():
        if pvc.exclude:
            continue
        if pvc.ephemeral and pvc.claim_info is not None:
            info = pvc.claim_info
            modes = info.access_modes
            claim = {
                "accessModes": [
                    mode
                    for mode, on in (
                        ("ReadWriteOnce", modes.read_write_once if modes else True),
                        ("ReadOnlyMany", modes.read_only_many if modes else False),
                        ("ReadWriteMany", modes.read_write_many if modes else False),
                    )
                    if on
                ],
                "resources": {"requests": {"storage": info.size or "1Gi"}},
                **({"storageClassName": info.storage_class} if info.storage_class else {}),
                **({"volumeMode": info.volume_mode} if info.volume_mode else {}),
            }
            add({"ephemeral": {"volumeClaimTemplate": {"spec": claim}}}, pvc.path)
        else:
            claim_ref: dict[str, Any] = {"claimName": pvc.claim_name or pvc.name or "claim"}
            if pvc.read_only is not None:
                claim_ref["readOnly"] = pvc.read_only
            add({"persistentVolumeClaim": claim_ref}, pvc.path)
    for nfs in storage.nfs or ():
        if not nfs.exclude:
            add(
                {"nfs": {"server": nfs.server, "path": nfs.path, "readOnly": bool(nfs.read_only)}},
                nfs.mount_path,
            )
    for host in storage.host_path or ():
        if not host.exclude:
            add({"hostPath": {"path": host.path}}, host.mount_path, readOnly=bool(host.read_only))
    for config in storage.config_map_volume or ():
        if not config.exclude:
            volume: dict[str, Any] = {"name": config.config_map}
            if config.default_mode is not None:
                volume["defaultMode"] = int(config.default_mode, 8)
            extra = {"subPath": config.sub_path} if config.sub_path else {}
            add({"configMap": volume}, config.mount_path, **extra)
    for secret in storage.secret_volume or ():
        if not secret.exclude:
            volume = {"secretName": secret.secret}
            if secret.default_mode is not None:
                volume["defaultMode"] = int(secret.default_mode, 8)
            add({"secret": volume}, secret.mount_path)
    for empty in storage.empty_dir_volume or ():
        if not empty.exclude:
            empty_dir: dict[str, Any] = {}
            if empty.medium:
                empty_dir["medium"] = empty.medium
            if empty.size_limit:
                empty_dir["sizeLimit"] = empty.size_limit
            add({"emptyDir": empty_dir}, empty.path)
    return volumes, mounts
