"""Runtime, OpenTelemetry traces and the duration metric of tool calls.

Input: a served tool call (its tool name, the MCP request's ``_meta``) and each upstream HTTP request
the runtime sends. Output: spans and one histogram through the OpenTelemetry API
(``opentelemetry-api``), which records nothing until the host installs an SDK (``pip install -e
".[otel]"`` and the standard ``OTEL_*`` environment, or a provider given to `use_tracer_provider`):

- one ``SERVER`` span per tool call, ``tools/call <tool>`` (OpenTelemetry's MCP conventions:
  ``mcp.method.name``, ``gen_ai.tool.name``, ``gen_ai.operation.name: execute_tool``), a child of
  the ``traceparent`` / ``tracestate`` the client sent in the request's ``_meta`` (MCP 2026-07-28);
  a refused or failed call sets ``error.type: tool_error`` and the error status, and its decision is
  an event (``toolgen.decision``: the error code, the idempotency outcome ``replayed``, ``unknown``
  when a write's outcome is not known);
- one ``CLIENT`` span per upstream request (``<METHOD>``: ``http.request.method``,
  ``server.address``, ``server.port``, ``url.scheme``, ``http.response.status_code``) whose context is
  sent to the API in the ``traceparent`` header (W3C Trace Context);
- the histogram ``mcp.server.operation.duration`` (seconds) per tool call.

No attribute or event holds an argument value, a credential, a URL's path or query (they carry
arguments) or an answer's body: only the tool's name, fixed codes, the HTTP method, host, port and
status.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .clock import SYSTEM

INSTRUMENTATION = "toolgen.runtime"
#: the members of an MCP request's ``_meta`` that carry the caller's trace context
TRACE_META_KEYS = ("traceparent", "tracestate")

_provider: Any = None
_meter_provider: Any = None


def use_tracer_provider(provider: Any = None, meter_provider: Any = None) -> None:
    """Record with `provider` (an SDK ``TracerProvider``) and `meter_provider` instead of the global
    ones (None: the global providers, a no-op until an SDK sets them)."""
    global _provider, _meter_provider
    _provider, _meter_provider = provider, meter_provider


#: the standard environment variables that ask for export (OpenTelemetry's SDK configuration)
EXPORT_ENVIRONMENT = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)


def export_asked(flag: bool, environ: Mapping[str, str]) -> bool:
    """Whether to install the SDK: `flag` (``toolgen serve --otel``), or one of `EXPORT_ENVIRONMENT`
    set to something other than ``none``."""
    return flag or any(environ.get(k, "none").strip().lower() not in ("", "none") for k in EXPORT_ENVIRONMENT)


def install_sdk() -> None:
    """Install OpenTelemetry's SDK as the global tracer and meter providers, exporting over OTLP/HTTP
    where the standard ``OTEL_*`` environment says (the SDK's defaults: ``http://localhost:4318``,
    service name from ``OTEL_SERVICE_NAME``, else ``toolgen``). Raises ImportError when the ``otel``
    extra (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``) is not installed."""
    from opentelemetry import metrics
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "toolgen"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(
        MeterProvider(resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
    )


def _tracer() -> trace.Tracer:
    return trace.get_tracer(INSTRUMENTATION, tracer_provider=_provider)


def _duration() -> Any:
    from opentelemetry import metrics  # 15 ms to import: paid by the first served call, not by every process

    meter = metrics.get_meter(INSTRUMENTATION, meter_provider=_meter_provider)
    return meter.create_histogram(
        "mcp.server.operation.duration", unit="s", description="Duration of MCP requests the server handled"
    )


@contextmanager
def tool_call_span(tool: str, meta: Mapping[str, Any] | None) -> Iterator[Span]:
    """The span of one served tool call, a child of the trace context in `meta` (the request's
    ``_meta``; ignored unless its ``traceparent`` is a string). Records the duration metric."""
    carrier = {k: v for k in TRACE_META_KEYS if isinstance(v := (meta or {}).get(k), str)}
    parent = propagate.extract(carrier) if "traceparent" in carrier else None
    attributes = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": tool,
        "gen_ai.operation.name": "execute_tool",
    }
    started = SYSTEM.monotonic()
    with _tracer().start_as_current_span(
        f"tools/call {tool}", context=parent, kind=SpanKind.SERVER, attributes=attributes
    ) as span:
        try:
            yield span
        finally:
            failed = {"error.type": "tool_error"} if span.is_recording() and _failed(span) else {}
            _duration().record(
                SYSTEM.monotonic() - started,
                {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, **failed},
            )


def _failed(span: Span) -> bool:
    status = getattr(span, "status", None)
    return status is not None and status.status_code == StatusCode.ERROR


def record_outcome(
    span: Span, code: str | None, *, replayed: bool = False, result_known: bool = True
) -> None:
    """The call's decision on its span: an error `code` (a fixed vocabulary, never a value) sets
    ``error.type: tool_error`` and the error status; `replayed` (an idempotency receipt answered) and
    an unknown outcome are events."""
    if replayed:
        span.add_event("toolgen.decision", {"toolgen.idempotency": "replayed"})
    if not result_known:
        span.add_event("toolgen.decision", {"toolgen.idempotency": "unknown"})
    if code is not None:
        span.add_event("toolgen.decision", {"toolgen.error.code": code})
        span.set_attribute("error.type", "tool_error")
        span.set_status(Status(StatusCode.ERROR))


@contextmanager
def upstream_span(request: Any) -> Iterator[Span]:
    """The client span of one upstream HTTP request (an ``httpx.Request``), its context injected into
    the request's headers as ``traceparent`` (nothing is injected while no SDK records)."""
    url = request.url
    attributes = {"http.request.method": request.method, "server.address": url.host, "url.scheme": url.scheme}
    if url.port is not None:
        attributes["server.port"] = url.port
    with _tracer().start_as_current_span(request.method, kind=SpanKind.CLIENT, attributes=attributes) as span:
        if span.is_recording():
            propagate.inject(request.headers)
        yield span


def record_status(span: Span, status: int, kind: str | None) -> None:
    """An upstream answer's status code, or the failure `kind` (``connect``, ``timeout``...) as
    ``error.type``."""
    if status:
        span.set_attribute("http.response.status_code", status)
    if kind is not None or status >= 500:
        span.set_attribute("error.type", kind or str(status))
        span.set_status(Status(StatusCode.ERROR))
