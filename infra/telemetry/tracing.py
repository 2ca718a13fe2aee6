"""Traces. Spans are recorded and exported over OTLP only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
its traces variant) is set; otherwise a span costs one check, and a context that came with a
request or an event is still passed on (so events carry it). Why so: docs/decisions/0033."""

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

import msgspec
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from domain.events import EventMetadata

TRACER_NAME: Final = "trainplate"
MAX_LINKS: Final = 128  # a batch links at most this many contexts
ENDPOINTS: Final = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_PROPAGATOR: Final = TraceContextTextMapPropagator()

Attributes = Mapping[str, AttributeValue]


class _State:
    provider: TracerProvider | None = None
    tracer: trace.Tracer = trace.NoOpTracer()


_state = _State()


class TracingUnavailableError(Exception):
    def __init__(self) -> None:
        super().__init__(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OTLP exporter is not installed:"
            " pip install 'trainplate[otlp]', or unset the variable"
        )


def configure(service: str, env: Mapping[str, str]) -> bool:
    """Export this process's spans over OTLP (HTTP/protobuf) when an endpoint is set; the
    exporter reads the other OTEL_* variables itself. Returns whether spans are recorded."""
    if not any(env.get(name) for name in ENDPOINTS):
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as error:
        raise TracingUnavailableError() from error
    named = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": service}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    use(provider)
    return True


def use(provider: TracerProvider | None) -> None:
    """Record spans with `provider` (None: stop recording). Tests hand in an in-memory one."""
    _state.provider = provider
    _state.tracer = trace.NoOpTracer() if provider is None else provider.get_tracer(TRACER_NAME)


def shutdown() -> None:
    """Send what is still buffered; called as a process ends."""
    if _state.provider is not None:
        _state.provider.shutdown()
        use(None)


def recording() -> bool:
    return _state.provider is not None


def parse(traceparent: str | None, tracestate: str | None = None) -> SpanContext | None:
    """The span context a W3C `traceparent` (and `tracestate`) names, or None if it is absent
    or malformed (a bad header is ignored, never an error)."""
    if not traceparent:
        return None
    carrier = {"traceparent": traceparent}
    if tracestate:
        carrier["tracestate"] = tracestate
    found = trace.get_current_span(_PROPAGATOR.extract(carrier)).get_span_context()
    return found if found.is_valid else None


def traceparent_of(found: SpanContext) -> str:
    return f"00-{found.trace_id:032x}-{found.span_id:016x}-{int(found.trace_flags):02x}"


def current() -> SpanContext | None:
    """The context of the current span (a recorded one, or one passed on), if any."""
    found = trace.get_current_span().get_span_context()
    return found if found.is_valid else None


def stamped(metadata: EventMetadata) -> EventMetadata:
    """`metadata` with the current span's context, as text, unless it has one already."""
    if metadata.traceparent is not None:
        return metadata
    found = trace.get_current_span().get_span_context()
    if not found.is_valid:
        return metadata
    state = found.trace_state.to_header() or None
    return msgspec.structs.replace(metadata, traceparent=traceparent_of(found), tracestate=state)


class _Traced(msgspec.Struct):
    traceparent: str | None = None
    tracestate: str | None = None


_traced_decoder: Final = msgspec.json.Decoder(_Traced)


def of_metadata(metadata: str) -> tuple[str | None, str | None]:
    """The trace context stored in an event's metadata JSON (None, None when it has none)."""
    if '"traceparent"' not in metadata:  # most events of an untraced service: no decode
        return None, None
    found = _traced_decoder.decode(metadata)
    return found.traceparent, found.tracestate


def of_event(metadata: EventMetadata) -> SpanContext | None:
    return parse(metadata.traceparent, metadata.tracestate)


def parent_and_links(
    contexts: Iterable[SpanContext | None],
) -> tuple[SpanContext | None, list[SpanContext]]:
    """What a span over a batch continues, and what it links: the batch's one trace when all
    its contexts are of one (linking its other spans), else a new trace linking each."""
    seen: dict[tuple[int, int], SpanContext] = {}
    for found in contexts:
        if found is not None:
            seen.setdefault((found.trace_id, found.span_id), found)
    found_all = list(seen.values())
    if not found_all:
        return None, []
    if len({found.trace_id for found in found_all}) == 1:
        return found_all[0], found_all[1:MAX_LINKS]
    return None, found_all[:MAX_LINKS]


@contextlib.contextmanager
def span(
    name: str,
    *,
    parents: Sequence[SpanContext | None] = (),
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Attributes | None = None,
) -> Iterator[trace.Span | None]:
    """A span continuing `parents` (or linking them: `parent_and_links`), or the current span
    when none is given. Not recording: no span, but the one parent is made current, so appends
    inside still record its context. An exception sets the status to its type's name only."""
    parent, links = parent_and_links(parents) if parents else (None, [])
    if _state.provider is None:
        if parent is None:
            yield None
            return
        token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
        try:
            yield None
        finally:
            otel_context.detach(token)
        return
    within: otel_context.Context | None
    if parent is not None:
        within = trace.set_span_in_context(NonRecordingSpan(parent))
    else:
        # A batch of several traces starts its own; with no parents at all, the current one.
        within = otel_context.Context() if parents and links else None
    with _state.tracer.start_as_current_span(
        name,
        context=within,
        kind=kind,
        attributes=attributes,
        links=[Link(found) for found in links],
        record_exception=False,  # an exception's message may quote what it was given
        set_status_on_exception=False,
    ) as started:
        try:
            yield started
        except Exception as error:
            started.set_status(Status(StatusCode.ERROR, type(error).__name__))
            raise
