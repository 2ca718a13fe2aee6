"""Access-rule use cases: admins of a scope give subjects (applications, or users of the external
identity provider) roles on it, and take them back; a rule lives in the subject's stream, applying
from its next request. Also: projections/access_rules.py, infra/http/access_rules.py."""

from collections.abc import Sequence
from uuid import UUID

from domain import applications, users
from domain.access import granted_scope
from domain.commands import CreateAccessRule, DeleteAccessRule
from domain.events import ApplicationRoleGranted, Event, UserRoleGranted
from domain.org_units import UnknownScopeError
from domain.values import TENANT, AccessRule
from services import access, stamps
from services.errors import IdempotencyKeyReusedError, InvalidRequestError, VersionConflictError
from services.kinds import fold_as
from services.ports.event_store import Append, EventStore, Stream
from services.ports.name_lookups import IdSequence, RuleHolders
from services.races import decided_again
from services.stamps import Stamped, Stamps


@decided_again
async def create_access_rule(
    cmd: CreateAccessRule, *, store: EventStore, ids: IdSequence
) -> Stamped[AccessRule]:
    """Grant the role, saying when and by whom; a role the subject holds already answers that
    rule as granted. Under a key, a retry answers the rule it granted (revoked since too) and
    writes nothing; the key reused for another grant is refused (services/idempotency.py)."""
    await access.require_in(
        cmd.metadata, granted_scope(cmd.grant), "admin", "grant roles here", streams=store,
        field="/scopeId",
    )  # fmt: skip
    # Under a key, the rule's id is issued once for it: a retry reaches the rule it granted, or
    # the rule in force that answered it (then the key is issued that rule's id).
    keyed_id, stream = None, None
    if cmd.keyed:
        stream = await store.load(_stream_of(cmd.subject_kind, cmd.subject_id))
        keyed_id = await ids.next_id(cmd.creation_id, given=_held(cmd, stream))
    try:
        return await _grant(cmd, keyed_id, store, ids, stream)
    except VersionConflictError:
        if keyed_id is None:
            raise
        # An attempt under the same key may have won the race: then its rule is the answer.
        return await _grant(cmd, keyed_id, store, ids)


async def _grant(
    cmd: CreateAccessRule,
    keyed_id: int | None,
    store: EventStore,
    ids: IdSequence,
    stream: Stream | None = None,
) -> Stamped[AccessRule]:
    """Grant the rule, on the subject's `stream` when just read (else it is read here)."""
    stream_id = _stream_of(cmd.subject_kind, cmd.subject_id)
    stream = stream if stream is not None else await store.load(stream_id)
    if keyed_id is not None and (first := _granted_as(stream, keyed_id)) is not None:
        if first.state.grant != cmd.grant:
            raise IdempotencyKeyReusedError(stream_id)
        return first
    rules = _rules(cmd.subject_kind, cmd.subject_id, stream.events)
    existing = next((rule for rule in rules if rule.grant == cmd.grant), None)
    if existing is not None:
        granted = stream.written[_grant_of(stream.events, existing.rule_id) or 0]
        return Stamped(state=existing, stamps=Stamps(created=granted, updated=granted))
    rule = AccessRule(rule_id=keyed_id or await ids.next_id(), grant=cmd.grant)
    events: list[Event] = []
    if cmd.subject_kind == "user":
        events.extend(users.grant_role(users.fold(stream.events), cmd.subject_id, rule))
    else:
        state = fold_as(applications.fold, stream.events)
        events.extend(applications.grant_role(state, UUID(cmd.subject_id), rule))
    result = await store.append(
        Append(stream_id, events, expected_version=stream.version, metadata=cmd.metadata)
    )
    granted = stamps.appended(stream, result, cmd.metadata).updated
    return Stamped(state=rule, stamps=Stamps(created=granted, updated=granted))


def _held(cmd: CreateAccessRule, stream: Stream) -> int | None:
    """The id of the rule in force that grants what `cmd` asks, when a grant of the subject's
    stream gave it (so a retry finds it there, revoked since or not)."""
    rules = _rules(cmd.subject_kind, cmd.subject_id, stream.events)
    held = next((rule.rule_id for rule in rules if rule.grant == cmd.grant), None)
    if held is None or _grant_of(stream.events, held) is None:
        return None
    return held


def _granted_as(stream: Stream, rule_id: int) -> Stamped[AccessRule] | None:
    """The rule a grant in the subject's stream gave this id (revoked since or not)."""
    found = _grant_of(stream.events, rule_id)
    if found is None:
        return None
    event, written = stream.events[found], stream.written[found]
    assert isinstance(event, ApplicationRoleGranted | UserRoleGranted)
    return Stamped(state=event.rule, stamps=Stamps(created=written, updated=written))


def _grant_of(events: Sequence[Event], rule_id: int) -> int | None:
    """The index of the grant that gave the rule of this id (a rule's id is granted once);
    None when no grant did: the subject's creation then carried it, among its first grants."""
    return next(
        (
            i
            for i, event in enumerate(events)
            if isinstance(event, ApplicationRoleGranted | UserRoleGranted)
            and event.rule.rule_id == rule_id
        ),
        None,
    )


@decided_again
async def delete_access_rule(
    cmd: DeleteAccessRule, *, store: EventStore, holders: RuleHolders
) -> None:
    """Revoke the rule, from the stream of the subject that holds it."""
    holder = await holders.holder(cmd.rule_id)
    if holder is None:
        raise applications.AccessRuleNotFoundError(cmd.rule_id)
    subject_kind, subject_id = holder
    stream_id = _stream_of(subject_kind, subject_id)
    stream = await store.load(stream_id)
    rules = _rules(subject_kind, subject_id, stream.events, missing_ok=True)
    rule = next((r for r in rules if r.rule_id == cmd.rule_id), None)
    if rule is None:
        raise applications.AccessRuleNotFoundError(cmd.rule_id)
    # Revoking needs admin where the role was granted (a deleted scope's rule: tenant admins).
    try:
        lineage = await access.lineage_of(granted_scope(rule.grant), streams=store, field="")
    except UnknownScopeError:
        lineage = (TENANT,)
    unseen = applications.AccessRuleNotFoundError(cmd.rule_id)
    await access.require(
        cmd.metadata, lineage, "admin", "revoke roles here", streams=store, unseen=unseen
    )
    events: list[Event] = []
    if subject_kind == "user":
        events.extend(users.revoke_role(users.fold(stream.events), subject_id, cmd.rule_id))
    else:
        state = fold_as(applications.fold, stream.events)
        events.extend(applications.revoke_role(state, UUID(subject_id), cmd.rule_id))
    await store.append(
        Append(stream_id, events, expected_version=stream.version, metadata=cmd.metadata)
    )


def _stream_of(kind: str, subject_id: str) -> UUID:
    if kind == "user":
        return users.stream_of(subject_id)
    try:
        return UUID(subject_id)
    except ValueError:
        raise InvalidRequestError("/subjectId", "an application id (UUID)") from None


def _rules(
    kind: str, subject_id: str, events: tuple[Event, ...], *, missing_ok: bool = False
) -> tuple[AccessRule, ...]:
    if kind == "user":
        user = users.fold(events)
        return () if user is None else user.rules
    state = fold_as(applications.fold, events)
    if state is None or state.deleted:
        if missing_ok:
            return ()
        raise InvalidRequestError("/subjectId", f"there is no application {subject_id}")
    return state.rules
