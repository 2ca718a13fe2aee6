"""Value objects: plain, frozen data shared by events and aggregates."""

from typing import Final, Literal

import msgspec

Role = Literal["admin", "editor", "submitter", "viewer"]
ScopeKind = Literal["tenant", "cluster", "department", "project"]


class Grant(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A role on a scope; it covers the scope and everything below it."""

    role: Role
    scope_kind: ScopeKind
    scope_id: str


TENANT_ADMIN: Final = Grant(role="admin", scope_kind="tenant", scope_id="tenant")
