"""OpenTelemetry in the runtime, end to end: the official `mcp` client calls a tool of
`serve_http` (what ``toolgen serve --http`` runs) with a ``traceparent`` in the request's ``_meta``;
the SDK's in-memory exporter sees the ``tools/call <tool>`` server span in the client's trace with
the upstream client span under it, the loopback tickets API receives that same trace id in its
``traceparent`` header, and a secret planted in the arguments and in the API's answer appears in no
span attribute or event. Without an SDK nothing is injected into the upstream request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import pytest
from tests.support.http_serving import http_server
from tests.support.runtime_env import load_package
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials, telemetry
from toolgen.runtime.serving.mcp_http import load_token_file
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")
sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SECRET = "s3cr3t-planted-7e1d"


@pytest.fixture
def exporter() -> Iterator[Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry.use_tracer_provider(provider, MeterProvider(metric_readers=[reader]))
    spans.metrics = reader  # type: ignore[attr-defined]
    yield spans
    telemetry.use_tracer_provider(None, None)


def _registry(server: TicketsServer) -> Registry:
    policy, catalog = load_package("tickets")
    return Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


async def _call(
    server: TicketsServer, tmp_path: Any, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None
) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    tokens = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    registry = _registry(server)
    async with http_server(registry, verifier=tokens) as url:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS['writer'][0]}"}, timeout=30)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(name, arguments, meta=cast(Any, meta))
    registry.close()
    return result


def _everything(span: Any) -> str:
    """Every attribute and event of `span`, as text."""
    return json.dumps(
        {
            "name": span.name,
            "attributes": dict(span.attributes or {}),
            "events": [(e.name, dict(e.attributes or {})) for e in span.events],
        },
        default=str,
    )


@pytest.mark.anyio
async def test_the_call_joins_the_clients_trace_and_the_api_receives_it(
    server: TicketsServer, tmp_path: Any, exporter: Any
) -> None:
    server.state.tickets["T-102"]["subject"] = f"answer holds {SECRET}"
    result = await _call(
        server,
        tmp_path,
        "get_ticket",
        {"ticket_id": "T-102"},
        {"traceparent": TRACEPARENT, "tracestate": "vendor=1"},
    )
    assert result.is_error is False and SECRET in json.dumps(result.structured_content)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool, upstream = spans["tools/call get_ticket"], spans["GET"]
    assert f"{tool.context.trace_id:032x}" == TRACE_ID  # a child of the client's context
    assert upstream.parent is not None and upstream.parent.span_id == tool.context.span_id
    assert (
        tool.attributes["gen_ai.tool.name"] == "get_ticket"
        and tool.attributes["mcp.method.name"] == "tools/call"
    )
    assert upstream.attributes["http.response.status_code"] == 200
    sent = server.requests_for("GET", "/tickets/T-102")[-1].headers
    traceparent = {k.lower(): v for k, v in sent.items()}["traceparent"]
    assert (
        traceparent.split("-")[1] == TRACE_ID
        and traceparent.split("-")[2] == f"{upstream.context.span_id:016x}"
    )
    for span in exporter.get_finished_spans():
        text = _everything(span)
        assert SECRET not in text and "T-102" not in text and server.token not in text, text
    points = [
        p
        for m in exporter.metrics.get_metrics_data().resource_metrics
        for s in m.scope_metrics
        for metric in s.metrics
        if metric.name == "mcp.server.operation.duration"
        for p in metric.data.data_points
    ]
    assert points and points[0].attributes["gen_ai.tool.name"] == "get_ticket"


@pytest.mark.anyio
async def test_a_refused_call_is_a_tool_error_with_its_decision_and_no_argument(
    server: TicketsServer, tmp_path: Any, exporter: Any
) -> None:
    arguments = {"ticket_id": "T-102", "note": f"note {SECRET}", "visibility": "internal"}
    result = await _call(
        server,
        tmp_path,
        "record_ticket_followup",
        {"preview_id": SECRET, "action_id": "a-1"},
        {"traceparent": TRACEPARENT},
    )
    assert result.is_error is True
    [tool] = [s for s in exporter.get_finished_spans() if s.name == "tools/call record_ticket_followup"]
    assert tool.attributes["error.type"] == "tool_error"
    codes = [e.attributes["toolgen.error.code"] for e in tool.events if "toolgen.error.code" in e.attributes]
    assert codes and all(c.replace("_", "").isalpha() for c in codes)
    assert SECRET not in _everything(tool) and arguments["note"] not in _everything(tool)
    assert not [s for s in exporter.get_finished_spans() if s.name == "POST"]  # nothing was sent


@pytest.mark.anyio
async def test_without_an_sdk_nothing_is_injected(server: TicketsServer, tmp_path: Any) -> None:
    result = await _call(server, tmp_path, "get_ticket", {"ticket_id": "T-102"}, {"traceparent": TRACEPARENT})
    assert result.is_error is False
    sent = {k.lower() for k in server.requests_for("GET", "/tickets/T-102")[-1].headers}
    assert "traceparent" not in sent


def test_the_span_of_a_call_is_a_child_of_the_meta_trace_context(exporter: Any) -> None:
    """Outside any server (no context an SDK extracted before), `_meta`'s traceparent is the parent;
    a malformed one, or none, starts a new trace."""
    with telemetry.tool_call_span("get_ticket", {"traceparent": TRACEPARENT}) as span:
        assert f"{span.get_span_context().trace_id:032x}" == TRACE_ID
    for meta in ({"traceparent": "00-zz-yy-01"}, {"traceparent": 7}, None):
        with telemetry.tool_call_span("get_ticket", meta) as span:
            assert f"{span.get_span_context().trace_id:032x}" != TRACE_ID
    assert [s.name for s in exporter.get_finished_spans()] == ["tools/call get_ticket"] * 4


def test_export_is_asked_by_the_flag_or_the_standard_environment() -> None:
    assert telemetry.export_asked(True, {})
    assert telemetry.export_asked(False, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert telemetry.export_asked(False, {"OTEL_TRACES_EXPORTER": "otlp"})
    assert not telemetry.export_asked(False, {"OTEL_TRACES_EXPORTER": "none", "OTEL_SERVICE_NAME": "x"})
    assert not telemetry.export_asked(False, {})
