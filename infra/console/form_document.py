"""A filled-in form as Run:ai's creation body, and a refusal's JSON pointer back to the field
that holds it. No rule is checked here: the body goes to the API's own decoder (the same
Struct, numbers read from the form's text) and then to the domain."""

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from domain.pointers import pointer_in
from infra.console.form_fields import KEPT_SOURCES, VARIABLE_SOURCES, Field
from infra.console.form_rows import at_pointer, rows_through, with_unshown
from infra.console.scopes import scope_of
from infra.console.storage_fields import ACCESS_MODES
from infra.http.numerals import natural
from infra.http.template_schemas import CreationRequest
from services.errors import InvalidRequestError

Values = Mapping[str, str | list[str]]
# Where the body says what the form's own choices became.
ALIASES: Final = {"/meta/scopeType": "/scope", "/meta/scopeId": "/scope", "/meta": "/scope"}
BODY: Final = ("/meta/", "/spec/", "/assets/", "/master/")
SOURCE: Final = re.compile(r"^(/master)?/assets/datasources/[0-9]+/id$")
# The members of a variable that each name a source of its value (the spec allows one).
SOURCES: Final = ("value", "secret", "configMap", "userCredential", "podFieldRef")
# The form's own choices under the body's pointers, which become other members there: a value
# they do not offer has no member to be refused by the API's Struct, so the form names it.
OWN_CHOICES: Final = ("/source", "/claimInfo/accessModes")


class Built(msgspec.Struct, frozen=True, kw_only=True):
    body: dict[str, Any]
    # a body pointer prefix (a list item renumbered once empty items were left out) -> the form's
    renamed: dict[str, str]
    # the form's own choices sent with a value it does not offer: pointer -> what is wrong
    unknown: dict[str, str] = msgspec.field(default_factory=dict)


def set_at(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Put `value` at `pointer`, making the objects and lists (a digit names an item) on the
    way; items not given stay None until they are compacted away."""
    parts = pointer.strip("/").split("/")
    node: Any = document
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        made: Any = value if last else [] if natural(parts[depth + 1]) is not None else {}
        if isinstance(node, list):
            if natural(part) is None:
                raise InvalidRequestError(pointer, "a list's item is named by its number")
            index = rows_through(part, pointer) - 1
            node.extend([None] * (index + 1 - len(node)))
            if last or node[index] is None:
                node[index] = made
            node = node[index]
        else:
            if last:
                node[part] = made
            node = node.setdefault(part, made)


def compacted(value: Any, at: str, renamed: dict[str, str]) -> Any:
    """Lists without the items left empty; `renamed` records each item that moved."""
    if isinstance(value, dict):
        return {k: compacted(v, f"{at}/{k}", renamed) for k, v in value.items()}
    if isinstance(value, list):
        kept: list[Any] = []
        for i, item in enumerate(value):
            if item is None:
                continue
            if len(kept) != i:
                renamed[f"{at}/{len(kept)}"] = f"{at}/{i}"
            kept.append(compacted(item, f"{at}/{i}", renamed))
        return kept
    return value


def build(
    fields: Sequence[Field],
    values: Values,
    *,
    copied: Mapping[str, Any] | None = None,
    current: Mapping[str, Any] | None = None,
) -> Built:
    """The creation body the form says: every field with a value, at its pointer, over `copied`
    (assets used without linking, the master's under `master/spec`); an edit's `current` gives
    each list item back what its row does not show (form_rows.py), but in lists `copied` fills."""
    document: dict[str, Any] = {"meta": {}, "spec": {}, **copy.deepcopy(dict(copied or {}))}
    for field in fields:
        if not field.pointer.startswith(BODY):
            continue
        raw = values.get(field.pointer)
        if field.kind == "multi":
            chosen = raw if isinstance(raw, list) else [raw] if raw else []
            if chosen:
                set_at(document, field.pointer, chosen)
            continue
        if field.kind == "list" and isinstance(raw, list):
            raw = ", ".join(raw)  # a list loaded as it was, not as typed
        given = raw[-1] if isinstance(raw, list) else raw
        text = (given or "").strip()
        if text:
            # A list's items as typed: one left empty is the domain's to refuse, by its index.
            items = [item.strip() for item in text.split(",")]
            set_at(document, field.pointer, items if field.kind == "list" else text)
    kind, scope_id = scope_of(str(values.get("/scope") or ""))
    document["meta"]["scopeType"] = kind
    if scope_id:
        document["meta"]["scopeId"] = scope_id
    _data_sources(document)
    _configuration(document, values)
    unknown = _unknown_choices(fields, values)
    renamed: dict[str, str] = {}
    body = compacted(document, "", renamed)
    if current is not None:
        skip = tuple(
            f"{at}/{key}"
            for at in ("/spec", "/master/spec")
            for key in at_pointer(copied or {}, at) or {}
        )
        with_unshown(body, current, {f.pointer for f in fields}, renamed, skip=skip)
    _variable_sources(body)
    _access_modes(body)
    return Built(body=body, renamed=renamed, unknown=unknown)


def _unknown_choices(fields: Sequence[Field], values: Values) -> dict[str, str]:
    """The choices of the form's own (OWN_CHOICES) sent with a value it does not offer: the
    body has no member that the API's Struct could refuse for them."""
    unknown: dict[str, str] = {}
    for field in fields:
        sent = values.get(field.pointer)
        offered = dict(field.options)
        chosen = sent if isinstance(sent, list) else [] if sent is None else [sent]
        if field.pointer.endswith(OWN_CHOICES) and any(c not in offered for c in chosen):
            unknown[field.pointer] = f"Choose among {', '.join(offered.values())}."
    return unknown


def _replicas(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The workers' spec and the master's, those the body has."""
    specs = (body.get("spec"), (body.get("master") or {}).get("spec"))
    return [spec for spec in specs if isinstance(spec, dict)]


def _access_modes(body: dict[str, Any]) -> None:
    """A new volume's access modes are chosen from a list; the spec has a switch for each."""
    for spec in _replicas(body):
        for item in (spec.get("storage") or {}).get("pvc") or ():
            claim = item.get("claimInfo") if isinstance(item, dict) else None
            if isinstance(claim, dict) and isinstance(claim.get("accessModes"), list):
                chosen = claim["accessModes"]
                claim["accessModes"] = {mode: mode in chosen for mode, _ in ACCESS_MODES}


def _variable_sources(body: dict[str, Any]) -> None:
    """Each variable keeps the member of the source its row chose (`source`: Custom's value, a
    shared secret, a ConfigMap, or one kept as it was) and none of the others a row may still
    hold (a source that is none of these is in `Built.unknown`)."""
    chosen_sources = {*dict(VARIABLE_SOURCES), *KEPT_SOURCES}
    for spec in _replicas(body):
        for item in spec.get("environmentVariables") or ():
            if not isinstance(item, dict) or item.get("source", "") not in chosen_sources:
                continue
            keep = item.pop("source", "") or "value"
            for member in SOURCES:
                if member != keep:
                    item.pop(member, None)


def _data_sources(document: dict[str, Any]) -> None:
    """A data source is chosen as `<kind>|<id>`: the body names both."""
    sections = (document, document.get("master") or {})
    for item in (i for s in sections for i in (s.get("assets") or {}).get("datasources") or ()):
        if item is None:
            continue
        kind, _, asset_id = str(item.pop("ref", "")).partition("|")
        if asset_id:
            item["id"], item["kind"] = asset_id, kind


def _configuration(document: dict[str, Any], values: Values) -> None:
    """Workers only, workers & master alike, or a master of its own (the toggle)."""
    master = document.pop("master", None)
    if values.get("/configuration") == "workers-only":
        document["masterSpecSameAsWorker"] = False
    elif values.get("/differentMaster") == "true":
        document["masterSpecSameAsWorker"] = False
        document["master"] = master or {}
    else:
        document["masterSpecSameAsWorker"] = True


def decoded(built: Built) -> CreationRequest:
    """The body through the API's own Struct; msgspec.ValidationError names where it breaks."""
    return msgspec.convert(built.body, CreationRequest, strict=False)


def decode_pointer(exc: msgspec.ValidationError) -> str:
    return pointer_in(str(exc))


def field_of(pointer: str, built: Built, known: set[str]) -> str | None:
    """The form field a refusal's pointer names: renumbered items put back, aliases followed,
    and else the nearest enclosing field; None when no field holds it."""
    if not pointer.startswith("/"):
        return None  # a header's or a parameter's name, no field of the form
    for moved, original in sorted(built.renamed.items(), key=lambda kv: -len(kv[0])):
        if pointer == moved or pointer.startswith(f"{moved}/"):
            pointer = original + pointer[len(moved) :]
            break
    pointer = ALIASES.get(pointer, pointer)
    if f"{pointer}/source" in known:  # a variable as a whole: where its source is chosen
        return f"{pointer}/source"
    while pointer:
        if pointer in known:
            return pointer
        if pointer.endswith("/id") and SOURCE.match(pointer):
            return pointer.removesuffix("/id") + "/ref"
        pointer = pointer.rsplit("/", 1)[0]
    return None
