"""A template plan applied: decided again and written in one transaction, all or none, each
template at the version the plan read; anything read that moved since refuses the whole apply,
naming it (PlanOutdatedError)."""

from collections.abc import Mapping
from uuid import UUID

from services.errors import NameTakenError, PlanOutdatedError, VersionConflictError
from services.ports.event_store import Append, EventStore
from services.ports.name_lookups import Lookups
from services.races import decided_again
from services.template_plan_values import Applied, Declared, Plan, Planned
from services.template_plans import decided


async def apply_plan(
    declared: Declared,
    versions: Mapping[UUID, int] | None,
    *,
    streams: EventStore,
    lookups: Lookups,
) -> Applied:
    """The plan, decided again and written in one transaction, each template at the version
    the plan read; PlanOutdatedError, writing nothing, when anything read has moved since.
    No `versions`: the documents as decided now, decided again when a write races them."""
    if versions is None:
        return await _applied_now(declared, streams=streams, lookups=lookups)
    plan, writes = await decided(declared, "editor", streams, lookups)
    moved = _moved(plan, versions)
    if moved:
        raise PlanOutdatedError(moved)
    try:
        return Applied(plan=plan, written=await _written(writes, streams))
    except (VersionConflictError, NameTakenError) as error:
        raise PlanOutdatedError([_what_moved(error, plan, writes)]) from error


@decided_again
async def _applied_now(declared: Declared, *, streams: EventStore, lookups: Lookups) -> Applied:
    plan, writes = await decided(declared, "editor", streams, lookups)
    return Applied(plan=plan, written=await _written(writes, streams))


async def _written(writes: list[tuple[Planned, Append]], streams: EventStore) -> dict[str, int]:
    """Every write in one transaction: all or none."""
    written: dict[str, int] = {}
    async with streams.transaction() as tx:
        for planned, write in writes:
            result = await tx.append(write)
            written[f"{planned.scope_label}/{planned.name}"] = result.version
    return written


def _moved(plan: Plan, versions: Mapping[UUID, int]) -> list[str]:
    read = plan.versions
    names = {r.stream_id: f"{r.kind} {r.name}" for r in plan.reads}
    found = []
    for stream_id in sorted(set(read) | set(versions)):
        before, now = versions.get(stream_id), read.get(stream_id)
        if before == now:
            continue
        if now is None:
            found.append(f"{stream_id} (read at version {before}) is no longer part of it")
        elif before is None:
            found.append(f"{names[stream_id]} is now part of it (at version {now})")
        else:
            found.append(f"{names[stream_id]} moved from version {before} to {now}")
    return found


def _what_moved(error: Exception, plan: Plan, writes: list[tuple[Planned, Append]]) -> str:
    if isinstance(error, NameTakenError):
        return f"another template took the name {error.name!r} ({error.namespace})"
    assert isinstance(error, VersionConflictError)
    named = {r.stream_id: f"{r.kind} {r.name}" for r in plan.reads}
    named.update({w.stream_id: f"template {p.scope_label}/{p.name}" for p, w in writes})
    return f"{named.get(error.stream_id, str(error.stream_id))} was changed"
