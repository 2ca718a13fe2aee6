"""A workload saved as a new template (ours): `POST /api/v1/trainplate/workloads/{id}/template`
with a name and, by name, a scope (else the workload's project); the template as Run:ai shows
one. Also: services/saved_templates.py."""

from typing import Final
from uuid import UUID

from litestar import Response, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain.commands import SaveWorkloadAsTemplate
from domain.template_documents import NamedScope, scope_problem
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id
from infra.http.openapi_document import DisplayName
from infra.http.template_plans import PREFIX
from infra.http.template_schemas import DistributedTemplate, RequestBody
from infra.http.template_views import wire_of, written
from services.errors import InvalidRequestError
from services.ports.name_lookups import Lookups
from services.saved_templates import save_workload_as_template

SAVED: Final = f"{PREFIX}/workloads/{{workload_id:uuid}}/template"


class SaveRequest(RequestBody, frozen=True, kw_only=True):
    """`scope` as a template document says it (`{"project": "team-a"}`, `{"tenant": true}`)."""

    name: DisplayName
    description: str | None = None
    scope: NamedScope | None = None


@post(SAVED, status_code=202, tags=["Templates as code"])
async def save_as_template(
    request: Caller,
    workload_id: FromPath[UUID],
    data: JSONBody[SaveRequest],
    adapters: NamedDependency[Adapters],
) -> Response[DistributedTemplate]:
    """A new template that runs as the workload was submitted: its resolved specs, its data
    volumes mounted from the assets block. 404: no such workload in sight; 422
    (`workload-not-savable`): its specs cannot be a template in that scope, naming the field."""
    if data.scope is not None and (reason := scope_problem(data.scope)) is not None:
        raise InvalidRequestError("/scope", reason)
    template_id, keyed = creation_id(request, "template")
    command = SaveWorkloadAsTemplate(
        workload_id=workload_id,
        template_id=template_id,
        keyed=keyed,
        name=data.name,
        description=data.description,
        scope=data.scope,
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:  # one connection for the reads and the write
        view = await save_workload_as_template(
            command, streams=session, names=Lookups(adapters.name_holder, adapters.name_holders)
        )
    version = view.template.version
    return Response(wire_of(written(view)), status_code=202, headers={"ETag": f'"{version}"'})


SAVED_TEMPLATE_ROUTES: Final = (save_as_template,)
