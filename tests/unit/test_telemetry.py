"""Trace context as events carry it, spans over batches, and JSON log records; no I/O."""

import json
import logging
import sys

import msgspec
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan

from domain.events import EventMetadata
from infra.http.audit_trail import request_id
from infra.serialization import decode_metadata, encode_metadata
from infra.telemetry import tracing
from infra.telemetry.log_records import REQUEST_ID, JsonFormatter
from infra.telemetry.meters import ApiMetrics

ONE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SAME_TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-b9c7c989f97918e1-01"
OTHER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
ACTOR = EventMetadata(actor_subject="app-1", actor_kind="application")


def test_metadata_without_a_trace_is_stored_byte_for_byte_as_before() -> None:
    """Its hash chain digests the stored bytes: events written before still verify."""
    assert encode_metadata(ACTOR) == '{"actorSubject":"app-1","actorKind":"application"}'
    old = decode_metadata('{"actorSubject":"app-1","actorKind":"application","requestId":"r"}')
    assert (old.traceparent, old.tracestate, old.request_id) == (None, None, "r")
    traced = msgspec.structs.replace(ACTOR, traceparent=ONE)
    assert decode_metadata(encode_metadata(traced)) == traced


def test_an_append_outside_any_span_records_no_trace() -> None:
    assert tracing.stamped(ACTOR) is ACTOR


def test_an_append_inside_a_passed_on_context_records_it() -> None:
    parent = tracing.parse(ONE, "congo=t61rcWkgMzE")
    assert parent is not None
    with tracing.span("not recorded", parents=[parent]) as span:
        assert span is None  # no tracer: nothing recorded, the context passed on all the same
        stamped = tracing.stamped(ACTOR)
    assert (stamped.traceparent, stamped.tracestate) == (ONE, "congo=t61rcWkgMzE")
    given = msgspec.structs.replace(ACTOR, traceparent=OTHER)
    token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    try:
        assert tracing.stamped(given) is given  # one set already is kept
    finally:
        otel_context.detach(token)


def test_a_malformed_traceparent_is_ignored() -> None:
    for bad in ("", "00-xyz", f"{ONE}-extra-", "00-" + "0" * 32 + "-00f067aa0ba902b7-01"):
        assert tracing.parse(bad) is None


def test_a_batch_of_one_trace_continues_it_and_one_of_several_links_them() -> None:
    one, same, other = (tracing.parse(t) for t in (ONE, SAME_TRACE, OTHER))
    assert tracing.parent_and_links([one, None, same, one]) == (one, [same])
    assert tracing.parent_and_links([one, other]) == (None, [one, other])
    assert tracing.parent_and_links([None, None]) == (None, [])


def test_recorded_spans_continue_or_link_and_name_only_an_errors_type() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        with tracing.span("one", parents=[tracing.parse(ONE), tracing.parse(SAME_TRACE)]):
            stamped = tracing.stamped(ACTOR)
        with tracing.span("several", parents=[tracing.parse(ONE), tracing.parse(OTHER)]):
            pass
        try:
            with tracing.span("fails"):
                raise ValueError("secret-ish detail")
        except ValueError:
            pass
    finally:
        tracing.use(None)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    one = spans["one"]
    assert f"{one.context.trace_id:032x}" == ONE[3:35]
    assert one.parent is not None
    assert f"{one.parent.span_id:016x}" == ONE[36:52]
    assert stamped.traceparent == tracing.traceparent_of(one.context)
    several = spans["several"]
    assert several.parent is None
    assert {f"{link.context.trace_id:032x}" for link in several.links} == {ONE[3:35], OTHER[3:35]}
    assert spans["fails"].status.description == "ValueError"
    assert spans["fails"].events == ()  # no exception event: its message stays out


def test_the_trace_is_read_from_stored_metadata_only_when_there() -> None:
    assert tracing.of_metadata('{"actorSubject":"a","actorKind":"user"}') == (None, None)
    traced = encode_metadata(msgspec.structs.replace(ACTOR, traceparent=ONE, tracestate="a=b"))
    assert tracing.of_metadata(traced) == (ONE, "a=b")


def test_a_json_record_names_its_trace_span_and_request() -> None:
    formatter = JsonFormatter("api")
    parent = tracing.parse(ONE)
    assert parent is not None
    token = REQUEST_ID.set("r-7")
    try:
        with tracing.span("request", parents=[parent]):
            record = logging.LogRecord("x", logging.INFO, __file__, 1, "did %s", ("it",), None)
            line = formatter.format(record)
    finally:
        REQUEST_ID.reset(token)
    entry = json.loads(line)
    assert entry["message"] == "did it"
    assert (entry["level"], entry["logger"], entry["process"]) == ("INFO", "x", "api")
    assert (entry["trace_id"], entry["span_id"], entry["request_id"]) == (
        ONE[3:35],
        ONE[36:52],
        "r-7",
    )
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "no", (), sys.exc_info())
    entry = json.loads(JsonFormatter().format(failed))
    assert "RuntimeError: boom" in entry["exception"]
    assert "\n" not in JsonFormatter().format(failed)
    assert {"trace_id", "request_id", "process"}.isdisjoint(entry)


def _id_for(given: str | None) -> str:
    headers = [] if given is None else [(b"x-request-id", given.encode())]
    scope: dict[str, object] = {"type": "http", "headers": headers}
    found = request_id(scope)
    assert request_id(scope) == found  # one id for the whole request
    return found


def test_a_request_id_is_the_callers_when_plain_else_a_new_one() -> None:
    assert _id_for("abc-123") == "abc-123"
    for odd in (None, "", "has space", "x" * 129, "tab\t"):
        made = _id_for(odd)
        assert len(made) == 36
        assert made != odd


def test_request_metrics_keep_their_labels_few() -> None:
    metrics = ApiMetrics()
    metrics.observe("/api/v1/x/{id}", "BREW", 418, 0.01)
    metrics.observe("/api/v1/x/{id}", "GET", 200, 0.01)
    labels = {s.labels["method"] for m in metrics.registry.collect() for s in m.samples
              if s.name == "trainplate_http_requests_total"}  # fmt: skip
    assert labels == {"OTHER", "GET"}


def test_spans_are_exported_only_when_an_otlp_endpoint_is_set() -> None:
    assert not tracing.configure("trainplate-api", {})
    assert not tracing.recording()
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}  # nothing is sent here
    try:
        assert tracing.configure("trainplate-api", endpoint)
        assert tracing.recording()
        provider = tracing._state.provider
        assert provider is not None
        assert provider.resource.attributes["service.name"] == "trainplate-api"
    finally:
        tracing.shutdown()  # no span was made: nothing is sent
    assert not tracing.recording()
