"""Workload policies: a scope's defaults and rules, merged down its lineage so the tighter rule
wins (docs/api/policies.md). Also: domain/policy_compliance.py, services/policies.py,
projections/policy_catalogue.py, infra/http/policies.py."""

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar
from uuid import UUID

import msgspec

from domain import name_rules
from domain.combined import overlay
from domain.errors import DomainError, InvalidHistoryError
from domain.events import Event, PolicyApplied, PolicyDeleted
from domain.mandatory_fields import pointer as pointer_to
from domain.mandatory_fields import unset
from domain.policy_fields import FIELDS, replica_of
from domain.policy_rules import (
    PolicyRule,
    RuleName,
    number,
    value_issues,
    value_of,
)
from domain.quantities import InvalidQuantityError, is_multiple
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.values import ScopeRef

WorkloadType = Literal["distributed"]
Spec = TypeVar("Spec", bound=msgspec.Struct)
_NAMESPACE: Final = UUID("6f0b1c2d-3e4a-4b5c-8d6e-7f8091a2b3c4")


def stream_of(workload_type: WorkloadType, scope: ScopeRef) -> UUID:
    """A scope's policy of a workload type is one stream, found from the scope alone."""
    return uuid.uuid5(_NAMESPACE, f"{workload_type}/{scope.kind}/{scope.id}")


class PolicyBody(msgspec.Struct, frozen=True, kw_only=True):
    """What one scope sets."""

    worker_defaults: DistributedTemplateSpec | None = None
    master_defaults: MasterTemplateSpec | None = None
    rules: dict[str, PolicyRule] = msgspec.field(default_factory=dict)


class Placement(msgspec.Struct, frozen=True, kw_only=True):
    """Where a scope sits: the ids of its cluster, department and project, as far as it goes."""

    cluster_id: UUID | None = None
    department_id: str | None = None
    project_id: str | None = None


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    policy_id: UUID
    name: str
    scope: ScopeRef
    placement: Placement
    body: PolicyBody
    deleted: bool = False


class Effective(msgspec.Struct, frozen=True, kw_only=True):
    """A scope's policy in force: its lineage's merged. Defaults in the spec's wire shape."""

    worker_defaults: dict[str, Any] = msgspec.field(default_factory=dict)
    master_defaults: dict[str, Any] = msgspec.field(default_factory=dict)
    rules: dict[str, PolicyRule] = msgspec.field(default_factory=dict)
    # Per ruled field, the lowest scope whose policy rules it (Run:ai's `sourceOfRule`).
    sources: dict[str, ScopeRef] = msgspec.field(default_factory=dict)

    def defaults_of(self, path: str) -> dict[str, Any]:
        return self.master_defaults if replica_of(path) == "master" else self.worker_defaults


NOTHING: Final = Effective()


class PolicyNotFoundError(DomainError):
    slug = "policy-not-found"

    def __init__(self, scope: ScopeRef) -> None:
        where = "the tenant" if scope.kind == "tenant" else f"{scope.kind} {scope.id}"
        super().__init__(f"{where} has no distributed policy")
        self.scope_kind = scope.kind
        self.scope_id = scope.id


class InvalidPolicyError(DomainError):
    """A policy that cannot be: `field` points into the request body."""

    slug = "invalid-policy"

    def __init__(self, field: str, reason: str, rule: RuleName | None = None) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.rule = rule


def evolve(state: Policy | None, event: Event) -> Policy | None:
    match event:
        case PolicyApplied():
            return Policy(
                policy_id=event.policy_id,
                name=event.name,
                scope=ScopeRef(event.scope, event.scope_id),
                placement=Placement(
                    cluster_id=event.cluster_id,
                    department_id=event.department_id,
                    project_id=event.project_id,
                ),
                body=PolicyBody(
                    worker_defaults=event.worker_defaults,
                    master_defaults=event.master_defaults,
                    rules=event.rules,
                ),
            )
        case PolicyDeleted() if state is not None:
            return msgspec.structs.replace(state, deleted=True)
        case _:
            raise InvalidHistoryError(f"{type(event).__name__} does not apply to a policy")


def fold(events: Iterable[Event]) -> Policy | None:
    state: Policy | None = None
    for event in events:
        state = evolve(state, event)
    return state


def live(state: Policy | None) -> Policy | None:
    return None if state is None or state.deleted else state


def apply(
    state: Policy | None,
    policy_id: UUID,
    name: str,
    scope: ScopeRef,
    placement: Placement,
    body: PolicyBody,
) -> list[Event]:
    """The policy `body`, named `name`, for `scope`, whole; nothing when it is so already.
    `body` is checked (check) against the effective policy above the scope by the caller."""
    name_rules.check(name, "/meta/name", refused=InvalidPolicyError)
    current = live(state)
    same = current is not None and (current.name, current.body) == (name, body)
    if same and current is not None and current.placement == placement:
        return []
    return [
        PolicyApplied(
            policy_id=policy_id,
            name=name,
            workload_type="distributed",
            scope=scope.kind,
            scope_id=scope.id,
            cluster_id=placement.cluster_id,
            department_id=placement.department_id,
            project_id=placement.project_id,
            worker_defaults=body.worker_defaults,
            master_defaults=body.master_defaults,
            rules=dict(body.rules),
        )
    ]


def delete(state: Policy | None, scope: ScopeRef) -> list[Event]:
    current = live(state)
    if current is None:
        raise PolicyNotFoundError(scope)
    return [PolicyDeleted(policy_id=current.policy_id)]


def changed(current: PolicyBody, given: PolicyBody, reset: Sequence[str]) -> PolicyBody:
    """A PATCH: `given`'s defaults laid over the current ones, its rules' members over the
    current rules' members; then every field under a `reset` path loses its default and rule."""
    check_items(given)
    worker = _laid(current.worker_defaults, given.worker_defaults)
    master = _laid(current.master_defaults, given.master_defaults)
    rules = dict(current.rules)
    for path, rule in given.rules.items():
        below = rules.get(path)
        rules[path] = rule if below is None else _over(below, rule)
    for path in reset:
        replica, _, inner = path.partition(".")
        rules = {p: r for p, r in rules.items() if not _under(p, path)}
        if replica == "worker":
            worker = _without(worker, inner)
        elif replica == "master":
            master = _without(master, inner)
    return PolicyBody(
        worker_defaults=_spec(worker, DistributedTemplateSpec),
        master_defaults=_spec(master, MasterTemplateSpec),
        rules=rules,
    )


def effective(chain: Sequence[tuple[ScopeRef, PolicyBody]]) -> Effective:
    """The policies of a lineage merged, `chain` from the tenant down (see the module's doc)."""
    worker: dict[str, Any] = {}
    master: dict[str, Any] = {}
    rules: dict[str, PolicyRule] = {}
    sources: dict[str, ScopeRef] = {}
    for scope, body in chain:
        overlay(worker, _builtins(body.worker_defaults))
        overlay(master, _builtins(body.master_defaults))
        for path, rule in body.rules.items():
            above = rules.get(path)
            rules[path] = rule if above is None else tighter(above, rule, FIELDS[path].kind)
            sources[path] = scope
    return Effective(worker_defaults=worker, master_defaults=master, rules=rules, sources=sources)


def tighter(above: PolicyRule, below: PolicyRule, kind: str) -> PolicyRule:
    """Both rules at once: what each member allows, the other's too."""
    step = above.step
    if below.step is not None and (step is None or _multiple(below.step, step)):
        step = below.step
    options = above.options
    if below.options is not None:
        allowed = None if above.options is None else {o.value for o in above.options}
        options = tuple(o for o in below.options if allowed is None or o.value in allowed)
    locked = None
    if above.locked is not None or below.locked is not None:
        locked = tuple(dict.fromkeys((*(above.locked or ()), *(below.locked or ()))))
    return PolicyRule(
        required=_either(above.required, below.required, True),
        can_edit=_either(above.can_edit, below.can_edit, False),
        min=_bound(above.min, below.min, kind, max),
        max=_bound(above.max, below.max, kind, min),
        step=step,
        options=options,
        can_add=_either(above.can_add, below.can_add, False),
        locked=locked,
    )


def check(body: PolicyBody, above: Effective, scope: ScopeRef, at: str = "/policy") -> Effective:
    """`body` as `scope`'s policy under `above` (the effective policy of the scopes above it),
    or InvalidPolicyError naming the field and, for a loosening, the rule. Returns the scope's
    effective policy."""
    check_items(body, at)
    for path, rule in body.rules.items():
        pointer = f"{at}/rules/{path.replace('.', '/')}"
        _check_rule(path, rule, pointer)
        up = above.rules.get(path)
        if up is not None:
            _check_not_looser(path, up, rule, pointer, above.sources[path])
    merged = effective([(scope, _as_body(above)), (scope, body)])
    kept = {path: source for path, source in above.sources.items() if path not in body.rules}
    merged = msgspec.structs.replace(merged, sources={**merged.sources, **kept})
    _check_defaults(merged, at)
    return merged


def check_items(body: PolicyBody, at: str = "/policy") -> None:
    """Each item of a defaults list is complete on its own: it is merged whole, by name. The
    objects of defaults merge field by field with what lies over them, so may be partial."""
    for replica, spec in (("worker", body.worker_defaults), ("master", body.master_defaults)):
        missing = None if spec is None else unset(spec, items_only=True)
        if missing is not None:
            path, reason = missing
            first = next(i for i, part in enumerate(path) if isinstance(part, int))
            field = FIELDS.get(".".join(map(str, (replica, *path[:first]))))
            if field is not None and field.kind == "items":  # the wire wraps them so
                path = (*path[:first], "instances", *path[first:])
            raise InvalidPolicyError(pointer_to(f"{at}/defaults/{replica}", path), reason)


def _check_rule(path: str, rule: PolicyRule, pointer: str) -> None:
    field = FIELDS[path]
    for name in ("min", "max", "step"):
        given = getattr(rule, name)
        try:
            if given is not None:
                number(given, field.kind if name != "step" else "number")
        except InvalidQuantityError:
            what = "a quantity, such as 20Gi" if field.kind == "quantity" else "a finite number"
            raise InvalidPolicyError(f"{pointer}/{name}", what) from None
    low = None if rule.min is None else number(rule.min, field.kind)
    high = None if rule.max is None else number(rule.max, field.kind)
    if low is not None and high is not None and low > high:
        raise InvalidPolicyError(f"{pointer}/min", f"min {rule.min} is above max {rule.max}")
    if rule.step is not None and rule.step <= 0:
        raise InvalidPolicyError(f"{pointer}/step", "a step is more than 0")
    if field.kind == "integer":
        for name in ("min", "max", "step"):
            if not isinstance(getattr(rule, name), int | None):
                raise InvalidPolicyError(f"{pointer}/{name}", "an integer field takes integers")
    if rule.options is not None:
        if not rule.options:
            raise InvalidPolicyError(f"{pointer}/options", "give at least one option")
        for i, option in enumerate(rule.options):
            if field.values and option.value not in field.values:
                raise InvalidPolicyError(
                    f"{pointer}/options/{i}/value",
                    f"{option.value!r} is not one of {', '.join(field.values)}",
                )
    if rule.locked and field.key is None:
        raise InvalidPolicyError(f"{pointer}/instances/locked", "these items have no key to lock")


def _check_not_looser(
    path: str, up: PolicyRule, rule: PolicyRule, pointer: str, source: ScopeRef
) -> None:
    kind = FIELDS[path].kind
    where = "the tenant" if source.kind == "tenant" else f"{source.kind} {source.id}"

    def refuse(name: RuleName, member: str, what: str) -> None:
        raise InvalidPolicyError(
            f"{pointer}/{member}", f"{what}: {where}'s policy sets it tighter", rule=name
        )

    if up.required and rule.required is False:
        refuse("required", "required", "the field is required above")
    if up.can_edit is False and rule.can_edit:
        refuse("canEdit", "canEdit", "the field cannot be edited above")
    low, up_low = rule.min, up.min
    if low is not None and up_low is not None and number(low, kind) < number(up_low, kind):
        refuse("min", "min", f"min {low} is below {up_low}")
    high, up_high = rule.max, up.max
    if high is not None and up_high is not None and number(high, kind) > number(up_high, kind):
        refuse("max", "max", f"max {high} is above {up_high}")
    if up.step is not None and rule.step is not None and not _multiple(rule.step, up.step):
        refuse("step", "step", f"step {rule.step} is no multiple of {up.step}")
    if up.options is not None and rule.options is not None:
        allowed = {o.value for o in up.options}
        extra = [o.value for o in rule.options if o.value not in allowed]
        if extra:
            refuse("options", "options", f"{', '.join(extra)} is not an option above")
    if up.can_add is False and rule.can_add:
        refuse("canAdd", "instances/canAdd", "items cannot be added above")


def _check_defaults(merged: Effective, at: str) -> None:
    for path, rule in merged.rules.items():
        field = FIELDS[path]
        pointer = f"{at}/defaults/{path.replace('.', '/')}"
        default = value_of(merged.defaults_of(path), path)
        if rule.can_edit is False and default is None and field.kind != "items":
            raise InvalidPolicyError(
                f"{at}/rules/{path.replace('.', '/')}/canEdit",
                "a field no one may edit needs a default: give one",
                rule="canEdit",
            )
        if default is None:
            continue
        found = value_issues(path, rule, default)
        if found:
            raise InvalidPolicyError(pointer, f"the default breaks a rule: {found[0].details}",
                                     rule=found[0].rule)  # fmt: skip


def _either(above: bool | None, below: bool | None, tight: bool) -> bool | None:
    if tight in (above, below):
        return tight
    return below if below is not None else above


def _bound(
    above: int | float | str | None, below: int | float | str | None, kind: str, pick: Any
) -> int | float | str | None:
    if above is None or below is None:
        return below if above is None else above
    chosen: int | float | str = pick(above, below, key=lambda v: number(v, kind))
    return chosen


def _multiple(step: float, of: float) -> bool:
    return is_multiple(number(step, "number"), number(of, "number"))


def _over(below: PolicyRule, above: PolicyRule) -> PolicyRule:
    given = {k: v for k, v in msgspec.structs.asdict(above).items() if v is not None}
    return msgspec.structs.replace(below, **given)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(f"{prefix}.")


def _builtins(spec: msgspec.Struct | None) -> dict[str, Any]:
    """A spec as JSON holds it (lists, not tuples: what overlay merges by name)."""
    return {} if spec is None else dict(msgspec.json.decode(msgspec.json.encode(spec)))


def _laid(current: msgspec.Struct | None, given: msgspec.Struct | None) -> dict[str, Any]:
    merged = _builtins(current)
    overlay(merged, _builtins(given))
    return merged


def _without(values: dict[str, Any], inner: str) -> dict[str, Any]:
    if not inner:
        return {}
    head, _, rest = inner.partition(".")
    if head not in values:
        return values
    found = dict(values)
    if not rest:
        del found[head]
    elif isinstance(found[head], dict):
        found[head] = _without(found[head], rest)
    return found


def _spec(values: Mapping[str, Any], spec: type[Spec]) -> Spec | None:
    return msgspec.convert(values, spec) if values else None


def _as_body(above: Effective) -> PolicyBody:
    return PolicyBody(
        worker_defaults=_spec(above.worker_defaults, DistributedTemplateSpec),
        master_defaults=_spec(above.master_defaults, MasterTemplateSpec),
        rules=above.rules,
    )
