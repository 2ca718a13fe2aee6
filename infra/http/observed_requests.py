"""Around the whole application: each request gets an id (its `X-Request-Id`, else a new one,
answered in the same header), a server span continuing an incoming `traceparent`, and its count
and time by route template, method and status (infra/telemetry/meters.py)."""

import re
import time
import uuid
from typing import Final

from opentelemetry.trace import SpanKind, Status, StatusCode

from infra.http.edge import ASGIApp, Message, Receive, Scope, Send
from infra.http.headers import header
from infra.telemetry import tracing
from infra.telemetry.log_records import REQUEST_ID
from infra.telemetry.meters import UNMATCHED, ApiMetrics

REQUEST_ID_HEADER: Final = b"x-request-id"
_GIVEN_ID: Final = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")


def request_id_of(given: str | None) -> str:
    """The caller's request id when it is short, plain text; else a new one."""
    if given is not None and _GIVEN_ID.fullmatch(given):
        return given
    return uuid.uuid4().hex


class ObservedRequests:
    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self._app = app
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        raw = scope["headers"]
        request_id = request_id_of(header(raw, REQUEST_ID_HEADER))
        incoming = header(raw, b"traceparent")
        parent = tracing.parse(incoming, header(raw, b"tracestate")) if incoming else None
        method = str(scope["method"])
        status = 500  # until an answer starts: what an escaping exception amounts to

        async def answering(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers") or [])
                headers.append((REQUEST_ID_HEADER, request_id.encode()))
                message["headers"] = headers
            await send(message)

        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        try:
            with tracing.span(
                method,
                parents=[parent] if parent else (),
                kind=SpanKind.SERVER,
                attributes={"http.request.method": method},
            ) as span:
                try:
                    await self._app(scope, receive, answering)
                finally:
                    if span is not None:
                        route = scope.get("path_template") or UNMATCHED
                        span.update_name(f"{method} {route}")
                        span.set_attribute("http.route", route)
                        span.set_attribute("http.response.status_code", status)
                        if status >= 500:
                            span.set_status(Status(StatusCode.ERROR))
        finally:
            REQUEST_ID.reset(token)
            route = scope.get("path_template") or UNMATCHED
            self._metrics.observe(route, method, status, time.perf_counter() - started)
