"""A data volume shared with another project, made mountable there: a pod mounts only PVCs of its
namespace and a PV binds one PVC, so each namespace gets a read-only PV and PVC on the same
storage (docs/decisions/0009-kubernetes-backend-objects.md). Pure: origin PV in, two objects out."""

import hashlib
from typing import Any, Final

from domain.events import DataVolumeClaim

DATA_VOLUME_LABEL: Final = "trainplate.io/data-volume-id"
ORIGIN_ANNOTATION: Final = "trainplate.io/origin-pvc"
# Storage that more than one node may mount; a ReadWriteOnce volume is one node's at a time.
SHAREABLE: Final = frozenset({"ReadOnlyMany", "ReadWriteMany"})
# The PV volume sources with a `readOnly` switch (Kubernetes' PersistentVolumeSpec); hostPath,
# local, flocker, photonPersistentDisk and vsphereVolume have none.
READ_ONLY_SOURCES: Final = frozenset(
    {"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc",
     "flexVolume", "gcePersistentDisk", "glusterfs", "iscsi", "nfs", "portworxVolume", "quobyte",
     "rbd", "scaleIO", "storageos"}
)  # fmt: skip
# What of the origin PV is about the storage rather than its binding or its lifecycle.
_KEPT = ("capacity", "mountOptions", "nodeAffinity", "volumeMode")
_NOT_SOURCES = frozenset(
    {"accessModes", "claimRef", "persistentVolumeReclaimPolicy", "storageClassName",
     "volumeAttributesClassName", *_KEPT}
)  # fmt: skip


class NotShareableError(Exception):
    """The origin PVC cannot be mounted from another namespace; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def claim_name(claim: DataVolumeClaim) -> str:
    """The PVC a workload outside the data volume's own namespace mounts."""
    return f"dv-{claim.data_volume_id}"


def volume_name(claim: DataVolumeClaim, namespace: str) -> str:
    digest = hashlib.sha256(namespace.encode()).hexdigest()[:12]
    return f"trainplate-dv-{claim.data_volume_id}-{digest}"


def origin_volume(claim: DataVolumeClaim, pvc: dict[str, Any]) -> str:
    """The PV the origin PVC is bound to, or why it cannot be shared."""
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    name = spec.get("volumeName")
    if status.get("phase") != "Bound" or not name:
        raise NotShareableError(
            f"the data volume's PVC {claim.namespace}/{claim.claim_name} is not bound to a"
            f" volume (phase {status.get('phase') or 'unknown'})"
        )
    return str(name)


def copies(
    claim: DataVolumeClaim, namespace: str, origin: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The PV and PVC that mount the origin PV's storage in `namespace`."""
    spec = origin.get("spec") or {}
    modes = set(spec.get("accessModes") or ())
    if not modes & SHAREABLE:
        raise NotShareableError(
            f"the data volume's PV {origin['metadata']['name']} can be mounted on one node at"
            f" a time ({', '.join(sorted(modes)) or 'no access modes'}), so it cannot be"
            f" shared with namespace {namespace}"
        )
    sources = {key: value for key, value in spec.items() if key not in _NOT_SOURCES}
    if len(sources) != 1:
        raise NotShareableError(
            f"the data volume's PV {origin['metadata']['name']} names no single volume source"
        )
    [(source, settings)] = sources.items()
    if source not in READ_ONLY_SOURCES:
        raise NotShareableError(
            f"the data volume's PV {origin['metadata']['name']} is a {source} volume, which"
            " cannot be made read-only, so it cannot be shared"
        )
    # Read-only in the volume source itself, not only in the pods this service renders: the
    # copy's PVC lies in the other project's namespace, where any pod of that project could
    # name it, and an access mode alone does not stop a driver from mounting it writable.
    sources = {source: {**settings, "readOnly": True}}
    storage = (spec.get("capacity") or {}).get("storage")
    if storage is None:
        raise NotShareableError(
            f"the data volume's PV {origin['metadata']['name']} states no capacity"
        )
    pvc_name, pv_name = claim_name(claim), volume_name(claim, namespace)
    pv_spec: dict[str, Any] = {key: spec[key] for key in _KEPT if key in spec}
    pv_spec |= sources
    pv_spec |= {
        "accessModes": ["ReadOnlyMany"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        # Bound ahead to the copy's PVC, so no other claim of the cluster can take it.
        "claimRef": {"namespace": namespace, "name": pvc_name},
    }
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, **_marks(claim)},
        "spec": pv_spec,
    }
    pvc_spec: dict[str, Any] = {
        "accessModes": ["ReadOnlyMany"],
        # No class: nothing may provision a new, empty volume for this claim.
        "storageClassName": "",
        "volumeName": pv_name,
        "resources": {"requests": {"storage": storage}},
    }
    if "volumeMode" in spec:
        pvc_spec["volumeMode"] = spec["volumeMode"]
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": pvc_name, "namespace": namespace, **_marks(claim)},
        "spec": pvc_spec,
    }
    return pv, pvc


def _marks(claim: DataVolumeClaim) -> dict[str, dict[str, str]]:
    return {
        "labels": {DATA_VOLUME_LABEL: str(claim.data_volume_id)},
        "annotations": {ORIGIN_ANNOTATION: f"{claim.namespace}/{claim.claim_name}"},
    }
