"""Applications (service accounts): who may call the API, with which roles on which scopes. Their
secret never enters the domain: only the write side's credential store sees it, as a slow salted
hash. Also: services/applications.py."""

from collections.abc import Iterable
from typing import TypeGuard, assert_never
from uuid import UUID

import msgspec

from domain import name_rules
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    ApplicationCreated,
    ApplicationDeleted,
    ApplicationEnablementChanged,
    ApplicationEvent,
    ApplicationRoleGranted,
    ApplicationRoleRevoked,
    ApplicationSecretRotated,
    Event,
)
from domain.values import AccessRule, Grant, Role


class Application(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    name: str
    client_id: str
    grants: tuple[Grant, ...]
    rules: tuple[AccessRule, ...] = ()
    enabled: bool = True
    deleted: bool = False
    # Moves on each secret rotation and each disabling: a token carries the generation it was
    # issued in and is worth nothing once the application has moved past it.
    token_generation: int = 0

    @property
    def active(self) -> bool:
        """May log in and act on its roles."""
        return self.enabled and not self.deleted

    @property
    def effective_grants(self) -> tuple[Grant, ...]:
        """The grants given at creation and by the access rules still in force."""
        return (*self.grants, *(rule.grant for rule in self.rules))


class ApplicationExistsError(DomainError):
    slug = "application-exists"

    def __init__(self, application_id: UUID) -> None:
        super().__init__(f"application {application_id} exists already")
        self.application_id = application_id


class LastTenantAdminError(DomainError):
    """The change would leave the tenant with no enabled admin, and no one could grant one."""

    slug = "last-tenant-admin"

    def __init__(self) -> None:
        super().__init__(
            "this is the tenant's last enabled admin: grant the tenant admin role to another"
            " principal first"
        )


class ApplicationNotFoundError(DomainError):
    slug = "application-not-found"

    def __init__(self, application_id: UUID) -> None:
        super().__init__(f"application {application_id} does not exist")
        self.application_id = application_id


def evolve(state: Application | None, event: ApplicationEvent) -> Application:
    """Apply one past event. Total over ApplicationEvent: a missing case fails mypy."""
    match event:
        case ApplicationCreated():
            return Application(
                id=event.application_id,
                name=event.name,
                client_id=event.client_id,
                grants=event.grants,
            )
        case ApplicationDeleted():
            if state is None:
                raise InvalidHistoryError("application.deleted before application.created")
            return msgspec.structs.replace(state, deleted=True)
        case ApplicationSecretRotated():
            if state is None:
                raise InvalidHistoryError("application.secret_rotated before application.created")
            return msgspec.structs.replace(state, token_generation=state.token_generation + 1)
        case ApplicationEnablementChanged():
            if state is None:
                raise InvalidHistoryError("application.enablement_changed before creation")
            generation = state.token_generation + (0 if event.enabled else 1)
            return msgspec.structs.replace(
                state, enabled=event.enabled, token_generation=generation
            )
        case ApplicationRoleGranted():
            if state is None:
                raise InvalidHistoryError("application.role_granted before application.created")
            return msgspec.structs.replace(state, rules=(*state.rules, event.rule))
        case ApplicationRoleRevoked():
            if state is None:
                raise InvalidHistoryError("application.role_revoked before application.created")
            kept = tuple(rule for rule in state.rules if rule.rule_id != event.rule_id)
            return msgspec.structs.replace(state, rules=kept)
        case _:
            assert_never(event)


def is_application_event(event: Event) -> TypeGuard[ApplicationEvent]:
    return isinstance(
        event,
        ApplicationCreated
        | ApplicationEnablementChanged
        | ApplicationDeleted
        | ApplicationSecretRotated
        | ApplicationRoleGranted
        | ApplicationRoleRevoked,
    )


def fold(events: Iterable[Event]) -> Application | None:
    state: Application | None = None
    for event in events:
        if not is_application_event(event):
            raise InvalidHistoryError(f"{type(event).__name__} in an application stream")
        state = evolve(state, event)
    return state


def create(
    state: Application | None,
    application_id: UUID,
    *,
    name: str,
    client_id: str,
    grants: Iterable[Grant],
) -> list[ApplicationEvent]:
    """Register an application. Names follow Run:ai's service-account rule."""
    if state is not None:
        raise ApplicationExistsError(application_id)
    name_rules.check(name, "/name", name_rules.SERVICE_ACCOUNT)
    return [
        ApplicationCreated(
            application_id=application_id, name=name, client_id=client_id, grants=tuple(grants)
        )
    ]


def delete(state: Application | None, application_id: UUID) -> list[ApplicationEvent]:
    """Deleting an application that is already gone is a no-op."""
    if state is None:
        raise ApplicationNotFoundError(application_id)
    return [] if state.deleted else [ApplicationDeleted(application_id=application_id)]


def holds_tenant_role(grants: Iterable[Grant], role: Role) -> bool:
    """Whether the grants include `role` (or admin, which includes every role) on the tenant,
    the root scope that covers every other."""
    return any(g.scope_kind == "tenant" and g.role in (role, "admin") for g in grants)


def rotate_secret(state: Application | None, application_id: UUID) -> list[ApplicationEvent]:
    """Replace a live application's secret (the new one is made and kept outside the domain)."""
    if state is None or state.deleted:
        raise ApplicationNotFoundError(application_id)
    return [ApplicationSecretRotated(application_id=application_id)]


class AccessRuleNotFoundError(DomainError):
    slug = "access-rule-not-found"

    def __init__(self, rule_id: int) -> None:
        super().__init__(f"access rule {rule_id} does not exist")
        self.rule_id = rule_id


def grant_role(
    state: Application | None, application_id: UUID, rule: AccessRule
) -> list[ApplicationEvent]:
    """Give a live application a role on a scope; the same grant twice is given once."""
    if state is None or state.deleted:
        raise ApplicationNotFoundError(application_id)
    if rule.grant in state.effective_grants:
        return []
    return [ApplicationRoleGranted(application_id=application_id, rule=rule)]


def revoke_role(
    state: Application | None, application_id: UUID, rule_id: int
) -> list[ApplicationEvent]:
    if state is None or state.deleted or all(r.rule_id != rule_id for r in state.rules):
        raise AccessRuleNotFoundError(rule_id)
    return [ApplicationRoleRevoked(application_id=application_id, rule_id=rule_id)]


def set_enabled(
    state: Application | None, application_id: UUID, *, enabled: bool
) -> list[ApplicationEvent]:
    """Enable or disable a live application; asking for what already is writes nothing."""
    if state is None or state.deleted:
        raise ApplicationNotFoundError(application_id)
    if state.enabled == enabled:
        return []
    return [ApplicationEnablementChanged(application_id=application_id, enabled=enabled)]


def token_is_current(state: Application | None, generation: int) -> bool:
    """Whether a token issued in `generation` still speaks for the application: it is active,
    and neither its secret was rotated nor was it disabled since."""
    return state is not None and state.active and state.token_generation == generation
