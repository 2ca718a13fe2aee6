"""The authenticated caller of a request, and what its events record about it."""

from typing import Any

from litestar import Request
from litestar.datastructures import State

from domain.events import ActorKind, EventMetadata
from infra.http.auth import Principal

Caller = Request[Principal, dict[str, Any], State]


def actor(caller: Caller) -> EventMetadata:
    """Who the events of this request are recorded as caused by (never a secret)."""
    kind: ActorKind = "user" if caller.user.kind == "user" else "application"
    request_id = caller.headers.get("x-request-id")
    return EventMetadata(actor_subject=caller.user.subject, actor_kind=kind, request_id=request_id)
