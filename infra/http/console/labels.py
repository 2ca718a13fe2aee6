"""What each field of a template is called, in the product guide's own words
(../shared/reference/distributed-training-templates-guide.txt), keyed by its place in the spec
(list positions as `*`): the form's labels and the template page's field names."""

import re
from typing import Final

LABELS: Final = {
    "/scope": "Scope",
    "/meta/name": "Template name",
    "/meta/description": "Description",
    "/assets/environment": "Environment",
    "/assets/compute": "Compute resource",
    "/master/assets/environment": "Master environment",
    "/master/assets/compute": "Master compute resource",
    "/assets/datasources/*/ref": "Data source",
    "/assets/datasources/*/overrides/containerPath": "Container path",
    "/assets/datasources/*/overrides/subPath": "ConfigMap sub-path",
    "/imageSource": "Image source",
    "/imageRegistryId": "Registry",
    "/image": "Image URL",
    "/imagePullPolicy": "Image pull policy",
    "/command": "Command",
    "/args": "Arguments",
    "/workingDir": "Working directory",
    "/environmentVariables/*/name": "Environment variable name",
    "/environmentVariables/*/source": "Environment variable source",
    "/environmentVariables/*/value": "Custom value",
    "/environmentVariables/*/secret/name": "Shared secret name",
    "/environmentVariables/*/secret/key": "Shared secret key",
    "/environmentVariables/*/configMap/name": "ConfigMap name",
    "/environmentVariables/*/configMap/key": "ConfigMap key",
    "/ports/*/serviceType": "Connection type",
    "/ports/*/container": "Container port",
    "/ports/*/external": "Custom port",
    "/ports/*/name": "Connection name",
    "/security/uidGidSource": "UID, GID and supplementary groups from",
    "/security/runAsUid": "UID",
    "/security/runAsGid": "GID",
    "/security/supplementalGroups": "Supplementary groups",
    "/security/capabilities": "Linux capabilities",
    "/distributedFramework": "Framework",
    "/numWorkers": "Number of workers",
    "/compute/gpuDevicesRequest": "GPU devices per pod",
    "/compute/gpuRequestType": "GPU fractioning",
    "/compute/gpuPortionRequest": "GPU portion request (fraction of a device)",
    "/compute/gpuPortionLimit": "GPU portion limit (fraction of a device)",
    "/compute/gpuMemoryRequest": "GPU memory request",
    "/compute/gpuMemoryLimit": "GPU memory limit",
    "/compute/cpuCoreRequest": "CPU compute request (cores)",
    "/compute/cpuCoreLimit": "CPU compute limit (cores)",
    "/compute/cpuMemoryRequest": "CPU memory request",
    "/compute/cpuMemoryLimit": "CPU memory limit",
    "/compute/largeShmRequest": "Increase shared memory size",
    "/compute/extendedResources": "Extended resources",
    "/compute/extendedResources/*/resource": "Extended resource",
    "/compute/extendedResources/*/quantity": "Quantity",
    "/tolerations/*/key": "Toleration key",
    "/tolerations/*/operator": "Toleration operator",
    "/tolerations/*/value": "Toleration value",
    "/tolerations/*/effect": "Toleration effect",
    "/podAffinity/type": "Topology: scheduling rule",
    "/podAffinity/key": "Topology key",
    "/storage/emptyDirVolume/*/sizeLimit": "EmptyDir size",
    "/storage/emptyDirVolume/*/path": "EmptyDir container path",
    "/storage/emptyDirVolume/*/medium": "EmptyDir storage medium",
    "/preemptibility": "Preemptible or non-preemptible",
    "/priorityClass": "Workload priority",
    "/terminationGracePeriodSeconds": "Grace period for preemption (seconds)",
    "/backoffLimit": "Backoff limit",
    "/autoDeletionTimeAfterCompletionSeconds": "Auto-deletion after completion (seconds)",
    "/sshAuthMountPath": "SSH authorization mount path",
    "/cleanPodPolicy": "Pods to delete after completion or failure",
    "/slotsPerWorker": "Slots per worker",
    "/mpiLauncherCreationPolicy": "Launcher creation policy",
    "/annotations/*/name": "Annotation name",
    "/annotations/*/value": "Annotation value",
    "/labels/*/name": "Label name",
    "/labels/*/value": "Label value",
}
_INDEX: Final = re.compile(r"/\d+(?=/|$)")
_SPEC: Final = re.compile(r"^(/master)?/spec(?=/)")


def label_of(pointer: str) -> str:
    """The field's name for people; the pointer itself where the guide names none."""
    key = _INDEX.sub("/*", _SPEC.sub("", pointer))
    return LABELS.get(key, pointer)
