"""A template's page: what it is, what it links and loads, its combined spec field by field
(each field a linked asset sets named as coming from it, read-only), and its history; all from
the API's own reads (`read_template`, `template_versions`)."""

from typing import Annotated, Any, Final
from uuid import UUID

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter
from litestar.response import Template

from domain.template_rules import COMPUTE_FIELDS, ENVIRONMENT_FIELDS, camel
from infra.console.labels import label_of
from infra.console.linked import loadable, registry_name
from infra.console.pages_common import page, person
from infra.console.scopes import choice_value, visible_scopes
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.history_actions import template_changes, template_versions
from infra.http.history_schemas import VersionWire
from infra.http.numerals import natural
from infra.http.org_unit_actions import visible_units
from infra.http.template_actions import read_template
from projections.asset_catalogue import AssetRow
from services.errors import InvalidRequestError

OWNED_BY_ENVIRONMENT = frozenset(camel(f) for f in ENVIRONMENT_FIELDS)
OWNED_BY_COMPUTE = frozenset(camel(f) for f in COMPUTE_FIELDS)


def flattened(value: Any, at: str = "") -> list[tuple[str, Any]]:
    """Every leaf of a document with its JSON pointer, in the document's order."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in flattened(v, f"{at}/{k}")]
    if isinstance(value, list | tuple) and value and isinstance(value[0], dict):
        return [leaf for i, v in enumerate(value) for leaf in flattened(v, f"{at}/{i}")]
    return [(at, value)]


def shown(value: Any) -> Any:
    """A value as a person reads it: lists joined, whole floats without their ".0"."""
    if isinstance(value, list | tuple):
        return ", ".join(str(shown(v)) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return value


def _fields(
    combined: Any, own: Any, environment: str | None, compute: str | None
) -> list[dict[str, Any]]:
    """The combined spec's fields, each with where it comes from: the linked asset that sets
    it, the template itself, or the defaults."""
    mine = {pointer for pointer, _ in flattened(msgspec.to_builtins(own))} if own else set()
    rows = []
    for pointer, value in flattened(msgspec.to_builtins(combined)):
        top = pointer.split("/")[1]
        source = None
        if environment and top in OWNED_BY_ENVIRONMENT:
            source = f"environment {environment}"
        elif compute and top in OWNED_BY_COMPUTE:
            source = f"compute resource {compute}"
        rows.append(
            {
                "pointer": pointer,
                "label": label_of(pointer),
                "value": shown(value),
                "source": source,
                "own": pointer in mine,
            }
        )
    return rows


def _event_name(tag: str) -> str:
    """`template.linked_asset_updated.v1` -> "Linked asset updated"."""
    fact = tag.split(".")[1] if tag.count(".") >= 2 else tag
    return fact.replace("_", " ").capitalize()


ASSET_KINDS: Final = {"environment": "Environment", "compute": "Compute resource"}


@get("/templates/{template_id:uuid}", include_in_schema=False)
async def template_page(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    old: Annotated[str | None, QueryParameter(name="from")] = None,
    new: Annotated[str | None, QueryParameter(name="to")] = None,
) -> Template:
    """The page; with `from` and `to`, the changes between those two versions too (read as
    text, so a version that is not a number is said on the page, as any other)."""
    return await template_page_of(request, template_id, adapters, compare=(old, new))


def _cause(v: VersionWire, assets: dict[UUID, AssetRow]) -> dict[str, Any] | None:
    """The asset change a fan-out entry follows, named: which asset, which version of it."""
    if v.asset_id is None:
        return None
    row = assets.get(v.asset_id)
    kind = ASSET_KINDS.get(row.kind, row.kind) if row else "Asset"
    return {
        "what": f"{kind} {row.meta.name if row else v.asset_id} updated",
        "version": v.asset_version,
        "href": (
            f"/console/environments/{v.asset_id}" if row and row.kind == "environment" else None
        ),
    }


def _version(text: str) -> int:
    if (number := natural(text.strip())) is None:
        raise InvalidRequestError("version", "a version's number")
    return number


async def _compared(
    request: Caller, template_id: UUID, adapters: Adapters, old: str | None, new: str | None
) -> dict[str, Any] | None:
    """The changes between two versions, each field by the guide's name; or why not."""
    if old is None:
        return None
    try:
        older, newer = _version(old), None if new is None else _version(new)
        found = await template_changes(request, template_id, older, newer, adapters)
    except InvalidRequestError as exc:
        return {"error": f"No such version: {exc}", "old": old, "new": new}
    return {
        "old": found.from_version,
        "new": found.to_version,
        "changes": [
            {
                "field": _changed_field(c.field),
                "pointer": c.field,
                "before": shown(c.before),
                "after": shown(c.after),
            }
            for c in found.changes
        ],
    }


def _changed_field(pointer: str) -> str:
    """`/combinedSpec/image` -> "Image URL (combined)"; the pointer where no label fits."""
    for prefix, suffix in (
        ("/combinedMasterSpec", " (combined, master)"),
        ("/combinedSpec", " (combined)"),
        ("/master/spec", " (master)"),
        ("/spec", ""),
    ):
        if pointer.startswith(f"{prefix}/"):
            label = label_of(pointer.removeprefix(prefix))
            return f"{label}{suffix}" if not label.startswith("/") else pointer
    return label_of(pointer)


async def _registries(request: Caller, adapters: Adapters, *specs: Any) -> dict[str, str]:
    """The name of each registry a spec picks its image from in the NGC private registry, by
    its id as the spec holds it: a person knows a registry by its name."""
    ids = {
        spec.image_registry_id
        for spec in specs
        if spec is not None
        and spec.image_source == "ngcPrivateRegistry"
        and spec.image_registry_id is not None
    }
    return {str(i): await registry_name(request, adapters, i) for i in ids}


def _named_registry(rows: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    for row in rows:
        if row["pointer"] == "/imageRegistryId" and str(row["value"]) in names:
            row["value"] = names[str(row["value"])]
    return rows


async def template_page_of(
    request: Caller,
    template_id: UUID,
    adapters: Adapters,
    *,
    submission: dict[str, Any] | None = None,
    status_code: int = 200,
    compare: tuple[str | None, str | None] = (None, None),
) -> Template:
    """The page, with the submit form as last sent (`submission`: its values and errors) and
    the changes between the two versions `compare` names, if it does."""
    wire, version = await read_template(request, template_id, adapters)
    history = await template_versions(request, template_id, adapters)
    rows = {row.asset_id: row for row in await loadable(request, adapters)}
    names = {asset_id: row.meta.name for asset_id, row in rows.items()}
    scopes = {(c.kind, c.id): c.label for c in await visible_scopes(request, adapters)}
    meta = wire.meta
    scope_key = (meta.scope_type, "" if meta.scope_type == "tenant" else meta.scope_id)

    def named(asset_id: UUID | None) -> str | None:
        return None if asset_id is None else names.get(asset_id, str(asset_id))

    assets = wire.assets
    environment = named(assets.environment) if assets else None
    compute = named(assets.compute) if assets else None
    master_assets = wire.master.assets if wire.master else None
    master_environment = named(master_assets.environment) if master_assets else environment
    master_compute = named(master_assets.compute) if master_assets else compute
    sources = [
        {"name": named(d.id), "kind": d.kind, "overrides": d.overrides}
        for d in (assets.datasources or () if assets else ())
    ]
    projects = [(u.id, u.name) for u in await visible_units(request, "project", adapters.reads)]
    registry_names = await _registries(
        request, adapters, wire.combined_spec, wire.combined_master_spec
    )
    if submission is None:
        own = meta.project_id if meta.scope_type == "project" else None
        submission = {"name": "", "project": str(own or ""), "errors": {}}
    return page(
        request,
        "template.html.j2",
        status_code=status_code,
        projects=projects,
        submission=submission,
        title=meta.name,
        section="templates",
        found=wire,
        updated_by=person(request, meta.updated_by or meta.created_by),
        version=version,
        scope=scopes.get(scope_key, choice_value(*scope_key)),
        environment=environment,
        compute=compute,
        master_environment=master_environment if wire.combined_master_spec else None,
        master_compute=master_compute if wire.combined_master_spec else None,
        sources=sources,
        registry=registry_names.get(str(wire.combined_spec.image_registry_id)),
        fields=_named_registry(
            _fields(wire.combined_spec, wire.spec, environment, compute), registry_names
        ),
        master_fields=(
            _named_registry(
                _fields(
                    wire.combined_master_spec,
                    wire.master.spec if wire.master else wire.spec,
                    master_environment,
                    master_compute,
                ),
                registry_names,
            )
            if wire.combined_master_spec is not None
            else None
        ),
        combined_json=msgspec.json.format(msgspec.json.encode(wire.combined_spec)).decode(),
        history=[
            {
                "version": v.version,
                "what": _event_name(v.type),
                "who": person(request, v.actor),
                "when": v.time,
                "cause": _cause(v, rows),
            }
            for v in reversed(history.versions)
        ],
        compared=await _compared(request, template_id, adapters, *compare),
    )
