"""The org scopes a person may see, named for people: the choices of a template's scope and the
names the grid shows, from the API's own org-unit reads."""

from typing import Final
from uuid import UUID

import msgspec

from domain.values import ScopeKind, ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.org_unit_actions import visible_units

LEVELS: Final[tuple[tuple[ScopeKind, str], ...]] = (
    ("cluster", "Cluster"),
    ("department", "Department"),
    ("project", "Project"),
)


class ScopeChoice(msgspec.Struct, frozen=True):
    value: str  # "<kind>:<id>" ("tenant" alone), what a form sends
    label: str
    kind: str
    id: str
    cluster: UUID | None = None  # the cluster it is in (or is); none for the tenant


def choice_value(kind: str, scope_id: str) -> str:
    return "tenant" if kind == "tenant" else f"{kind}:{scope_id}"


async def visible_scopes(request: Caller, adapters: Adapters) -> list[ScopeChoice]:
    """The tenant and every cluster, department and project the caller may see, in the order
    of the org tree's levels."""
    tenant = ScopeRef("tenant") in await seen_scopes(request)
    found = [ScopeChoice("tenant", "Tenant", "tenant", "")] if tenant else []
    for kind, title in LEVELS:
        units = await visible_units(request, kind, adapters.reads)
        for unit in sorted(units, key=lambda u: u.name):
            found.append(
                ScopeChoice(
                    choice_value(kind, unit.id),
                    f"{title} · {unit.name}",
                    kind,
                    unit.id,
                    unit.cluster_id,
                )
            )
    return found


def scope_of(value: str) -> tuple[str, str | None]:
    """A choice's value back as (scope type, scope id): what Run:ai's creation meta takes."""
    kind, _, scope_id = value.partition(":")
    return kind, scope_id or None
