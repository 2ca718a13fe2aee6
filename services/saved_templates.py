"""A workload saved as a new template: one that runs as the workload was submitted (its
resolved specs, from its own stream), created in a scope by name, as any template is created.
Also: domain/submissions.py (template_body_of), infra/http/saved_templates.py."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final
from uuid import UUID

from domain import org_units, workloads
from domain.commands import CreateTemplate, SaveWorkloadAsTemplate
from domain.errors import TrainplateError
from domain.submissions import template_body_of
from domain.values import ScopeRef
from domain.workloads import WorkloadNotFoundError, WorkloadNotSavableError
from services import access
from services.kinds import fold_as
from services.ports.event_store import EventStore
from services.ports.name_lookups import Lookups
from services.races import decided_again
from services.template_names import scope_named
from services.templates import TemplateView, create_template

# A creation's fields as this request says them; the rest are the workload's own.
_ASKED: Final = (
    ("/meta/name", "/name"),
    ("/meta/description", "/description"),
    ("/meta/scopeType", "/scope"),
    ("/meta/scopeId", "/scope"),
    ("/meta", ""),
)


@decided_again  # the creation retries its own races; this one the reads before it
async def save_workload_as_template(
    cmd: SaveWorkloadAsTemplate, *, streams: EventStore, names: Lookups
) -> TemplateView:
    """The new template, once the caller may see the workload and create templates in the
    scope; a workload out of sight is missing (WorkloadNotFoundError)."""
    found = fold_as(workloads.fold, (await streams.load(cmd.workload_id)).events)
    if found is None:
        raise WorkloadNotFoundError(cmd.workload_id)
    request = found.request
    lineage = org_units.lineage(
        "project", request.project_id, request.cluster_id, request.department_id
    )
    if cmd.metadata.actor_kind != "system":
        grants = await access.grants_of(cmd.metadata, streams=streams)
        if not await access.sees(grants, lineage, streams=streams):
            raise WorkloadNotFoundError(cmd.workload_id)
    if cmd.scope is None:
        scope = ScopeRef("project", request.project_id)
    else:
        scope = await scope_named(
            cmd.scope, streams=streams, holder=names.holder, holders=names.holders, field="/scope"
        )
    await access.require_in(
        cmd.metadata, scope, "editor", "create templates", streams=streams, field="/scope"
    )
    creation = CreateTemplate(
        template_id=cmd.template_id,
        keyed=cmd.keyed,
        scope=scope,
        name=cmd.name,
        description=cmd.description,
        body=template_body_of(request.snapshot),
        metadata=cmd.metadata,
    )
    with _as_asked(cmd.workload_id):
        return await create_template(creation, streams=streams, names=names)


@contextmanager
def _as_asked(workload_id: UUID) -> Iterator[None]:
    """A refusal of the name or scope names this request's field; one of the specs names the
    workload's field, in a WorkloadNotSavableError."""
    try:
        yield
    except TrainplateError as error:
        field = getattr(error, "field", None)
        if not isinstance(field, str):
            raise
        for said, asked in _ASKED:
            if field == said or field.startswith(f"{said}/"):
                setattr(error, "field", asked)  # noqa: B010 - not every error declares it
                error.args = (str(error).replace(f"{field}: ", f"{asked or '/'}: ", 1),)
                raise
        reason = str(error).removeprefix(f"{field}: ")
        raise WorkloadNotSavableError(workload_id, field, reason) from error
