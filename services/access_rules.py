"""Access-rule use cases: admins of a scope give applications roles on it, and take them back.
A rule lives in the application's own stream, so it applies from the next request on."""

from domain import applications
from domain.access import granted_scope
from domain.commands import CreateAccessRule, DeleteAccessRule
from domain.org_units import UnknownScopeError
from domain.values import TENANT, AccessRule
from services import access
from services.errors import InvalidRequestError
from services.ports import EventStore, IdSequence


async def create_access_rule(
    cmd: CreateAccessRule, *, store: EventStore, ids: IdSequence
) -> AccessRule:
    """Grant the role; granting what the application already holds returns that rule."""
    lineage = await access.lineage_of(granted_scope(cmd.grant), streams=store, field="/scopeId")
    await access.require(cmd.metadata, lineage, "admin", "grant roles here", streams=store)
    stream = await store.load(cmd.application_id)
    state = applications.fold(stream.events)
    if state is None or state.deleted:
        raise InvalidRequestError("/subjectId", f"there is no application {cmd.application_id}")
    existing = next((rule for rule in state.rules if rule.grant == cmd.grant), None)
    if existing is not None:
        return existing
    rule = AccessRule(rule_id=await ids.next_id(), grant=cmd.grant)
    events = applications.grant_role(state, cmd.application_id, rule)
    await store.append(
        cmd.application_id, events, expected_version=stream.version, metadata=cmd.metadata
    )
    return rule


async def delete_access_rule(cmd: DeleteAccessRule, *, store: EventStore) -> None:
    stream = await store.load(cmd.application_id)
    state = applications.fold(stream.events)
    rule = next((r for r in (state.rules if state else ()) if r.rule_id == cmd.rule_id), None)
    if rule is None:
        raise applications.AccessRuleNotFoundError(cmd.rule_id)
    # Revoking needs admin where the role was granted (a deleted scope's rule: tenant admins).
    try:
        lineage = await access.lineage_of(granted_scope(rule.grant), streams=store, field="")
    except UnknownScopeError:
        lineage = (TENANT,)
    await access.require(cmd.metadata, lineage, "admin", "revoke roles here", streams=store)
    events = applications.revoke_role(state, cmd.application_id, cmd.rule_id)
    await store.append(
        cmd.application_id, events, expected_version=stream.version, metadata=cmd.metadata
    )
