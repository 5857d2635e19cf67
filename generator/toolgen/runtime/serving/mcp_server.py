"""`toolgen serve`: expose a generated package as an MCP server over stdio.

Built on the official MCP Python SDK's low-level `Server` (which speaks MCP 2026-07-28 and still
serves 2025-11-25 clients through its handshake), with explicit ``tools/list`` and ``tools/call``
handlers so the catalog is exactly ``mcp.json`` (inputSchema, outputSchema,
annotations) and results are exactly what the runtime returns:

- success: ``structuredContent`` = the shaped result, plus the same JSON as one text block;
  ``_meta["toolgen/replayed"]`` is true when an idempotency receipt was replayed, and
  ``_meta["toolgen/request"]`` is the redacted request a record tool executing a stored preview sent
  (method, URL, headers, body: what its preview showed and the approval covers). A success result
  always conforms to the tool's ``outputSchema`` (MCP 2025-11-25, "Output Schema": servers MUST
  provide structured results that conform; clients reject others). A result that does not (the API
  drifted from its spec, in ``warn`` output mode) is sent as a tool error ``output_invalid`` that
  still says what is known: ``result_known`` (the call itself succeeded), the idempotency key of its
  completed receipt, the mismatch, and the result as text;
- tool failure (validation, policy, timeout, upstream...): ``isError: true`` with the structured error
  ``{"error": {...}}`` as the one text block (JSON) — the model sees it and can correct itself. An
  error result carries no ``structuredContent``: it would have to conform to the tool's
  ``outputSchema``, which describes results, not errors (clients validate it);
  an ``approval_required`` of a record tool executing a stored preview names the request to approve
  in ``error.details.request`` (and the ``preview_id`` in ``error.details.preview_id``); a
  ``rate_limited`` error (a tool's limit, `toolgen.runtime.pipeline.rate_limits`) carries HTTP 429's
  meaning where MCP has no status: ``_meta["toolgen/status"]`` 429 and ``_meta["toolgen/retry_after"]``
  (seconds, as ``error.details.retry_after``; null when the call can never fit);
- protocol failure (unknown tool): a JSON-RPC error (``-32602`` invalid params) whose message
  shows the name as an audit event records it (`audit.audit_text`: at most `UNKNOWN_TOOL_SHOWN`
  characters, unsafe ones escaped, a longer or changed name's length and SHA-256 appended) and whose
  ``data`` is ``{"code": "unknown_tool", "tool": <that text>}``.

Tools by identity (`toolgen.runtime.identity`): ``tools/list`` holds only the tools the caller's
scopes allow (MCP 2026-07-28: the list MAY vary with the authorization presented), so it is sent with
``cacheScope: "private"``. A listed-or-not tool called by name that the caller may not use is refused
with ``permission_denied`` before its arguments are looked at (`Registry.refuse_hidden`). Over stdio
the caller is one actor fixed when the server starts (``--scopes``/``--actor``): a client cannot
raise its own permissions; over Streamable HTTP (`toolgen.runtime.serving.mcp_http`) it is the verified
bearer token's actor, per request.

Deferred loading: rows with ``loading: deferred`` are not listed; the ``search_tools`` meta-tool
(`toolgen.runtime.serving.search_tools`) is listed instead and returns their full definitions, and every
tool stays callable by name. The meta-tool is served when the package has a deferred row
(``search_tool=None``), always (``True``) or never (``False``). Approvals travel in the request's ``_meta``:
``{"toolgen/approval": "<preview_id>"}`` or
``{"toolgen/approval": {"preview_id": ..., "approved_by": ..., "approval_id": ...}}`` (with a
registry in ``approvals="issued"`` mode only an issued ``approval_id`` is accepted: ``{"preview_id": ...,
"approval_id": ...}``, see `Registry.issue_approval`)
— set by the host application after a human approved the preview, never by the model (which only
writes ``arguments``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

import anyio
import jsonschema_rs

from ...pointer import join_pointer
from ..audit import audit_text
from ..call.response_body import mismatch_text
from ..errors import make_error
from ..telemetry import record_outcome, tool_call_span
from .elicit import approval_from_answer, approval_input_required, request_state_security, speaks_mrtr
from .registry import Actor, Approval, CallResult, Registry
from .search_tools import SEARCH_TOOL_NAME, ToolSearch, has_deferred, search_tool_entry

APPROVAL_META_KEY = "toolgen/approval"
#: MCP 2026-07-28 list results carry freshness hints: the catalog is fixed while the server runs, so
#: a client may cache it for an hour; a list cut down to one caller's scopes is ``private`` (reused
#: only within the authorization context that produced it), the whole catalog ``public``.
LIST_TTL_MS = 3_600_000
LIST_CACHE_SCOPE = "public"
LIST_CACHE_SCOPE_PER_CALLER = "private"
REPLAYED_META_KEY = "toolgen/replayed"
REQUEST_META_KEY = "toolgen/request"


#: Most characters of an unknown tool's name shown in the JSON-RPC error (the caller typed it: a
#: name of any length would otherwise come back whole).
UNKNOWN_TOOL_SHOWN = 80


#: Longest ``preview_id``, ``approval_id`` or ``approved_by`` of an approval in ``_meta`` (an
#: ``approval_id`` becomes a receipt key kept for good, ``approved_by`` goes to every audit event).
MAX_APPROVAL_TEXT = 255


def _approval_text(value: Any) -> str | None:
    """A short text of an approval (a string, or a number as text), else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = value if isinstance(value, str) else str(value)
    return text if 0 < len(text) <= MAX_APPROVAL_TEXT else None


def _approval_from_meta(meta: Any) -> Approval | None:
    """The approval in a request's ``_meta`` (`APPROVAL_META_KEY`), or None: absent, or not a
    preview_id string / ``{preview_id, approved_by?, approval_id?}`` object of texts of at most
    `MAX_APPROVAL_TEXT` characters (the call is then refused ``approval_required``)."""
    if not meta:
        return None
    value = meta.get(APPROVAL_META_KEY) if isinstance(meta, dict) else None
    if isinstance(value, str):
        return Approval(value) if _approval_text(value) is not None else None
    if isinstance(value, dict) and isinstance(value.get("preview_id"), str):
        texts = {k: _approval_text(value.get(k)) for k in ("preview_id", "approved_by", "approval_id")}
        if any(
            texts[k] is None
            for k in ("preview_id", "approved_by", "approval_id")
            if k == "preview_id" or value.get(k) is not None
        ):
            return None
        return Approval(
            str(texts["preview_id"]), approved_by=texts["approved_by"], approval_id=texts["approval_id"]
        )
    return None


def _drift_error(result: CallResult, problems: list[str]) -> CallResult:
    """A successful call whose result breaks the tool's output schema, as a structured error that
    keeps everything known about the call."""
    error = make_error(
        "output_invalid",
        f"{result.tool} succeeded, but the API's answer does not match the tool's output schema: "
        + "; ".join(dict.fromkeys(problems))[:1200],
        details={
            "call_succeeded": True,
            "status": result.status,
            "replayed": result.replayed,
            "idempotency_key": result.idempotency_key,
            "receipt_state": "completed" if result.idempotency_key is not None else None,
            "problems": problems[:5],
            "next_cursor": result.result.get("next_cursor") if isinstance(result.result, dict) else None,
            "result_text": json.dumps(result.result, ensure_ascii=False)[:4000],
        },
        result_known=True,
        next_step="The action is done (do not repeat it); report the schema drift to an operator.",
    )
    return CallResult(
        result.tool,
        False,
        error=error,
        fingerprint=result.fingerprint,
        status=result.status,
        attempts=result.attempts,
        call_id=result.call_id,
        idempotency_key=result.idempotency_key,
    )


def conforming(registry: Registry, result: CallResult) -> CallResult:
    """`result`, or the `_drift_error` for it when a success does not conform to the tool's
    ``outputSchema`` (checked here whatever the output mode, with the registry's validator)."""
    if not result.ok:
        return result
    spec = registry.specs.get(result.tool)
    validator = None
    if spec is not None and spec.output_schema:
        validator = spec.output_validator or jsonschema_rs.Draft202012Validator(
            spec.output_schema, validate_formats=True
        )
    problems = list(result.warnings)
    if validator is not None and not validator.is_valid(result.result):
        problems.extend(
            mismatch_text(
                join_pointer("", *e.instance_path),
                str(e.message)[:200],
                e.instance,
                getattr(e.kind, "types", None),
            )
            for e in list(validator.iter_errors(result.result))[:3]
        )
    if not isinstance(result.result, dict):
        problems.append("the result is not a JSON object")
    return _drift_error(result, problems) if problems else result


def to_call_tool_result(result: CallResult) -> Any:
    """A runtime `CallResult` as an MCP ``CallToolResult``."""
    import mcp_types as types

    if result.ok:
        payload: Any = result.result
        meta: dict[str, Any] | None = {REPLAYED_META_KEY: True} if result.replayed else None
        if result.request is not None:
            meta = {**(meta or {}), REQUEST_META_KEY: result.request}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structured_content=payload,
            is_error=False,
            _meta=meta,
        )
    assert result.error is not None
    payload = result.error.to_json()
    # no structuredContent: a tool's outputSchema describes its results, not its errors (MCP
    # 2025-11-25 "Output Schema": structured results MUST conform), and clients validate
    # structuredContent against it; the MCP SDK's own servers send errors as text only
    limited = (
        {"toolgen/status": 429, "toolgen/retry_after": result.error.details.get("retry_after")}
        if result.error.code == "rate_limited"
        else None
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        is_error=True,
        _meta=limited,
    )


def list_tools_result(registry: Registry, actor: Actor | None = None, *, search_tool: bool = False) -> Any:
    """The ``tools/list`` result, in a deterministic order (by name, MCP 2026-07-28 "SHOULD return
    tools in a deterministic order") with ``ttlMs``/``cacheScope`` (sent to 2026-07-28 clients; the
    SDK leaves them out for 2025-11-25 ones).

    Without `actor`: every tool of the catalog, ``cacheScope: "public"``. With `actor`: the tools
    its scopes allow that are not deferred (`Registry.visible_catalog`), plus the ``search_tools``
    meta-tool when `search_tool` (`search_tool_entry`: the kernel's entry, as in ``search.json``),
    ``cacheScope: "private"`` (the list depends on who asks)."""
    import mcp_types as types

    if actor is None:
        entries = registry.catalog()
        scope = LIST_CACHE_SCOPE
    else:
        entries = registry.visible_catalog(actor, deferred=False)
        scope = LIST_CACHE_SCOPE_PER_CALLER
    if search_tool:
        entries = [*entries, search_tool_entry(registry)]
    tools = sorted((types.Tool.model_validate(entry) for entry in entries), key=lambda t: t.name)
    return types.ListToolsResult(tools=tools, ttl_ms=LIST_TTL_MS, cache_scope=scope)


#: The JSON Schema keyword by which a tool's input property asks MCP 2026-07-28 clients to mirror its
#: value into an ``Mcp-Param-*`` request header (which the SDK's HTTP transport then checks).
MCP_HEADER_KEYWORD = "x-mcp-header"


def declares_param_headers(schema: Any) -> bool:
    """True when `schema` holds an ``x-mcp-header`` key at any depth (a superset of the positions the
    MCP SDK validates, so a False is certain: no ``Mcp-Param-*`` header can be checked against it)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if MCP_HEADER_KEYWORD in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


#: For a catalog that declares no ``x-mcp-header``: no tool has a schema a header is checked against
#: (its ``.get`` is the SDK's ``get_tool_input_schema``, None for every name).
_NO_HEADER_SCHEMAS: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


ActorResolver = Callable[[Any], Actor]
"""Who is calling, from the SDK's per-request context (`mcp.server.context.ServerRequestContext`)."""


def build_server(
    registry: Registry,
    actor: Actor | None = None,
    *,
    actor_for: ActorResolver | None = None,
    search_tool: bool | None = None,
    elicit: bool = False,
) -> Any:
    """An `mcp.server.lowlevel.Server` serving `registry`'s tools to `actor` (a fixed caller, as over
    stdio) or to `actor_for(ctx)` (per request, as over HTTP with a bearer token); exactly one of
    the two. `search_tool`: serve the ``search_tools`` meta-tool (None: when the package has a
    deferred row). `elicit`: ask for approvals in the protocol (`toolgen.runtime.serving.elicit`: an
    approval-gated record call without an approval from an MCP 2026-07-28 client with form
    elicitation gets ``input_required``); needs a registry in ``approvals="issued"`` mode. Raises
    `ValueError` when neither or both callers are given, when a tool of the package is itself named
    ``search_tools`` while the meta-tool is served, or for `elicit` with ``approvals="client"``."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    if (actor is None) == (actor_for is None):
        raise ValueError("give exactly one of actor (a fixed caller) and actor_for (per request)")
    if elicit and registry.approvals != "issued":
        raise ValueError("in-protocol approvals need a registry in approvals='issued' mode")
    serve_search = has_deferred(registry) if search_tool is None else search_tool
    if serve_search and SEARCH_TOOL_NAME in registry.specs:
        raise ValueError(
            f"the package has a tool named {SEARCH_TOOL_NAME!r}, the name of the search meta-tool"
        )
    search = ToolSearch(registry) if serve_search else None
    listed: dict[frozenset[str], Any] = {}

    def caller(ctx: Any) -> Actor:
        if actor_for is not None:
            return actor_for(ctx)
        assert actor is not None
        return actor

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        who = caller(ctx)
        if who.scopes not in listed:
            if len(listed) >= 256:  # distinct scope sets seen: keep the memory bounded
                listed.clear()
            listed[who.scopes] = list_tools_result(registry, who, search_tool=serve_search)
        return listed[who.scopes]

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        name = params.name
        who = caller(ctx)
        if search is not None and name == SEARCH_TOOL_NAME:
            return to_call_tool_result(search.run(params.arguments or {}, who))
        if name not in registry.specs:
            shown = audit_text(name, UNKNOWN_TOOL_SHOWN)
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown tool: {shown}", {"code": "unknown_tool", "tool": shown}
            )
        refused = registry.refuse_hidden(name, who)
        if refused is not None:
            return to_call_tool_result(refused)
        meta = params.meta if getattr(params, "meta", None) is not None else getattr(ctx, "meta", None)
        approval = _approval_from_meta(dict(meta) if meta else None)
        arguments = params.arguments or {}
        state = getattr(params, "request_state", None) if elicit else None
        if state is not None:  # the retry of an approval round (sealed and checked by the boundary)
            answered = await anyio.to_thread.run_sync(
                partial(
                    approval_from_answer,
                    registry,
                    name,
                    arguments,
                    who,
                    state,
                    getattr(params, "input_responses", None),
                )
            )
            if isinstance(answered, CallResult):
                return to_call_tool_result(answered)
            approval = answered
        with tool_call_span(name, dict(meta) if meta else None) as span:
            result = await registry.acall(name, arguments, actor=who, approval=approval)
            record_outcome(
                span,
                result.error.code if result.error is not None else None,
                replayed=result.replayed,
                result_known=result.error is None or result.error.result_known,
            )
        if (
            elicit
            and state is None
            and approval is None
            and result.error is not None
            and result.error.code == "approval_required"
            and speaks_mrtr(ctx)
        ):
            ask = await anyio.to_thread.run_sync(
                partial(approval_input_required, registry, name, arguments, who)
            )
            if ask is not None:
                return ask
        return to_call_tool_result(conforming(registry, result))

    if elicit:
        from mcp.server.request_state import RequestStateBoundary

        boundary = RequestStateBoundary(
            request_state_security(registry), default_audience=f"toolgen-{registry.api}"
        )
    # Mcp-Param-* headers (MCP 2026-07-28 over Streamable HTTP) are checked against the called tool's
    # input schema; without this lookup the SDK finds that schema by running the tools/list handler
    # once per tools/call (listing, validating and serialising the caller's whole catalog). When no
    # tool declares a header the check can never reject, so the lookup answers "nothing to check";
    # otherwise the SDK's caller-scoped listing is kept (a hidden tool's schema is never consulted).
    entries = [*registry.catalog(), *([search_tool_entry(registry)] if serve_search else [])]
    param_headers = any(declares_param_headers(entry.get("inputSchema")) for entry in entries)
    named = registry.table.title or registry.api
    api_name = (
        named if named.lower().endswith(" api") else f"{named} API"
    )  # "Tickets API", not "Tickets API API"
    server = Server(
        f"toolgen-{registry.api or 'api'}",
        version=registry.table.version,
        instructions=(
            f"Tools for the {api_name}, enforced by the toolgen "
            "runtime. Writes are split into preview_* (no side effects, returns a preview_id) and "
            "record_* (executes the previewed request: pass the preview_id and an idempotency key; a host "
            "approves the preview_id)."
            + (
                " A record call without an approval asks the user to approve the exact request in the "
                "protocol (an input_required elicitation); clients without it get approval_required."
                if elicit
                else ""
            )
            + (
                " Approvals are issued by this runtime: a human reviews the preview and runs `toolgen approve`, "
                'which prints an approval_id; pass _meta {"toolgen/approval": {"preview_id": ..., '
                '"approval_id": ...}}. A preview_id alone is not an approval.'
                if registry.approvals == "issued"
                else ""
            )
            + (f" Call {SEARCH_TOOL_NAME} to find tools that are not listed." if serve_search else "")
        ),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=None if param_headers else _NO_HEADER_SCHEMAS.get,
    )
    if elicit:
        server.middleware.append(boundary)
    return server


async def serve_stdio(
    registry: Registry, actor: Actor, *, search_tool: bool | None = None, elicit: bool = False
) -> None:
    """Serve `registry` over stdin/stdout to `actor` until the client disconnects (`elicit`: as
    `build_server`)."""
    from mcp.server.stdio import stdio_server

    server = build_server(registry, actor, search_tool=search_tool, elicit=elicit)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await registry.aclose()
