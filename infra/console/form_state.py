"""The template form's state and choices, shared by the new-template form and the edit: what a
render needs (`Form`), what the form offers the caller, the values a sent form holds, and what a
linked (read-only) or loaded (copied) environment or compute resource puts in it."""

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

import msgspec

from domain.cluster_specs import StorageClassSpec
from domain.tenant_settings import FRAMEWORKS, GPU_OPTIMIZATION, NGC_CATALOG
from domain.values import AssetKind
from infra.console.asset_pane import pane_items
from infra.console.form_document import SOURCES
from infra.console.form_fields import (
    VARIABLE_SOURCES,
    Field,
    Group,
    compute_fields,
    environment_fields,
    general_fields,
    scheduling_fields,
)
from infra.console.form_rows import Rows, rows_in
from infra.console.image_choices import NONE, Images, Options, image_choices
from infra.console.linked import as_template_values, loadable, usable_registries
from infra.console.master_fields import master_fields
from infra.console.scopes import scope_of, visible_scopes
from infra.console.storage_fields import storage_fields
from infra.console.template_detail import flattened, shown
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.node_pool_actions import pool_names
from infra.http.setting_actions import switches
from infra.http.storage_class_actions import volume_choices
from projections.asset_catalogue import AssetRow
from projections.storage_class_catalogue import StorageClassRow

# The selects naming an asset the template links or loads.
SOURCE_REF: Final = re.compile(r"^(/master)?/assets/datasources/\d+/ref$")
LINKS: Final = {
    kind: re.compile(rf"^(/master)?/assets/{kind}$") for kind in ("environment", "compute")
}
# (the asset select, link or copy, the pointer its values go under): the master of its own
# loads its environment and compute resource as the workers do, linked or not.
LOADS: Final = {
    "environment": ("/assets/environment", "/environmentUse", "/spec"),
    "compute": ("/assets/compute", "/computeUse", "/spec"),
    "master-environment": ("/master/assets/environment", "/master/environmentUse", "/master/spec"),
    "master-compute": ("/master/assets/compute", "/master/computeUse", "/master/spec"),
}
# What the form starts with, and what a form sent without a choice means: linked.
LINKED_AT_FIRST: Final = {use: "link" for _, use, _ in LOADS.values()}


SOURCE_NAMES: Final = {**dict(VARIABLE_SOURCES), "userCredential": "My credentials",
                        "podFieldRef": "A pod field"}  # fmt: skip
VARIABLE: Final = re.compile(r"^(?P<at>(/master)?/spec/environmentVariables/\d+)/name$")


def variable_sources(values: Mapping[str, object]) -> dict[str, str]:
    """Each variable's source as its row's choice (`<variable>/source`), from the member that
    holds its value: "" (Custom) for a value, else the member's name."""
    found: dict[str, str] = {}
    for pointer in values:
        if (variable := VARIABLE.match(pointer)) is not None:
            at = variable["at"]
            held = (
                m
                for m in SOURCES
                if m != "value" and any(v.startswith(f"{at}/{m}/") for v in values)
            )
            found[f"{at}/source"] = next(held, "")
    return found


class Form(msgspec.Struct, kw_only=True):
    """Everything a render of the form needs."""

    step: int
    values: dict[str, Any]
    errors: dict[str, str] = msgspec.field(default_factory=dict)
    general_error: str | None = None
    linked: dict[str, Any] = msgspec.field(default_factory=dict)  # pointer -> a linked value
    linked_from: dict[str, str] = msgspec.field(default_factory=dict)  # pointer -> asset name
    loaded: str = ""  # the LOADS key just loaded: focus goes back to that section's pane button


async def choices_for(
    request: Caller,
    adapters: Adapters,
    values: Mapping[str, object] | None = None,
    template: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """What the form offers the caller, a row per list item `values` holds and blank ones after
    (form_rows.py); an edit's `template` adds a choice for each asset, image source or registry
    it holds the form would not offer, so saving keeps it (docs/decisions/0030-console-forms.md)."""
    settings = await switches(adapters)
    rows = await loadable(request, adapters)
    by_id = {str(r.asset_id): r for r in rows}

    def of(*kinds: str) -> tuple[tuple[str, str], ...]:
        return tuple((str(r.asset_id), r.meta.name) for r in rows if r.kind in kinds)

    sources = tuple(
        (f"{r.kind}|{r.asset_id}", f"{r.meta.name} ({r.kind})")
        for r in rows
        if r.kind not in ("environment", "compute")
    )
    environments, computes = of("environment"), of("compute")
    if template is not None:
        sources = with_unseen(sources, template, SOURCE_REF)
        environments = with_unseen(environments, template, LINKS["environment"])
        computes = with_unseen(computes, template, LINKS["compute"])
    gpu_limits = settings.get(GPU_OPTIMIZATION)
    # An edit's scope is the template's; a new template's, the one its first step chose.
    scope = (template or {}).get("/scope") or (values or {}).get("/scope")
    kind, scope_id = scope_of(scope if isinstance(scope, str) else "")
    registries = await usable_registries(request, adapters, kind, scope_id)
    images = image_choices(ngc=settings.get(NGC_CATALOG), registries=registries, held=template)
    scopes = await visible_scopes(request, adapters)
    frameworks = [f for f in FRAMEWORKS if settings.allows_framework(f, None)]
    cluster = next((c.cluster for c in scopes if c.value == scope), None)
    cluster_held = Cluster(
        pools=with_held_pools(
            tuple((n, n) for n in await pool_names(request, adapters, cluster)), template
        ),
        classes=with_held_classes(await volume_choices(request, adapters, cluster), template),
    )
    return {
        "sources": sources,
        "gpu_limits": gpu_limits,
        "images": images,
        "sections": sections_of(
            sources,
            gpu_limits,
            rows_in(values or {}, linked_values(values or {}, by_id)),
            images=images,
            held=template,
            cluster=cluster_held,
        ),
        "cluster": cluster_held,
        "held": template,
        "scopes": scopes,
        "frameworks": frameworks,
        # each framework's scopes whose cluster turns it off (shown disabled there)
        "frameworks_off": {
            f: [s.value for s in scopes if not settings.allows_framework(f, s.cluster)]
            for f in frameworks
        },
        "settings": settings,
        "environments": environments,
        "computes": computes,
        "rows": by_id,
        "pane": await pane_items(request, adapters, kind, scope_id),
    }


class Cluster(msgspec.Struct, frozen=True, kw_only=True):
    """What the template's cluster offers the form: its node pools (none: names are typed) and
    its storage classes, with their configurations."""

    pools: Options = ()
    classes: tuple[StorageClassRow, ...] = ()


def with_held_pools(pools: Options, template: Mapping[str, object] | None) -> Options:
    """The cluster's pools, then each an edited template names that it no longer has, so
    saving keeps what it names (and is refused for it, naming the field)."""
    if not pools:
        return pools
    listed = {value for value, _ in pools}
    held: list[str] = []
    for pointer in ("/spec/nodePools", "/master/spec/nodePools"):
        names = (template or {}).get(pointer)
        held += [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    unseen = tuple((n, f"{n} (not in the cluster)") for n in dict.fromkeys(held) if n not in listed)
    return (*pools, *unseen)


# A new volume's class: a template's (each replica spec's), a PVC data source's.
CLASS: Final = re.compile(r"^(/master)?/spec(/storage/pvc/\d+)?/claimInfo/storageClass$")


def with_held_classes(
    classes: list[StorageClassRow], template: Mapping[str, object] | None
) -> tuple[StorageClassRow, ...]:
    """The cluster's classes, then each an edited template's (or data source's) volumes name
    that it does not have (offered as they are, so saving keeps them and is refused for them)."""
    if not classes:
        return ()
    listed = {c.name for c in classes}
    held = [v for p, v in (template or {}).items() if CLASS.match(p) and isinstance(v, str) and v]
    kept = [
        StorageClassRow(
            cluster_id=classes[0].cluster_id, name=n, spec=StorageClassSpec(is_default=False),
            rules=None,
        )
        for n in dict.fromkeys(held)
        if n not in listed
    ]  # fmt: skip
    return (*classes, *kept)


def with_unseen(
    choices: tuple[tuple[str, str], ...], template: Mapping[str, object], pointers: re.Pattern[str]
) -> tuple[tuple[str, str], ...]:
    """`choices`, then one for each asset the template names at `pointers` that is not among
    them: an asset the caller cannot see (or a data volume, which is no asset) has no choice
    of its own, and a select with none sends its first, "None", so saving would drop it."""
    listed = {value for value, _ in choices}
    unseen: list[tuple[str, str]] = []
    for pointer, value in template.items():
        if not pointers.match(pointer) or not isinstance(value, str) or value in ("", *listed):
            continue
        listed.add(value)
        kind = value.split("|", 1)[0] if "|" in value else ""
        unseen.append((value, f"Not visible to you{f' ({kind})' if kind else ''}: kept as it is"))
    return (*choices, *unseen)


def sections_of(
    sources: tuple[tuple[str, str], ...],
    gpu_limits: bool,
    rows: Rows,
    *,
    images: Images = NONE,
    held: Mapping[str, object] | None = None,
    cluster: "Cluster | None" = None,
) -> dict[str, tuple[Group, ...]]:
    """The form's sections: the data sources it may load, GPU limits or not, each list's rows,
    the image's sources and registries (image_choices.py), what an edited template holds that
    the form keeps (`held`), and what its cluster offers (its pools and storage classes)."""
    offered = cluster or Cluster()
    spec, master = "/spec", "/master/spec"
    return {
        "environment": environment_fields(
            spec,
            rows,
            images=images.sources[spec],
            registries=images.registries[spec],
            held=held,
        ),
        "compute": compute_fields("/spec", gpu_limits=gpu_limits, rows=rows),
        "scheduling": scheduling_fields("/spec", rows, offered.pools),
        "storage": storage_fields(sources, rows, classes=offered.classes),
        "general": general_fields(rows),
        **{
            f"master_{name}": groups
            for name, groups in master_fields(
                rows,
                images=images.sources[master],
                registries=images.registries[master],
                held=held,
                gpu_limits=gpu_limits,
                sources=sources,
                pools=offered.pools,
                classes=offered.classes,
            ).items()
        },
    }


def all_fields(sections: dict[str, tuple[Group, ...]]) -> list[Field]:
    top = [
        Field(pointer="/scope", label="Scope", kind="select"),
        Field(pointer="/spec/distributedFramework", label="Framework", kind="select"),
        Field(pointer="/configuration", label="Distributed configuration", kind="radio"),
        Field(pointer="/meta/name", label="Template name"),
        Field(pointer="/meta/description", label="Description"),
        Field(pointer="/assets/environment", label="Environment", kind="select"),
        Field(pointer="/assets/compute", label="Compute resource", kind="select"),
        Field(pointer="/spec/numWorkers", label="Number of workers", kind="number"),
        Field(pointer="/master/assets/environment", label="Master environment", kind="select"),
        Field(pointer="/master/assets/compute", label="Master compute resource", kind="select"),
    ]
    return top + [f for groups in sections.values() for g in groups for f in g.fields]


def form_values(form: Any, fields: list[Field]) -> dict[str, Any]:
    multi = {f.pointer for f in fields if f.kind == "multi"}
    found: dict[str, Any] = {}
    for key in form:
        found[key] = list(form.getall(key)) if key in multi else str(form.get(key))
    return found


def with_uses(values: dict[str, Any]) -> dict[str, Any]:
    """`values`, each link-or-copy choice not sent taken as linked (what the form starts with)."""
    for use, first in LINKED_AT_FIRST.items():
        values.setdefault(use, first)
    return values


def _chosen(
    values: Mapping[str, object], rows: Mapping[str, AssetRow], use_as: str
) -> Iterator[tuple[str, str, AssetRow]]:
    """Each asset chosen to be used `use_as` ("link" or "copy"): its LOADS entry and its row."""
    for select, use, under in LOADS.values():
        chosen = values.get(select)
        copy = values.get(use) == "copy"
        if isinstance(chosen, str) and chosen in rows and copy == (use_as == "copy"):
            yield select, under, rows[chosen]


def linked_values(values: Mapping[str, object], rows: Mapping[str, AssetRow]) -> dict[str, Any]:
    """The values each linked asset puts in the spec, by pointer, as shown read-only (a
    variable's source by its name): every item of its lists has a row for them (rows_in)."""
    linked: dict[str, Any] = {}
    for _, under, row in _chosen(values, rows, "link"):
        for pointer, value in flattened(as_template_values(row)):
            linked[f"{under}{pointer}"] = shown(value)
    for pointer, source in variable_sources(linked).items():
        linked[pointer] = SOURCE_NAMES.get(source, source)
    return linked


def show_linked(form: Form, rows: dict[str, AssetRow]) -> None:
    """The values each linked asset puts in the spec, shown read-only in its fields, named as
    that asset's."""
    form.linked.update(linked_values(form.values, rows))
    for select, under, row in _chosen(form.values, rows, "link"):
        owner_prefix = f"{under}/compute" if "compute" in select else under
        form.linked_from[owner_prefix] = row.meta.name


def load_into(form: Form, which: str, choices: dict[str, Any]) -> None:
    """LOAD: used without linking, the asset's values become the form's own, editable, each
    list with a row for every item it brings (else the rows it did not get would be lost), and
    one for every item of what stays linked."""
    form.loaded = which
    select, use, under = LOADS[which]
    chosen, rows = form.values.get(select), choices["rows"]
    if not chosen or chosen not in rows or form.values.get(use) != "copy":
        return
    for pointer, value in flattened(as_template_values(rows[chosen])):
        form.values[f"{under}{pointer}"] = value if isinstance(value, list) else _typed(value)
    form.values.update(variable_sources(form.values))
    form.values[select] = ""
    counts = rows_in(form.values, linked_values(form.values, rows))
    choices["sections"] = sections_of(
        choices["sources"],
        choices["gpu_limits"],
        counts,
        images=choices.get("images", NONE),
        held=choices.get("held"),
        cluster=choices.get("cluster"),
    )


def _typed(value: object) -> str:
    """A loaded value as a person would type it: a whole float without its ".0" (the API
    answers 2 cores as 2.0), any other in full."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def to_copy(values: Mapping[str, object]) -> dict[str, AssetKind]:
    """The assets the form asks to be used without linking: their ids, with their kinds."""
    found: dict[str, AssetKind] = {}
    for which, (select, use, _) in LOADS.items():
        chosen = values.get(select)
        if isinstance(chosen, str) and chosen and values.get(use) == "copy":
            found[chosen] = "compute" if which.endswith("compute") else "environment"
    return found


def copied_values(
    values: Mapping[str, Any], rows: Mapping[str, AssetRow]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What each environment or compute resource used without linking puts in the body (the
    master's under `master/spec`), and the values to build it from, its select emptied there; the
    form's own values stay as sent, so a refusal shows the asset still chosen."""
    copied: dict[str, Any] = {}
    unlinked = dict(values)
    for select, under, row in _chosen(values, rows, "copy"):
        node = copied
        for part in under.strip("/").split("/"):
            node = node.setdefault(part, {})
        node.update(as_template_values(row))
        unlinked[select] = ""
    return copied, unlinked
