"""What a prune plans: a deletion of each template of the scopes it is given (else those the
documents use) that no document declares, where the caller has the role to."""

from domain import templates
from domain.events import EventMetadata
from domain.templates import Template
from domain.values import ScopeRef
from services import access
from services.kinds import fold_as
from services.ports.event_store import Append, StreamLoader, Uses
from services.ports.name_lookups import Lookups
from services.template_names import scope_named
from services.template_plan_values import Decided, Declared, Planned, Role, template_read
from services.templates import name_namespace


async def pruned(
    declared: Declared,
    role: Role,
    kept: set[tuple[ScopeRef, str]],
    streams: StreamLoader,
    lookups: Lookups,
) -> list[Decided]:
    """The deletions, by scope and name; `kept`: the (scope, name) the documents declare."""
    if declared.scopes is None:
        named = {d.document.metadata.scope.label: d.document.metadata.scope
                 for d in declared.documents}  # fmt: skip
        scopes = list(named.values())
    else:
        scopes = list(declared.scopes)
    found: list[Decided] = []
    for i, named_scope in enumerate(scopes):
        field = f"/scopes/{i}"
        scope = await scope_named(
            named_scope,
            streams=streams,
            holder=lookups.holder,
            holders=lookups.holders,
            field=field,
        )
        action = "plan" if role == "viewer" else "apply"
        await access.require_in(
            declared.metadata, scope, role, f"{action} templates in {named_scope.label}",
            streams=streams, field=field,
        )  # fmt: skip
        for held in sorted(await lookups.holders([name_namespace(scope)])):
            template = fold_as(templates.fold, (await streams.load(held)).events)
            if template is None or template.deleted or (scope, template.meta.name) in kept:
                continue
            found.append(_deletion(template, scope, named_scope.label, declared.metadata))
    return sorted(found, key=lambda one: (one.planned.scope_label, one.planned.name))


def _deletion(template: Template, scope: ScopeRef, label: str, metadata: EventMetadata) -> Decided:
    planned = Planned(
        name=template.meta.name,
        scope=scope,
        scope_label=label,
        action="delete",
        document=None,
        source=None,
        template_id=template.id,
        version=template.version,
    )
    write = Append(
        template.id,
        templates.delete(template, template.id),
        expected_version=template.version,
        metadata=metadata,
        name=None,
        uses=Uses(user=f"template {template.meta.name}"),
    )
    return Decided(planned, write, [template_read(template, label)])
