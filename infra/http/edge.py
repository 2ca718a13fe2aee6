"""Input the store cannot hold (a NUL, a lone surrogate, a number past 64 bits, JSON nested too
deep) is refused before any handler runs, as a problem naming where, and so is a body not JSON
(the console's: a form) or too big. Why: docs/decisions/0028-http-edge-and-answers.md."""

import re
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any, Final
from urllib.parse import parse_qsl

import msgspec

from infra.http.consistency import MIN_POSITION
from infra.http.numerals import natural
from infra.http.problems import PROBLEM_JSON, problem_body
from infra.settings import BODY_BYTES

CONSOLE: Final = "/console"  # where the web console's pages are (infra/console/)
FORM: Final = "application/x-www-form-urlencoded"
MAX_DEPTH: Final = 32  # the deepest request body of the API nests 8 levels
INT64: Final = range(-(2**63), 2**63)
_INTEGER: Final = re.compile(r"[+-]?([0-9]+)")
_LONG_DIGITS: Final = re.compile(rb"[0-9]{19}")
# A lone surrogate cannot be encoded as UTF-8 (PostgreSQL would refuse the text); one C scan.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_WITH_BODY: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# ASGI as the specification has it (Litestar's own aliases type each message exactly).
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RefusedInputError(Exception):
    def __init__(
        self,
        detail: str,
        pointer: str,
        source: str,
        *,
        status: int = 400,
        slug: str = "unstorable-input",
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.pointer, self.source = status, slug, pointer, source


class EdgeGuardMiddleware:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int = BODY_BYTES) -> None:
        self._app = app
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        try:
            check_target(scope)
            if scope["method"] in _WITH_BODY:
                body = await _read(receive, self._max_body_bytes)
                if body:
                    check_body(body, _content_type(scope), forms=_takes_forms(scope))
                receive = _replay(body, receive)
        except RefusedInputError as refusal:
            await _refuse(send, refusal)
            return
        await self._app(scope, receive, send)


def check_target(scope: Scope) -> None:
    """The path, every query parameter and the read-your-writes header."""
    _check_text(str(scope["path"]), "path", "path")
    raw = bytes(scope.get("query_string", b"")).decode("latin-1")
    try:
        parameters = parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise RefusedInputError("the query string is not valid UTF-8", "query", "query") from None
    for name, value in parameters:
        _check_text(name, "a query parameter's name", name, source="query")
        _check_text(value, f"query parameter `{name}`", name, source="query")
        _check_integer(value, f"query parameter `{name}`", name, source="query")
    for segment in str(scope["path"]).split("/"):
        _check_integer(segment, "path", "path", source="path")
    for key, value in scope["headers"]:
        if key.decode("latin-1").lower() == MIN_POSITION.lower():
            position = natural(value.decode("latin-1"))
            if position is None or position not in INT64:
                raise RefusedInputError(
                    f"{MIN_POSITION} must be a log position (a non-negative 64-bit integer)",
                    MIN_POSITION,
                    "header",
                    slug="invalid-request",
                )


def _takes_forms(scope: Scope) -> bool:
    """The web console's pages post HTML forms; every other route takes JSON only."""
    path = str(scope["path"])
    return path == CONSOLE or path.startswith(f"{CONSOLE}/")


def check_form(body: bytes) -> None:
    """An HTML form (`application/x-www-form-urlencoded`) whose names and values are UTF-8 text
    without NUL characters; what they mean is the page's to check, field by field."""
    try:
        fields = parse_qsl(
            body.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict"
        )
    except UnicodeDecodeError:
        raise RefusedInputError("the form is not valid UTF-8", "", "body") from None
    for name, value in fields:
        _check_text(name, "a form field's name", name)
        _check_text(value, f"form field `{name}`", name)


def check_body(body: bytes, content_type: str, *, forms: bool = False) -> None:
    """A JSON body whose strings PostgreSQL can store, whose integers fit 64 bits, nested at
    most MAX_DEPTH levels (or, where `forms`, an HTML form). A body that is not JSON at all is
    left to the handler's decoder, which names where it breaks."""
    if forms and content_type.split(";")[0].strip().lower() == FORM:
        check_form(body)
        return
    if not _is_json(content_type):
        raise RefusedInputError(
            f"the body must be JSON (Content-Type: application/json), not {content_type or 'none'}",
            "",
            "header",
            status=415,
            slug="unsupported-media-type",
        )
    if _plainly_fine(body):
        return
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return
    except RecursionError:
        raise RefusedInputError(_too_deep(), "", "body") from None
    for pointer, value, depth in _walk(document):
        if depth > MAX_DEPTH:
            raise RefusedInputError(_too_deep(), pointer, "body")
        if isinstance(value, str):
            _check_text(value, pointer or "the body", pointer)
        elif isinstance(value, int) and not isinstance(value, bool) and value not in INT64:
            raise RefusedInputError(f"{pointer}: the number is out of range", pointer, "body")


def _plainly_fine(body: bytes) -> bool:
    """What most bodies are, told from their bytes in a few C-speed scans, without decoding:
    no escape that could be a NUL or a surrogate, no run of digits long enough to pass 64 bits,
    and too few brackets to nest past MAX_DEPTH. Anything else is decoded and walked."""
    return (
        b"\\u" not in body.replace(b"\\\\", b"")
        and b"\x00" not in body
        and _LONG_DIGITS.search(body) is None
        and body.count(b"{") + body.count(b"[") <= MAX_DEPTH
    )


def _walk(document: Any) -> Iterator[tuple[str, Any, int]]:
    """Every value and key of a decoded document, with its JSON pointer and depth; iterative, so
    no nesting can exhaust the stack."""
    stack: list[tuple[str, Any, int]] = [("", document, 0)]
    while stack:
        pointer, value, depth = stack.pop()
        yield pointer, value, depth
        if isinstance(value, dict):
            for key, item in value.items():
                child = f"{pointer}/{_escaped(key)}"
                yield child, key, depth + 1  # the key itself is text the store keeps
                stack.append((child, item, depth + 1))
        elif isinstance(value, list):
            stack.extend((f"{pointer}/{i}", item, depth + 1) for i, item in enumerate(value))


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _check_text(text: str, where: str, pointer: str, *, source: str = "body") -> None:
    if "\x00" in text:
        raise RefusedInputError(f"{where}: NUL characters are not allowed", pointer, source)
    if _SURROGATE.search(text) is not None:
        raise RefusedInputError(f"{where}: not valid UTF-8", pointer, source)


def _check_integer(text: str, where: str, pointer: str, *, source: str) -> None:
    """A number written out (an id, an offset, a cursor) that no 64-bit column could hold."""
    found = _INTEGER.fullmatch(text)
    if found and (len(found.group(1)) > 19 or int(text) not in INT64):
        raise RefusedInputError(f"{where}: the number is out of range", pointer, source)


def _too_deep() -> str:
    return f"the body nests deeper than {MAX_DEPTH} levels"


def _content_type(scope: Scope) -> str:
    for key, value in scope["headers"]:
        if key.decode("latin-1").lower() == "content-type":
            return str(value.decode("latin-1"))
    return ""


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def _read(receive: Receive, max_bytes: int) -> bytes:
    """The whole body, up to `max_bytes` (Litestar's own limit is the same): a larger one is
    refused before it is all in memory."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            raise RefusedInputError(
                f"the body is larger than {max_bytes} bytes",
                "",
                "body",
                status=413,
                slug="request-too-large",
            )
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, then: Receive) -> Receive:
    """The body read here, handed on as if it had not been read; then the client's own messages
    (a disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _refuse(send: Send, refusal: RefusedInputError) -> None:
    extra = {
        "errors": [{"pointer": refusal.pointer, "detail": str(refusal), "source": refusal.source}]
    }
    body = msgspec.json.encode(
        problem_body(
            refusal.status,
            slug=refusal.slug,
            detail=str(refusal),
            message=str(refusal),
            extra=extra,
        )
    )
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
