"""The rules of a template's itemized members (reference §5.1, §5.2, §5.5-§5.7, §17 items 11-13),
each refusal naming the item's field as a JSON pointer. An item marked `exclude` only drops an
inherited item, so it needs no more than its name."""

import re
from collections.abc import Sequence
from typing import Final

from domain.quantities import is_positive
from domain.template_errors import InvalidTemplateError
from domain.template_specs import Annotation, Label, ReplicaSpec, Storage

NODE_PORT_RANGE: Final = range(30000, 32768)
_INTEGER: Final = re.compile(r"^[+-]?[0-9]+$")
# Labels and annotations are Kubernetes' (a qualified name; a label's value empty or a name part of
# at most 63): the API server refuses a pod with any other, so the workload could never start.
_NAME_PART: Final = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
QUALIFIED_NAME: Final = re.compile(
    rf"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME_PART}"
)
LABEL_VALUE: Final = re.compile(f"({_NAME_PART})?")
LABEL_VALUE_MAX: Final = 63


def check_items(spec: ReplicaSpec, at: str) -> None:
    _check_metadata(spec, at)
    _check_variables(spec, at)
    _check_tolerations(spec, at)
    _check_placement(spec, at)
    _check_network(spec, at)
    if spec.storage is not None:
        _check_storage(spec.storage, f"{at}/storage")


def _check_metadata(spec: ReplicaSpec, at: str) -> None:
    named: list[tuple[str, Sequence[Label | Annotation]]] = [
        ("labels", spec.labels or ()),
        ("annotations", spec.annotations or ()),
    ]
    for field, items in named:
        for i, item in enumerate(items):
            if not item.exclude and not QUALIFIED_NAME.fullmatch(item.name):
                raise InvalidTemplateError(
                    f"{at}/{field}/{i}/name",
                    "a Kubernetes name: letters, digits, '-', '_' and '.', starting and ending"
                    " with a letter or digit, after an optional DNS prefix and '/'",
                )
    for i, label in enumerate(spec.labels or ()):
        value = label.value or ""
        if not label.exclude and not (
            len(value) <= LABEL_VALUE_MAX and LABEL_VALUE.fullmatch(value)
        ):
            raise InvalidTemplateError(
                f"{at}/labels/{i}/value",
                f"empty, or up to {LABEL_VALUE_MAX} letters, digits, '-', '_' and '.',"
                " starting and ending with a letter or digit",
            )


def _check_variables(spec: ReplicaSpec, at: str) -> None:
    seen: set[str] = set()
    for i, v in enumerate(spec.environment_variables or ()):
        sources = [v.value, v.secret, v.config_map, v.pod_field_ref, v.user_credential]
        if sum(s is not None for s in sources) != 1 and not v.exclude:
            raise InvalidTemplateError(
                f"{at}/environmentVariables/{i}",
                "give exactly one of value, secret, configMap, podFieldRef and userCredential",
            )
        if v.name in seen:
            raise InvalidTemplateError(
                f"{at}/environmentVariables/{i}/name", f"{v.name!r} is set twice"
            )
        seen.add(v.name)


def _check_tolerations(spec: ReplicaSpec, at: str) -> None:
    for i, t in enumerate(spec.tolerations or ()):
        where = f"{at}/tolerations/{i}"
        if t.seconds is not None and t.effect != "NoExecute":
            raise InvalidTemplateError(f"{where}/seconds", "only with effect NoExecute")
        if t.operator == "Exists" and t.value:
            raise InvalidTemplateError(f"{where}/value", "operator Exists takes no value")


def _check_placement(spec: ReplicaSpec, at: str) -> None:
    """Node-affinity expressions take the values their operator needs, as Kubernetes has them."""
    affinity = spec.node_affinity_required
    for i, term in enumerate(affinity.node_selector_terms or () if affinity else ()):
        for j, expression in enumerate(term.match_expressions or ()):
            where = f"{at}/nodeAffinityRequired/nodeSelectorTerms/{i}/matchExpressions/{j}"
            values = expression.values or ()
            operator = expression.operator
            if operator in ("In", "NotIn") and not values:
                raise InvalidTemplateError(f"{where}/values", f"{operator} needs values")
            if operator in ("Exists", "DoesNotExist") and values:
                raise InvalidTemplateError(f"{where}/values", f"{operator} takes no values")
            if operator in ("Gt", "Lt") and (len(values) != 1 or not _INTEGER.match(values[0])):
                raise InvalidTemplateError(f"{where}/values", f"{operator} takes one integer")


def _check_network(spec: ReplicaSpec, at: str) -> None:
    for i, port in enumerate(spec.ports or ()):
        if port.external is not None and port.external not in NODE_PORT_RANGE:
            raise InvalidTemplateError(
                f"{at}/ports/{i}/external", "a custom node port is 30000 to 32767"
            )
    for i, url in enumerate(spec.exposed_urls or ()):
        where = f"{at}/exposedUrls/{i}"
        if url.authorized_users and url.authorized_groups:
            raise InvalidTemplateError(f"{where}/authorizedGroups", "users or groups, not both")
        # The guide: "enter a valid user email or name", "enter group names as they appear in
        # your identity provider"; an empty one names nobody.
        for field, names in (
            ("authorizedUsers", url.authorized_users),
            ("authorizedGroups", url.authorized_groups),
        ):
            for j, name in enumerate(names or ()):
                if not name.strip():
                    raise InvalidTemplateError(f"{where}/{field}/{j}", "must not be empty")
        kind = url.authorization_type
        if kind == "authorizedUsers" and not url.authorized_users:
            raise InvalidTemplateError(f"{where}/authorizedUsers", "name the users")
        if kind == "authorizedGroups" and not url.authorized_groups:
            raise InvalidTemplateError(f"{where}/authorizedGroups", "name the groups")


def _check_storage(storage: Storage, at: str) -> None:
    for i, pvc in enumerate(storage.pvc or ()):
        if pvc.exclude:
            continue
        if pvc.existing_pvc:
            if pvc.claim_name is None:
                raise InvalidTemplateError(f"{at}/pvc/{i}/claimName", "an existing PVC is named")
            continue
        if pvc.claim_info is None or pvc.claim_info.size is None:
            raise InvalidTemplateError(f"{at}/pvc/{i}/claimInfo/size", "a new PVC needs a size")
        if not is_positive(pvc.claim_info.size):  # the guide: "define the claim size"
            raise InvalidTemplateError(
                f"{at}/pvc/{i}/claimInfo/size", "a new PVC claims a size above 0, e.g. 10Gi"
            )
        modes = pvc.claim_info.access_modes
        if modes is not None and not (
            modes.read_write_once or modes.read_only_many or modes.read_write_many
        ):
            raise InvalidTemplateError(
                f"{at}/pvc/{i}/claimInfo/accessModes", "a new volume needs an access mode"
            )
    propagation = {h.mount_propagation or "None" for h in storage.host_path or ()}
    if len(propagation) > 1:
        raise InvalidTemplateError(
            f"{at}/hostPath", "every host path has the same mountPropagation"
        )


def check_one_time_storage(spec: ReplicaSpec | None, at: str) -> None:
    """A template may configure NFS, S3, Git, host paths, EmptyDir and new volumes itself;
    ConfigMaps, Secrets, existing PVCs and data volumes come from assets only (the guide), so
    they are refused here. A loaded data source's are the combined spec's."""
    storage = spec.storage if spec is not None else None
    if storage is None:
        return
    loaded = "load it from a data-source asset (assets.datasources)"
    for field, items, what in (
        ("configMapVolume", storage.config_map_volume, "a ConfigMap"),
        ("secretVolume", storage.secret_volume, "a Secret"),
    ):
        for i, item in enumerate(items or ()):
            if not item.exclude:
                raise InvalidTemplateError(
                    f"{at}/storage/{field}/{i}", f"{what} is not set here once: {loaded}"
                )
    for i, pvc in enumerate(storage.pvc or ()):
        if pvc.existing_pvc and not pvc.exclude:
            raise InvalidTemplateError(
                f"{at}/storage/pvc/{i}/existingPvc",
                f"an existing PVC is not set here once: {loaded}; a new volume may be",
            )
    for i, volume in enumerate(storage.data_volume or ()):
        if not volume.exclude:
            raise InvalidTemplateError(
                f"{at}/storage/dataVolume/{i}",
                "a data volume is not set here once: mount it from the assets block"
                " (assets.datasources, kind data-volume, overrides.containerPath)",
            )
