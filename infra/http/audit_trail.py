"""The audit log's entries that are no event (docs/decisions/0031-audit-log.md): every sign-in
and sign-out (its route names the action in `opt`), and every write refused to a caller who
authenticated, kept as its answer starts. Each write is given a request id, sent back too."""

import asyncio
import contextvars
import ipaddress
import logging
import re
from collections.abc import MutableMapping
from typing import Any, Final
from uuid import uuid4

from litestar.types import Scope as LitestarScope

from infra.http.auth import Principal
from infra.http.consistency import READS
from infra.http.edge import ASGIApp, Message, Receive, Scope, Send
from infra.http.headers import header
from services.ports.audit_records import AuditRecord, AuditTrail

log = logging.getLogger(__name__)

AUDITED: Final = "trainplate_audited"  # a route's `opt`: the action its requests are
SUBJECT: Final = "trainplate_audit_subject"  # the request's state: whom a sign-in named
REQUEST_ID: Final = "trainplate_request_id"  # the request's state: its id
WRITES: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# A client's own X-Request-Id is kept when it is plain enough to quote; else the service's.
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_LONGEST_SUBJECT: Final = 256
_UUID: Final = "[0-9a-fA-F-]{36}"
# The thing a write's path names, by kind, with its id where the path holds one.
_ENTITIES: Final = tuple(
    (re.compile(rf"{pattern}(?=/|$)"), kind)
    for pattern, kind in (
        (rf"/api/v1/workload-templates(?:/distributed)?(?:/(?P<id>{_UUID}))?", "template"),
        (r"/api/v1/trainplate/template-plans", "template"),
        (rf"/api/v1/workloads(?:/distributed)?(?:/(?P<id>{_UUID}))?", "workload"),
        (rf"/api/v1/asset/environment(?:/(?P<id>{_UUID}))?", "environment"),
        (rf"/api/v1/asset/compute(?:/(?P<id>{_UUID}))?", "compute"),
        (rf"/api/v1/asset/datasource/[^/]+(?:/(?P<id>{_UUID}))?", "datasource"),
        (rf"/api/v1/asset/credentials/[^/]+(?:/(?P<id>{_UUID}))?", "credential"),
        (rf"/api/v1/asset/registries(?:/(?P<id>{_UUID}))?", "registry"),
        (rf"/api/v1/datavolumes(?:/(?P<id>{_UUID}))?", "datavolume"),
        (rf"/api/v1/clusters(?:/(?P<id>{_UUID}))?", "cluster"),
        (r"/api/v1/org-unit/departments(?:/(?P<id>[^/]+))?", "department"),
        (r"/api/v1/org-unit/projects(?:/(?P<id>[^/]+))?", "project"),
        (r"/api/v1/authorization/access-rules(?:/(?P<id>[^/]+))?", "access-rule"),
        (rf"/api/v1/(?:service-accounts|apps)(?:/(?P<id>{_UUID}))?", "application"),
        (r"/api/v2/policy", "policy"),
        (r"/v1/k8s/setting", "setting"),
        (r"/console/templates/[^/]+/workloads", "workload"),
        (rf"/console/templates(?:/(?P<id>{_UUID}))?", "template"),
        (rf"/console/workloads(?:/(?P<id>{_UUID}))?", "workload"),
        (rf"/console/environments(?:/(?P<id>{_UUID}))?", "environment"),
        (rf"/console/compute-resources(?:/(?P<id>{_UUID}))?", "compute"),
        (rf"/console/data-sources/[^/]+(?:/(?P<id>{_UUID}))?", "datasource"),
        (rf"/console/clusters(?:/(?P<id>{_UUID}))?", "cluster"),
        (r"/console/projects(?:/(?P<id>[^/]+))?", "project"),
        (r"/console/settings", "setting"),
    )
)


def request_id(scope: Scope | LitestarScope) -> str:
    """The request's id: the client's `X-Request-Id` when plain, else one made for it."""
    state: MutableMapping[str, Any] = scope.setdefault("state", {})
    found = state.get(REQUEST_ID)
    if not isinstance(found, str):
        given = header(scope.get("headers", ()), b"x-request-id")
        found = given if given is not None and _PLAIN_ID.fullmatch(given) else str(uuid4())
        state[REQUEST_ID] = found
    return found


def note_subject(scope: Scope | LitestarScope, client_id: str, subject_id: str | None) -> None:
    """Whom a sign-in (or sign-out) named: the client id given, and the application's id once
    known."""
    scope.setdefault("state", {})[SUBJECT] = (client_id[:_LONGEST_SUBJECT], subject_id)


def entity_of(method: str, path: str) -> tuple[str, str, str]:
    """The action a write asks for and the kind and id of the thing its path names ('' for
    what it does not say): a POST to a thing that exists (a secret, a suspend) updates it."""
    kind, entity_id = "", ""
    for pattern, named in _ENTITIES:
        if (found := pattern.match(path)) is not None:
            kind, entity_id = named, found.groupdict().get("id") or ""
            break
    if method == "DELETE" or path.endswith("/delete"):
        action = "delete"
    elif method in ("PUT", "PATCH") or entity_id:
        action = "update"
    else:
        action = "create"
    return action, kind, entity_id


def source_of(scope: Scope) -> tuple[str, dict[str, str]]:
    """The client's IPv4 address (Run:ai's `source_ip`); another address goes to the metadata."""
    client = scope.get("client")
    try:
        address = ipaddress.ip_address(client[0]) if client else None
    except ValueError:
        return "", {}
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if isinstance(address, ipaddress.IPv4Address):
        return str(address), {}
    return "", {} if address is None else {"sourceAddress": str(address)}


def record_of(scope: Scope, status: int) -> AuditRecord | None:
    """The record a request's answer makes, if any: a sign-in or sign-out that named someone,
    or a write (not a question asked by POST) refused to a caller who authenticated."""
    handler = scope.get("route_handler")
    opt = getattr(handler, "opt", {}) or {}
    method, path = str(scope.get("method", "")), str(scope.get("path", ""))
    source, extra = source_of(scope)
    common: dict[str, Any] = {
        "id": uuid4(),
        "result": "Succeeded" if status < 400 else "Failed",
        "source_ip": source,
        "http_method": method,
        "url": path,
        "http_status_code": status,
        "request_id": request_id(scope),
    }
    audited = opt.get(AUDITED)
    if isinstance(audited, str):
        noted = scope.get("state", {}).get(SUBJECT)
        if noted is None:
            return None
        client_id, subject_id = noted
        ids = {} if subject_id is None else {"subjectId": subject_id}
        return AuditRecord(
            subject=client_id, subject_type="App", action=audited, metadata={**extra, **ids},
            **common,
        )  # fmt: skip
    user = scope.get("user")
    if status < 400 or method not in WRITES or opt.get(READS) or not isinstance(user, Principal):
        return None
    action, kind, entity_id = entity_of(method, path)
    by_user = user.kind == "user"
    subject = user.subject if by_user or not user.client_id else user.client_id
    ids = {} if subject == user.subject else {"subjectId": user.subject}
    return AuditRecord(
        subject=subject, subject_type="User" if by_user else "App", action=action,
        entity_type=kind, entity_id=entity_id, metadata={**extra, **ids}, **common,
    )  # fmt: skip


class AuditTrailMiddleware:
    """Between the edge's guard and authentication: it sees a write's final answer and, by
    then, who asked. A record that cannot be kept (the database away) is logged, and the
    answer goes out as it was."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = scope.get("route_handler")
        audited = getattr(handler, "opt", {}).get(AUDITED) is not None
        if scope["type"] != "http" or (scope["method"] not in WRITES and not audited):
            await self._app(scope, receive, send)
            return

        # (infra/http/observed_requests.py answers every request's X-Request-Id)
        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                await _keep(scope, record_of(scope, int(message["status"])))
            await send(message)

        await self._app(scope, receive, answer)


async def _keep(scope: Scope, record: AuditRecord | None) -> None:
    records: AuditTrail | None = getattr(scope["app"].state, "audit_records", None)
    if record is None or records is None:
        return
    # In a context of its own: past the request's connection gate (its caller's standing).
    task = asyncio.create_task(records.append(record), context=contextvars.Context())
    try:
        await task
    except Exception:  # any failure: the answer is sent regardless
        log.warning("an audit record was not kept: %s %s", record.action, record.url, exc_info=True)
