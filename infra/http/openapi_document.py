"""The OpenAPI document the API serves (`/schema/openapi.json`), each struct in it as msgspec's own
schema of it, so the document says exactly what the decoders accept (Litestar's falls short), the
store's limits in its description. Why: docs/decisions/0028-http-edge-and-answers.md."""

from collections.abc import Iterator
from typing import Annotated, Any, Final, Literal

import msgspec
from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.params import QueryParameter

from domain import name_rules

STORE_LIMITS: Final = (
    "Anywhere in a request (path, query or body): strings must not hold NUL characters or"
    " unpaired surrogates, integers must fit 64 bits, and JSON must nest at most 32 levels;"
    " such input is refused with a 400 `unstorable-input` problem naming where it is."
)
_REFS: Final = "#/components/schemas/{name}"


class DecoderExactJson(JsonRenderPlugin):
    """Serves the document with its struct components as msgspec describes them (built once)."""

    def __init__(self) -> None:
        super().__init__()
        self._rendered: bytes | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        if self._rendered is None:
            self._rendered = self.render_json(request, described(openapi_schema))
        return self._rendered


def described(document: dict[str, Any]) -> dict[str, Any]:
    """The document with each struct component replaced by msgspec's schema of that struct,
    and the store's limits in its description."""
    components: dict[str, Any] = document.get("components", {}).get("schemas", {})
    structs = _structs_by_name()
    mine = [structs[name] for name in components if name in structs]
    _, exact = msgspec.json.schema_components(mine, schema_hook=_anything, ref_template=_REFS)
    components.update(exact)  # with the structs they name, under the same names
    info = document.setdefault("info", {})
    info["description"] = "\n\n".join(filter(None, (info.get("description"), STORE_LIMITS)))
    for path in document.get("paths", {}).values():
        for method, operation in path.items():
            if method in WRITES and isinstance(operation, dict):
                responses = operation.setdefault("responses", {})
                responses.setdefault("503", {"description": _WRITE_UNAVAILABLE})
    return document


WRITES: Final = frozenset({"post", "put", "patch", "delete"})
# What any write may answer besides its own, as Run:ai documents 503 on every operation.
_WRITE_UNAVAILABLE: Final = (
    "The database or the broker is away, or the resource kept changing under the service's own"
    " writers each time this request was decided (`version-conflict`, with the `expected` and"
    " `actual` versions); retry after Retry-After"
)


def _anything(_: type) -> dict[str, Any]:
    """A member typed `object` (a payload of any shape) takes any JSON (a schema with no
    constraint; msgspec wants at least one keyword)."""
    return {"description": "any JSON value"}


def _structs_by_name() -> dict[str, type[msgspec.Struct]]:
    """Every struct the document may name, by class name; a name two structs share is left out
    (the document names components by class name, so it cannot be told which is meant)."""
    found: dict[str, type[msgspec.Struct]] = {}
    shared: set[str] = set()
    for struct in _subclasses(msgspec.Struct):
        if struct.__name__ in found and found[struct.__name__] is not struct:
            shared.add(struct.__name__)
        found[struct.__name__] = struct
    return {name: struct for name, struct in found.items() if name not in shared}


def _subclasses(cls: type[msgspec.Struct]) -> Iterator[type[msgspec.Struct]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def only(*values: object) -> msgspec.Meta:
    """The document names these values only, though the decoder takes the type's others, so
    that the refusal can say why (a role id that names no role)."""
    return msgspec.Meta(extra_json_schema={"enum": list(values)})


def never(*values: object) -> msgspec.Meta:
    """The document leaves these of a Literal's values out, though the decoder takes them, so
    that the refusal can say why (the system scope, which only built-in things have; groups)."""
    return msgspec.Meta(extra_json_schema={"not": {"enum": list(values)}})


def named(rule: name_rules.NameRule) -> msgspec.Meta:
    """The document says a name's rule (domain/name_rules.py), which the decoder leaves to the
    domain, so that the refusal can say why (and name the field)."""
    shape = {"pattern": rule.pattern} if rule.pattern else {}
    said = f"At most {rule.max_length} characters{f': {rule.shape}' if rule.shape else ''}."
    unseen = " No control, format (bidi, zero-width) or line separator characters."
    return msgspec.Meta(
        extra_json_schema={"minLength": 1, "maxLength": rule.max_length, **shape},
        description=said + unseen,
    )


# What each kind of name may be (domain/name_rules.py).
DisplayName = Annotated[str, named(name_rules.DISPLAY)]
ServiceAccountName = Annotated[str, named(name_rules.SERVICE_ACCOUNT)]
WorkloadName = Annotated[str, named(name_rules.WORKLOAD)]

# A scope a request may create something in or grant a role on.
ScopeOfRequest = Annotated[
    Literal["system", "tenant", "cluster", "department", "project"], never("system")
]


# An integer query parameter of 0 or more. Said as `gt=-1` (the same integers) because Litestar
# leaves a bound of 0 out of the document, which would then allow what the decoder refuses.
NOT_NEGATIVE: Final = QueryParameter(gt=-1)
