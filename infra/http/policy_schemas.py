"""A distributed policy in Run:ai's wire shape (DistributedPolicyDefaultsAndRulesV2), nested by
replica and field, to and from the domain's flat paths (domain/policy_fields.py); what the service
cannot honour is refused by name: docs/decisions/0028-http-edge-and-answers.md."""

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from domain.pointers import pointer_in
from domain.policies import Effective, InvalidPolicyError, PolicyBody
from domain.policy_fields import FIELDS, RULE_MEMBERS, Field, Replica
from domain.policy_rules import PolicyRule
from domain.template_rules import without_client_defaults
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.values import ScopeRef
from infra.http.numerals import natural

_PREFIXES: Final = frozenset(
    ".".join(path.split(".")[:i]) for path in FIELDS for i in range(1, path.count(".") + 1)
)
_REPLICAS: Final[tuple[Replica, ...]] = ("worker", "master")
_IGNORED: Final = frozenset({"sourceOfRule"})


def body_of(policy: Any, at: str = "/policy") -> PolicyBody:
    """The domain's policy body from the wire's `policy` member."""
    if policy is None:
        return PolicyBody()
    if not isinstance(policy, Mapping):
        raise InvalidPolicyError(at, "an object of defaults and rules")
    for name, value in policy.items():
        if name == "imposedAssets" and value:
            raise InvalidPolicyError(f"{at}/imposedAssets", "imposed assets are not supported")
        if name not in ("defaults", "rules", "imposedAssets", "status"):
            raise InvalidPolicyError(f"{at}/{name}", "no member of a policy")
    defaults = _replicas(policy.get("defaults"), f"{at}/defaults")
    rules: dict[str, PolicyRule] = {}
    for replica, node in _replicas(policy.get("rules"), f"{at}/rules").items():
        _rules(node, replica, f"{at}/rules/{replica}", rules)
    worker = _defaults(defaults.get("worker"), "worker", at, DistributedTemplateSpec)
    return PolicyBody(
        # runapy's models fill MPI's slots and SSH path with their defaults in every body.
        worker_defaults=None if worker is None else without_client_defaults(worker),
        master_defaults=_defaults(defaults.get("master"), "master", at, MasterTemplateSpec),
        rules=rules,
    )


def wire_of(body: PolicyBody) -> dict[str, Any]:
    """What a scope sets, in the wire's shape."""
    return _wire(_json(body.worker_defaults), _json(body.master_defaults), body.rules, None)


def effective_wire(effective: Effective) -> dict[str, Any]:
    """What is in force at a scope, each rule with the scope it comes from."""
    return _wire(
        effective.worker_defaults, effective.master_defaults, effective.rules, effective.sources
    )


def _replicas(node: Any, at: str) -> dict[Replica, Mapping[str, Any]]:
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise InvalidPolicyError(at, "an object with worker and master")
    found: dict[Replica, Mapping[str, Any]] = {}
    for name, value in node.items():
        if name not in _REPLICAS:
            raise InvalidPolicyError(f"{at}/{name}", "a replica: worker or master")
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise InvalidPolicyError(f"{at}/{name}", "an object")
        found["worker" if name == "worker" else "master"] = value
    return found


def _rules(node: Mapping[str, Any], path: str, at: str, found: dict[str, PolicyRule]) -> None:
    for name, value in node.items():
        inner, pointer = f"{path}.{name}", f"{at}/{name}"
        if value is None:
            continue
        field = FIELDS.get(inner)
        if field is not None:
            found[inner] = _rule(field, value, pointer)
        elif inner in _PREFIXES and isinstance(value, Mapping):
            _rules(value, inner, pointer, found)
        else:
            raise InvalidPolicyError(pointer, "no field of a distributed workload")


def _rule(field: Field, value: Any, at: str) -> PolicyRule:
    if not isinstance(value, Mapping):
        raise InvalidPolicyError(at, "an object of rules")
    if field.kind == "items":
        for name in value:
            if name == "attributes":
                raise InvalidPolicyError(
                    f"{at}/attributes", "rules of items' attributes are not supported"
                )
            if name != "instances":
                raise InvalidPolicyError(
                    f"{at}/{name}", "an itemized field's rules are its instances'"
                )
        value = value.get("instances") or {}
        at = f"{at}/instances"
        if not isinstance(value, Mapping):
            raise InvalidPolicyError(at, "an object of rules")
    allowed = RULE_MEMBERS[field.kind]
    given = {}
    for name, member in value.items():
        if name in _IGNORED or member is None:
            continue
        if name == "defaultFrom":
            raise InvalidPolicyError(
                f"{at}/defaultFrom", "defaults taken from another field are not supported"
            )
        if name not in allowed:
            raise InvalidPolicyError(
                f"{at}/{name}", f"a {field.kind} field takes {', '.join(sorted(allowed))}"
            )
        if name in ("min", "max", "step"):
            _check_bound(field, member, f"{at}/{name}")
        given[name] = member
    try:
        return msgspec.convert(given, PolicyRule)
    except msgspec.ValidationError as error:
        raise InvalidPolicyError(
            pointer_in(str(error), at), str(error).split(" - at", 1)[0]
        ) from None


def _check_bound(field: Field, value: Any, at: str) -> None:
    if field.kind == "quantity":
        if not isinstance(value, str):
            raise InvalidPolicyError(at, "a quantity, such as 20Gi")
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidPolicyError(at, "a number")


def _defaults(
    node: Mapping[str, Any] | None, replica: Replica, at: str, spec: type[msgspec.Struct]
) -> Any:
    if node is None:
        return None
    base = f"{at}/defaults/{replica}"
    unwrapped = _unwrap(node, replica, base)
    try:
        return msgspec.convert(unwrapped, spec)
    except msgspec.ValidationError as error:
        raise InvalidPolicyError(
            pointer_in(str(error), base), str(error).split(" - at", 1)[0]
        ) from None


def _unwrap(node: Mapping[str, Any], path: str, at: str) -> dict[str, Any]:
    """Defaults in the spec's own shape: each itemized field's `instances`, as its list."""
    found: dict[str, Any] = {}
    for name, value in node.items():
        inner, pointer = f"{path}.{name}", f"{at}/{name}"
        field = FIELDS.get(inner)
        if field is not None and field.kind == "items" and value is not None:
            if not isinstance(value, Mapping):
                raise InvalidPolicyError(pointer, "an object with the default instances")
            if value.get("attributes") is not None:
                raise InvalidPolicyError(
                    f"{pointer}/attributes", "default attributes of items are not supported"
                )
            found[name] = value.get("instances")
        elif field is None and inner in _PREFIXES and isinstance(value, Mapping):
            found[name] = _unwrap(value, inner, pointer)
        elif field is None and value is not None:
            raise InvalidPolicyError(pointer, "no field of a distributed workload")
        else:
            found[name] = value
    return found


def _json(spec: msgspec.Struct | None) -> dict[str, Any]:
    return {} if spec is None else dict(msgspec.json.decode(msgspec.json.encode(spec)))


def _wire(
    worker: Mapping[str, Any],
    master: Mapping[str, Any],
    rules: Mapping[str, PolicyRule],
    sources: Mapping[str, ScopeRef] | None,
) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    for replica, values in (("worker", worker), ("master", master)):
        if values:
            defaults[replica] = _wrapped(values, replica)
    shown: dict[str, Any] = {}
    for path, rule in rules.items():
        member = msgspec.to_builtins(rule)
        if FIELDS[path].kind == "items":
            member = {"instances": member}
        if sources is not None and path in sources:
            target = member.get("instances", member)
            target["sourceOfRule"] = _source(sources[path])
        node = shown
        *heads, last = path.split(".")
        for head in heads:
            node = node.setdefault(head, {})
        node[last] = member
    return {"defaults": defaults or None, "rules": shown or None}


def _wrapped(values: Mapping[str, Any], path: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in values.items():
        inner = f"{path}.{name}"
        field = FIELDS.get(inner)
        if field is not None and field.kind == "items":
            found[name] = {"instances": value}
        elif field is None and isinstance(value, Mapping):
            found[name] = _wrapped(value, inner)
        else:
            found[name] = value
    return found


def _source(scope: ScopeRef) -> dict[str, Any]:
    found: dict[str, Any] = {"scope": scope.kind}
    if scope.kind == "project" and (number := natural(scope.id)) is not None:
        found["projectId"] = number  # an integer in Run:ai's document
    elif scope.kind != "tenant":
        found[f"{scope.kind}Id"] = scope.id
    return found
