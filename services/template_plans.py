"""Templates as code: the plan of a set of template documents (one's: template_plan_documents.py;
a prune's deletions: template_plan_prunes.py) and the writes that apply it, nothing written here.
Also: template_plan_applies.py, domain/template_documents.py, infra/http/template_plans.py."""

from uuid import UUID

from domain import tenant_settings
from domain.template_documents import InvalidDocumentError
from domain.values import ScopeRef
from services.ports.event_store import Append, StreamReader
from services.ports.name_lookups import Lookups
from services.prefetch import actor_stream, prefetch
from services.template_plan_documents import naming, plan_document
from services.template_plan_prunes import pruned
from services.template_plan_values import Decided, Declaration, Declared, Plan, Planned, Read, Role


async def plan_templates(declared: Declared, *, streams: StreamReader, lookups: Lookups) -> Plan:
    """What applying the documents would do; writes nothing. The caller must see each scope."""
    plan, _ = await decided(declared, "viewer", streams, lookups)
    return plan


async def decided(
    declared: Declared, role: Role, store: StreamReader, lookups: Lookups
) -> tuple[Plan, list[tuple[Planned, Append]]]:
    """The plan, and the writes applying it makes, for a caller with `role` in each scope; two
    documents declaring one name in one scope are refused, naming both."""
    loader = await prefetch(store, [actor_stream(declared.metadata), tenant_settings.STREAM])
    planned: list[Planned] = []
    writes: list[tuple[Planned, Append]] = []
    reads: dict[UUID, Read] = {}
    declared_at: dict[tuple[ScopeRef, str], Declaration] = {}
    for declaration in declared.documents:
        with naming(declaration):
            one = await plan_document(declaration, role, declared.metadata, loader, lookups)
        key = (one.planned.scope, one.planned.name)
        if (first := declared_at.get(key)) is not None:
            where = first.source or f"document {first.index + 1}"
            raise InvalidDocumentError(
                declaration.index,
                declaration.source,
                "/metadata/name",
                f"{where} declares {one.planned.name!r} in {one.planned.scope_label} too",
            )
        declared_at[key] = declaration
        _add(one, planned, writes, reads)
    if declared.prune:
        for one in await pruned(declared, role, set(declared_at), loader, lookups):
            _add(one, planned, writes, reads)
    return Plan(templates=tuple(planned), reads=tuple(reads.values())), writes


def _add(
    one: Decided,
    planned: list[Planned],
    writes: list[tuple[Planned, Append]],
    reads: dict[UUID, Read],
) -> None:
    planned.append(one.planned)
    if one.write is not None:
        writes.append((one.planned, one.write))
    reads.update({r.stream_id: r for r in one.reads})
