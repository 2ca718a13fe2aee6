"""Distributed templates, a stream each, scope fixed at creation. Linked assets' versions are
recorded here so that the combined spec can always be rebuilt as it was. Also:
services/templates.py (checks the links; merges a PATCH), infra/http/templates.py."""

from collections.abc import Iterable
from typing import assert_never
from uuid import UUID

import msgspec

from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    AssetVersion,
    Event,
    TemplateCreated,
    TemplateDeleted,
    TemplateEvent,
    TemplateLinkedAssetUpdated,
    TemplateUpdated,
)
from domain.template_rules import (
    check_master_copies,
    check_one_time_storage,
    check_template,
    without_client_defaults,
)
from domain.template_specs import DistributedTemplateSpec, MasterSection, TemplateAssets
from domain.values import TemplateMeta


class TemplateBody(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Everything of a template but its identity and placement."""

    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None


class Template(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    meta: TemplateMeta
    body: TemplateBody
    asset_versions: tuple[AssetVersion, ...] = ()
    deleted: bool = False
    version: int = 0


class TemplateNotFoundError(DomainError):
    slug = "template-not-found"

    def __init__(self, template_id: UUID) -> None:
        super().__init__(f"template {template_id} does not exist")
        self.template_id = template_id


class TemplateExistsError(DomainError):
    slug = "template-exists"

    def __init__(self, template_id: UUID) -> None:
        super().__init__(f"template {template_id} exists already")
        self.template_id = template_id


def evolve(state: Template | None, event: TemplateEvent) -> Template:
    match event:
        case TemplateCreated():
            body = TemplateBody(
                spec=event.spec,
                assets=event.assets,
                master_spec_same_as_worker=event.master_spec_same_as_worker,
                master=event.master,
            )
            return Template(
                id=event.template_id,
                meta=event.meta,
                body=body,
                asset_versions=event.asset_versions,
            )
        case TemplateUpdated():
            if state is None:
                raise InvalidHistoryError("template.updated before template.created")
            body = TemplateBody(
                spec=event.spec,
                assets=event.assets,
                master_spec_same_as_worker=event.master_spec_same_as_worker,
                master=event.master,
            )
            meta = msgspec.structs.replace(
                state.meta, name=event.name, description=event.description
            )
            return msgspec.structs.replace(
                state, meta=meta, body=body, asset_versions=event.asset_versions
            )
        case TemplateDeleted():
            if state is None:
                raise InvalidHistoryError("template.deleted before template.created")
            return msgspec.structs.replace(state, deleted=True)
        case TemplateLinkedAssetUpdated():
            if state is None:
                raise InvalidHistoryError("template.linked_asset_updated before template.created")
            versions = tuple(
                AssetVersion(asset_id=v.asset_id, version=event.asset_version)
                if v.asset_id == event.asset_id
                else v
                for v in state.asset_versions
            )
            return msgspec.structs.replace(state, asset_versions=versions)
        case _:
            assert_never(event)


def fold(events: Iterable[Event]) -> Template | None:
    return fold_on(None, events)


def fold_on(state: Template | None, events: Iterable[Event]) -> Template | None:
    """The template once the events that follow `state` (a fold of the stream's first events)
    are applied: a fold resumed, where the stream's start need not be read again."""
    count = 0 if state is None else state.version
    for event in events:
        if not isinstance(
            event, TemplateCreated | TemplateUpdated | TemplateDeleted | TemplateLinkedAssetUpdated
        ):
            raise InvalidHistoryError(f"{type(event).__name__} in a template stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: Template | None, template_id: UUID) -> Template:
    if state is None or state.deleted:
        raise TemplateNotFoundError(template_id)
    return state


def normalized(body: TemplateBody) -> TemplateBody:
    """The body as it is kept: client-filled defaults that mean nothing here are dropped."""
    spec = without_client_defaults(body.spec)
    return body if spec is body.spec else msgspec.structs.replace(body, spec=spec)


def _check(meta: TemplateMeta, body: TemplateBody) -> None:
    """The rules of what the template says itself (its own storage, its master's copies of
    workload-wide fields), then the rules every spec is held to."""
    master = body.master.spec if body.master else None
    check_one_time_storage(body.spec, "/spec")
    check_one_time_storage(master, "/master/spec")
    check_master_copies(master, "/master/spec")
    check_template(
        name=meta.name,
        description=meta.description,
        spec=body.spec,
        assets=body.assets,
        master_spec_same_as_worker=body.master_spec_same_as_worker,
        master=body.master,
    )


def create(
    state: Template | None,
    template_id: UUID,
    meta: TemplateMeta,
    body: TemplateBody,
    asset_versions: tuple[AssetVersion, ...],
) -> list[TemplateEvent]:
    if state is not None:
        raise TemplateExistsError(template_id)
    body = normalized(body)
    _check(meta, body)
    return [
        TemplateCreated(
            template_id=template_id,
            meta=meta,
            spec=body.spec,
            assets=body.assets,
            master_spec_same_as_worker=body.master_spec_same_as_worker,
            master=body.master,
            asset_versions=asset_versions,
        )
    ]


def update(
    state: Template | None,
    template_id: UUID,
    *,
    name: str,
    description: str | None,
    body: TemplateBody,
    asset_versions: tuple[AssetVersion, ...],
) -> list[TemplateEvent]:
    """Replace name, description and body; an unchanged template writes nothing."""
    current = live(state, template_id)
    meta = msgspec.structs.replace(current.meta, name=name, description=description)
    body = normalized(body)
    _check(meta, body)
    if (current.meta, current.body, current.asset_versions) == (meta, body, asset_versions):
        return []
    return [
        TemplateUpdated(
            template_id=template_id,
            name=name,
            description=description,
            spec=body.spec,
            assets=body.assets,
            master_spec_same_as_worker=body.master_spec_same_as_worker,
            master=body.master,
            asset_versions=asset_versions,
        )
    ]


def delete(state: Template | None, template_id: UUID) -> list[TemplateEvent]:
    live(state, template_id)
    return [TemplateDeleted(template_id=template_id)]


def linked_ids(body: TemplateBody) -> frozenset[UUID]:
    """The environments and compute resources the template links (data sources are loaded)."""
    found: set[UUID] = set()
    for links in (body.assets, body.master.assets if body.master else None):
        if links is not None:
            found.update(i for i in (links.environment, links.compute) if i is not None)
    return frozenset(found)


def follow_asset(
    state: Template | None, template_id: UUID, asset_id: UUID, version: int
) -> list[TemplateEvent]:
    """Move a live template that links the asset on to its newer version; otherwise nothing."""
    if state is None or state.deleted or asset_id not in linked_ids(state.body):
        return []
    recorded = next((v.version for v in state.asset_versions if v.asset_id == asset_id), None)
    if recorded is not None and recorded >= version:
        return []
    return [
        TemplateLinkedAssetUpdated(
            template_id=template_id, asset_id=asset_id, asset_version=version
        )
    ]
