"""Policy use cases: admins of a scope set, change and delete its policy (a small stream per
scope), decided on its lineage's; a submission meets it (services/workloads.py, judged by
domain/policy_compliance.py). Also: domain/policies.py, infra/http/policies.py."""

from collections.abc import Callable
from uuid import UUID

import msgspec

from domain import policies
from domain.commands import ApplyPolicy, ChangePolicy, DeletePolicy
from domain.events import EventMetadata, PolicyDeleted
from domain.policies import Effective, Placement, Policy, PolicyBody
from domain.values import ScopeRef
from services import access
from services.assets import placement
from services.ports.event_store import Append, EventStore, Stream, StreamLoader, Written
from services.races import decided_again
from services.stamps import Stamps


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    """A scope's policy as a write leaves it (or would, validating only), with what is in force
    there and when and by whom the policy was made and last changed."""

    policy: Policy
    effective: Effective
    stamps: Stamps | None  # None: validated only, nothing written


async def effective_in(lineage: tuple[ScopeRef, ...], *, streams: StreamLoader) -> Effective:
    """The policy in force at `lineage[0]`: its lineage's policies merged, tenant first."""
    chain = []
    for scope in reversed(lineage):
        state = policies.live(await _policy(scope, streams))
        if state is not None:
            chain.append((scope, state.body))
    return policies.effective(chain)


def streams_of(lineage: tuple[ScopeRef, ...]) -> list[UUID]:
    """The streams of the policies a lineage may hold (to read them in one round trip)."""
    return [policies.stream_of("distributed", scope) for scope in lineage]


@decided_again
async def apply_policy(cmd: ApplyPolicy, *, streams: EventStore) -> Applied:
    return await _write(
        cmd.scope, cmd.name, cmd.metadata, cmd.validate_only, streams, lambda _: cmd.body
    )


@decided_again
async def change_policy(cmd: ChangePolicy, *, streams: EventStore) -> Applied:
    return await _write(
        cmd.scope,
        cmd.name,
        cmd.metadata,
        cmd.validate_only,
        streams,
        lambda current: policies.changed(current, cmd.body, cmd.reset),
    )


@decided_again
async def delete_policy(cmd: DeletePolicy, *, streams: EventStore) -> None:
    lineage = await _permitted(cmd.scope, cmd.metadata, streams, at="/")
    stream_id = policies.stream_of("distributed", lineage[0])
    stream = await streams.load(stream_id)
    events = policies.delete(policies.fold(stream.events), cmd.scope)
    await streams.append(
        Append(stream_id, events, expected_version=stream.version, metadata=cmd.metadata, name=None)
    )


async def _write(
    scope: ScopeRef,
    name: str | None,
    metadata: EventMetadata,
    validate_only: bool,
    streams: EventStore,
    body_of: Callable[[PolicyBody], PolicyBody],
) -> Applied:
    lineage = await _permitted(scope, metadata, streams, at="/meta/")
    scope = lineage[0]
    above = await effective_in(lineage[1:], streams=streams)
    stream_id = policies.stream_of("distributed", scope)
    stream = await streams.load(stream_id)
    current = policies.live(policies.fold(stream.events))
    body = body_of(PolicyBody() if current is None else current.body)
    in_force = policies.check(body, above, scope)
    cluster_id, department_id, project_id = placement(lineage, None)
    where = Placement(
        cluster_id=cluster_id,
        department_id=department_id,
        project_id=None if project_id is None else str(project_id),
    )
    name = name or (current.name if current is not None else f"{scope.kind}-distributed")
    events = policies.apply(current, stream_id, name, scope, where, body)
    policy = Policy(policy_id=stream_id, name=name, scope=scope, placement=where, body=body)
    if validate_only:
        return Applied(policy=policy, effective=in_force, stamps=None)
    written = stream
    if events:
        result = await streams.append(
            Append(stream_id, events, expected_version=stream.version, metadata=metadata, name=None)
        )
        assert result.recorded_at is not None
        now = Written(result.recorded_at, metadata.actor_subject)
        written = Stream(
            version=result.version,
            events=(*stream.events, *events),
            written=(*stream.written, *(now,) * len(events)),
        )
    return Applied(policy=policy, effective=in_force, stamps=stamps_of(written))


def stamps_of(stream: Stream) -> Stamps:
    """Made by the first event since its last deletion; changed by the last."""
    start = 0
    for i, event in enumerate(stream.events):
        if isinstance(event, PolicyDeleted):
            start = i + 1
    return Stamps(created=stream.written[start], updated=stream.written[-1])


async def _permitted(
    scope: ScopeRef, metadata: EventMetadata, streams: StreamLoader, *, at: str
) -> tuple[ScopeRef, ...]:
    """The scope's lineage, if the actor administers it (or a scope above it). A scope that
    does not exist, or that the actor may not see, is refused naming its id's field under `at`
    (the query's `projectId`, say, or a body's `/meta/projectId`)."""
    field = f"{at}scope" if scope.kind == "tenant" else f"{at}{scope.kind}Id"
    return await access.require_in(
        metadata, scope, "admin", "set policies", streams=streams, field=field
    )


async def _policy(scope: ScopeRef, streams: StreamLoader) -> Policy | None:
    return policies.fold((await streams.load(policies.stream_of("distributed", scope))).events)
