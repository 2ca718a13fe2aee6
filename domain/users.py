"""Users of an external identity provider: the service keeps no account for them, only the
access rules that give them roles, in a stream named after their subject (the token's `sub`)."""

from collections.abc import Iterable
from typing import Final, assert_never
from uuid import UUID, uuid5

import msgspec

from domain import name_rules
from domain.applications import AccessRuleNotFoundError
from domain.errors import InvalidHistoryError
from domain.events import Event, UserEvent, UserRoleGranted, UserRoleRevoked
from domain.values import AccessRule, Grant

_STREAMS: Final = UUID("2b7d9e4a-8c1f-4e3b-a6d5-0f9c8b7a6e51")


class User(msgspec.Struct, frozen=True, kw_only=True):
    subject: str
    rules: tuple[AccessRule, ...] = ()

    @property
    def grants(self) -> tuple[Grant, ...]:
        return tuple(rule.grant for rule in self.rules)


def stream_of(subject: str) -> UUID:
    return uuid5(_STREAMS, f"user:{subject}")


def evolve(state: User | None, event: UserEvent) -> User:
    current = state or User(subject=event.subject)
    match event:
        case UserRoleGranted():
            return msgspec.structs.replace(current, rules=(*current.rules, event.rule))
        case UserRoleRevoked():
            kept = tuple(rule for rule in current.rules if rule.rule_id != event.rule_id)
            return msgspec.structs.replace(current, rules=kept)
        case _:
            assert_never(event)


def fold(events: Iterable[Event]) -> User | None:
    state: User | None = None
    for event in events:
        if not isinstance(event, UserRoleGranted | UserRoleRevoked):
            raise InvalidHistoryError(f"{type(event).__name__} in a user stream")
        state = evolve(state, event)
    return state


def grant_role(state: User | None, subject: str, rule: AccessRule) -> list[UserEvent]:
    """A user's subject is named as a display name is (domain/name_rules.py)."""
    name_rules.check(subject, "/subjectId")
    if state is not None and rule.grant in state.grants:
        return []
    return [UserRoleGranted(subject=subject, rule=rule)]


def revoke_role(state: User | None, subject: str, rule_id: int) -> list[UserEvent]:
    if state is None or all(rule.rule_id != rule_id for rule in state.rules):
        raise AccessRuleNotFoundError(rule_id)
    return [UserRoleRevoked(subject=subject, rule_id=rule_id)]
