"""Around the whole application: each request gets an id (its `X-Request-Id`, else a new one,
answered in the same header), a server span continuing an incoming `traceparent`, and its count
and time by route template, method and status (infra/telemetry/meters.py)."""

import time
from typing import Final

from opentelemetry.trace import SpanKind, Status, StatusCode

from infra.http import audit_trail
from infra.http.edge import ASGIApp, Message, Receive, Scope, Send
from infra.http.headers import header
from infra.telemetry import tracing
from infra.telemetry.log_records import REQUEST_ID
from infra.telemetry.meters import UNMATCHED, ApiMetrics

REQUEST_ID_HEADER: Final = b"x-request-id"


class ObservedRequests:
    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self._app = app
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        raw = scope["headers"]
        request_id = audit_trail.request_id(scope)  # one id: the events', the logs', the answer's
        incoming = header(raw, b"traceparent")
        parent = tracing.parse(incoming, header(raw, b"tracestate")) if incoming else None
        method = str(scope["method"])
        status = 500  # until an answer starts: what an escaping exception amounts to

        async def answering(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers") or [])
                if not any(key.lower() == REQUEST_ID_HEADER for key, _ in headers):
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
