"""Access-rule use cases against fakes of the ports: a grant under an Idempotency-Key is made
once, and a rule is revoked by its id alone, from the stream of whoever holds it."""

from uuid import UUID, uuid4

import pytest

from domain.applications import AccessRuleNotFoundError
from domain.commands import CreateAccessRule, DeleteAccessRule
from domain.events import EventMetadata
from domain.values import Grant
from services.access_rules import create_access_rule, delete_access_rule
from services.errors import IdempotencyKeyReusedError
from tests.fakes import Ids, InMemoryRuleHolders, InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
EDITOR = Grant(role="editor", scope_kind="tenant", scope_id="tenant")
VIEWER = Grant(role="viewer", scope_kind="tenant", scope_id="tenant")


def granting(subject: str, grant: Grant, key: UUID | None = None) -> CreateAccessRule:
    """The grant, sent under the key's creation id when there is one."""
    return CreateAccessRule(
        subject_kind="user",
        subject_id=subject,
        grant=grant,
        creation_id=key or uuid4(),
        keyed=key is not None,
        metadata=SYSTEM,
    )


async def test_a_grant_under_a_key_is_made_once_and_answered_after_its_revocation() -> None:
    streams, ids = InMemoryStreams(), Ids()
    holders = InMemoryRuleHolders(streams)
    key = uuid4()
    first = await create_access_rule(granting("ada", EDITOR, key), store=streams, ids=ids)
    again = await create_access_rule(granting("ada", EDITOR, key), store=streams, ids=ids)
    assert again == first
    assert len(streams.every_event()) == 1
    with pytest.raises(IdempotencyKeyReusedError):
        await create_access_rule(granting("ada", VIEWER, key), store=streams, ids=ids)
    assert await holders.holder(first.state.rule_id) == ("user", "ada")
    revoke = DeleteAccessRule(rule_id=first.state.rule_id, metadata=SYSTEM)
    await delete_access_rule(revoke, store=streams, holders=holders)
    assert await holders.holder(first.state.rule_id) is None
    again = await create_access_rule(granting("ada", EDITOR, key), store=streams, ids=ids)
    assert again == first  # the first answer; nothing granted again
    assert len(streams.every_event()) == 2
    # Without a key, the same grant is a new rule.
    fresh = await create_access_rule(granting("ada", EDITOR), store=streams, ids=ids)
    assert fresh.state.rule_id != first.state.rule_id


async def test_a_rule_is_revoked_by_its_id_and_an_unknown_id_is_not_found() -> None:
    streams, ids = InMemoryStreams(), Ids()
    holders = InMemoryRuleHolders(streams)
    granted = await create_access_rule(granting("bob", VIEWER), store=streams, ids=ids)
    revoke = DeleteAccessRule(rule_id=granted.state.rule_id, metadata=SYSTEM)
    await delete_access_rule(revoke, store=streams, holders=holders)
    for rule_id in (granted.state.rule_id, 999):
        with pytest.raises(AccessRuleNotFoundError):
            await delete_access_rule(
                DeleteAccessRule(rule_id=rule_id, metadata=SYSTEM), store=streams, holders=holders
            )
