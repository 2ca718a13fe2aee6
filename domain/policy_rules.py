"""What a policy's rule is, and whether a value keeps it: one field's value against one rule,
as a policy checks its own defaults and as a spec is checked for compliance
(domain/policy_compliance.py)."""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal

import msgspec

from domain import quantities
from domain.policy_fields import FIELDS, spec_path
from domain.quantities import is_multiple

RuleName = Literal["min", "max", "step", "options", "required", "canEdit", "canAdd", "locked"]


class PolicyOption(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    value: str
    displayed: str | None = None


class PolicyRule(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The rules a policy sets on one field; unset members are not ruled by it. `min`/`max` are
    numbers, or quantity strings for a quantity field."""

    required: bool | None = None
    can_edit: bool | None = None
    min: int | float | str | None = None
    max: int | float | str | None = None
    step: int | float | None = None
    options: tuple[PolicyOption, ...] | None = None
    can_add: bool | None = None
    locked: tuple[str, ...] | None = None


class ComplianceIssue(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Run:ai's compliance issue: the policy path of the field, why, and the rule broken."""

    field: str
    details: str
    rule: RuleName | None = None


def number(value: int | float | str, kind: str) -> Decimal:
    """A rule's bound or a field's value, comparable: quantities in base units. One that is no
    finite number is an InvalidQuantityError."""
    try:
        found = quantities.parse(str(value)) if kind == "quantity" else Decimal(str(value))
    except (ArithmeticError, ValueError):
        raise quantities.InvalidQuantityError(str(value)) from None
    if not found.is_finite():
        raise quantities.InvalidQuantityError(str(value))
    return found


def value_of(values: Mapping[str, Any], path: str) -> Any:
    """The value at a policy path ("worker.compute.gpuDevicesRequest") in a replica's spec in
    its wire shape; None when unset."""
    found: Any = values
    for name in spec_path(path).split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(name)
    return found


def value_issues(path: str, rule: PolicyRule, value: Any) -> list[ComplianceIssue]:
    """How a set value breaks `rule`'s bounds, step or options (not `required`/`canEdit`, which
    are about whether and by whom it was set)."""
    field = FIELDS[path]
    found: list[ComplianceIssue] = []
    if field.kind in ("integer", "number", "quantity") and not isinstance(value, bool):
        try:
            at = number(value, field.kind)
        except quantities.InvalidQuantityError:
            return found
        if rule.min is not None and at < number(rule.min, field.kind):
            found.append(_issue(path, "min", f"value must be no less than {rule.min}"))
        if rule.max is not None and at > number(rule.max, field.kind):
            found.append(_issue(path, "max", f"value must be no greater than {rule.max}"))
        if rule.step is not None:
            start = number(rule.min, field.kind) if rule.min is not None else Decimal(0)
            if not is_multiple(at - start, number(rule.step, "number")):
                found.append(
                    _issue(path, "step", f"value must be {start} plus a multiple of {rule.step}")
                )
    if rule.options is not None and field.kind in ("string", "array"):
        allowed = [o.value for o in rule.options]
        for item in value if isinstance(value, list | tuple) else [value]:
            if item not in allowed:
                found.append(
                    _issue(path, "options", f"{item!r} is not one of: {', '.join(allowed)}")
                )
    return found


def item_issues(
    path: str, rule: PolicyRule, items: Sequence[Any], defaults: Sequence[Any]
) -> list[ComplianceIssue]:
    """An itemized field's items against its `instances` rules: no item beyond the defaults'
    when items cannot be added; each locked default item there, as the default has it."""
    key = FIELDS[path].key
    found: list[ComplianceIssue] = []
    if key is None:
        return found
    by_key = {item.get(key): item for item in items if isinstance(item, Mapping)}
    default_by_key = {item.get(key): item for item in defaults if isinstance(item, Mapping)}
    if rule.can_add is False:
        for name in by_key:
            if name not in default_by_key:
                found.append(_issue(path, "canAdd", f"items cannot be added: {name}"))
    for name in rule.locked or ():
        item = by_key.get(name)
        if item is None:
            found.append(_issue(path, "locked", f"{name} is locked: it cannot be removed"))
        elif name in default_by_key and item != default_by_key[name]:
            found.append(_issue(path, "locked", f"{name} is locked: it cannot be changed"))
    return found


def _issue(path: str, rule: RuleName, details: str) -> ComplianceIssue:
    return ComplianceIssue(field=path, details=details, rule=rule)
