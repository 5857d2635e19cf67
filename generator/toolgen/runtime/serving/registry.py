"""The tool registry: loads a generated package and runs every tool call through one call path.

Input: ``policy.json`` + ``mcp.json`` of a generated API (``docs/generated-format.md``), or the
generated Python package's ``POLICY``/``MCP_TOOLS`` constants. The policy table is read with the
build's own typed reader (`toolgen.policy.format.from_json`): a table of another format version, with
a member missing, an unknown member or a value outside its values is refused at load with a located
`toolgen.policy.format.PolicyFormatError` (a `ValueError`), never read with a default that allows
more. Output: `CallResult`s.

The registry holds the loaded tools (`toolgen.runtime.call.toolspec`), the stores, credentials, audit
sink and HTTP clients, and drives the call path, `toolgen.runtime.pipeline`: one module per step,
in the fixed order no tool can skip that `toolgen.runtime.pipeline.run` states and takes (a tool
whose ``permission`` the actor lacks is refused before its arguments are read; an approval
(`Approval`, bound to the ``preview_id`` of this canonical request; in ``approvals="issued"`` mode
also an ``approval_id`` this runtime issued, `toolgen.runtime.serving.issuing`) is checked before the
request is built for the wire and spent only when it is about to be sent; docs/runtime.md, "The
call path", explains each step).

The call path is written once, sans IO: it *yields* the IO it needs (send a request, sleep, run a
composite's aggregate steps at once) and a driver performs it — `call` with a sync httpx client,
`acall` with an async one (`toolgen.runtime.transport.drivers`, `toolgen.runtime.transport`). A composite
tool's steps are loaded with it (`ToolSpec.steps`) and are never tools of the registry
(docs/composites.md). Every decision is emitted as an `AuditEvent`.

Fingerprint (see docs/generated-format.md, `toolgen.runtime.calls.fingerprint`): ``"sha256:" +
hex(sha256(canonical_json({"intent": intent, "request": canonical})))`` where `canonical` is
`BuiltRequest.canonical`: the method, the final URL, the headers, the cookies and the SHA-256 of
the body exactly as they go on the wire, minus the credentials and the idempotency key. A preview's
``preview_id`` is this fingerprint, so an approval covers one request byte for byte; the
idempotency receipt stores it too. A preview whose record tool executes it stores its arguments in
the preview store (`receipts.previews`), keyed by ``(<api>/<record tool>, actor id, preview_id)``,
until ``record.preview_ttl_s`` runs out.

Result knowledge: `ToolError.result_known` is false once any attempt of a write may have reached the
API without a definitive answer (timeout, broken connection, 5xx, 3xx), and stays false unless a
later attempt gets the API's own success; the receipt is then kept as ``unknown``, never released.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Self

import httpx

from ...policy.format import PolicyRow, PolicyTable, from_json, read_policy
from ..audit import AuditEvent, AuditSink, MemoryAuditSink
from ..call import credentials as creds
from ..call.caller_credentials import CallerCredentials
from ..call.deadline import DEADLINE_SLACK_MS, ensure_deadlines
from ..call.response_body import MAX_RESPONSE_DEPTH
from ..call.shaping import CursorCodec, cursor_key_from_env
from ..call.toolspec import ToolSpec, load_spec, read_tools_for
from ..calls import KNOWN_DIALECTS, Actor, Approval, CallResult, canonical_json, fingerprint
from ..clock import SYSTEM, Clock
from ..errors import make_error
from ..identity import is_deferred, permission_error, permits
from ..pipeline import MAX_RESPONSE_BYTES, Outcome, Send, run
from ..stores import MemoryPreviewStore, MemoryReceiptStore, PreviewStore, ReceiptStore
from ..stores.approvals import APPROVAL_MODES, DEFAULT_APPROVAL_TTL_S
from ..transport.drivers import drive_async, drive_sync
from ..transport.http_client import async_client, send_async, send_sync, tls_context
from . import issuing

__all__ = [
    "DEADLINE_SLACK_MS",
    "KNOWN_DIALECTS",
    "MAX_RESPONSE_BYTES",
    "MAX_RESPONSE_DEPTH",
    "Actor",
    "Approval",
    "CallResult",
    "Registry",
    "ToolSpec",
    "canonical_json",
    "fingerprint",
]


def _default_cursor_key() -> bytes:
    return cursor_key_from_env() or secrets.token_bytes(32)


class Registry:
    """Loaded tools of one API plus everything needed to run them.

    Parameters: `policy` (the policy.json object, read with `toolgen.policy.format.from_json`, or
    the typed `PolicyTable`), `catalog` (the mcp.json list); `base_url`
    overrides the policy's; `credentials` (default: environment variables); `receipts` (default: an
    in-memory store — pass a `SqliteReceiptStore` for durability); `audit` (default: a
    `MemoryAuditSink`, exposed as `.audit`); `previews` (default: the receipt store's own preview
    store, ``receipts.previews()``: same backend, separate table or key prefix); `cursor_key` (HMAC key for cursors; default
    ``TOOLGEN_CURSOR_KEY`` or random per process; a key shorter than 16 bytes is a `ValueError`); `resend_unknown` (default true: a retry of a write
    whose outcome is unknown is re-sent when the key is forwarded to the API, which deduplicates it;
    false: always report ``result_unknown``); `http_client` / `async_http_client` (httpx clients to
    reuse; created lazily otherwise); `approvals` (``"client"``, the default: an `Approval` is the
    caller's word, for a host application that is itself the caller; ``"issued"``: a record call's
    approval must carry an ``approval_id`` issued by `issue_approval` for exactly this record tool,
    ``preview_id`` and actor, not expired — see docs/runtime.md "Issued approvals"); `retry_random`
    (the `random.Random` retry backoff draws its jitter from, backoff.py; default: a fresh one);
    `clock` (where every lifetime, lease, deadline and expiry of a call reads the time, clock.py;
    default: the receipt store's ``clock``, else the system clock); `caller_credentials` (where the
    caller's own credential of a ``per_caller`` scheme comes from: token exchange, a secret
    resolver; `toolgen.runtime.call.caller_credentials`; default none).
    Raises `ValueError` for an unknown `approvals` mode, a base URL holding credentials, or a
    `clock` that is not the given receipt store's, a `PolicyFormatError` (a `ValueError`, naming the
    member's JSON pointer) for a policy table that is not of this format, and `ValueError` for a row
    without its catalog entry.
    """

    def __init__(  # noqa: PLR0913
        self,
        policy: Mapping[str, Any] | PolicyTable,
        catalog: list[Mapping[str, Any]],
        *,
        base_url: str | None = None,
        credentials: creds.CredentialsProvider | None = None,
        receipts: ReceiptStore | None = None,
        previews: PreviewStore | None = None,
        audit: AuditSink | None = None,
        cursor_key: bytes | None = None,
        resend_unknown: bool = True,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        approvals: str = "client",
        retry_random: random.Random | None = None,
        clock: Clock | None = None,
        caller_credentials: CallerCredentials | None = None,
    ) -> None:
        if approvals not in APPROVAL_MODES:
            raise ValueError(f"approvals must be one of {', '.join(APPROVAL_MODES)}, not {approvals!r}")
        self.approvals: str = approvals
        #: the typed policy table every step reads
        self.table: PolicyTable = (
            policy if isinstance(policy, PolicyTable) else from_json(policy, "policy.json")
        )
        #: the table's JSON value (what search.json's checks compare with)
        self.policy: dict[str, Any] = self.table.to_json()
        #: the generated folder this registry was loaded from (`from_dir`), else None; what else the
        #: build wrote there (``search.json``) is read from it
        self.source: Path | None = None
        self.api: str = self.table.api
        self.base_url: str = base_url or self.table.base_url
        if "@" in self.base_url.split("?", 1)[0].split("#", 1)[0] and httpx.URL(self.base_url).userinfo:
            raise ValueError(
                "the base URL holds credentials (user:password@); give them to the runtime as a "
                "secret, never in the URL (previews and cursors would show them)"
            )
        self.credentials: creds.CredentialsProvider = credentials or creds.EnvCredentials()
        #: where each caller's own credentials come from (``auth[].per_caller``); None: nowhere
        self.caller_credentials: CallerCredentials | None = caller_credentials
        #: where every time-dependent decision of a call reads the time (clock.py): the one given, else
        #: the receipt store's, else the system's
        self.clock: Clock = clock or getattr(receipts, "clock", None) or SYSTEM
        if receipts is not None and getattr(receipts, "clock", self.clock) is not self.clock:
            raise ValueError("the registry's clock is not its receipt store's: give both the same clock")
        self.receipts: ReceiptStore = (
            receipts if receipts is not None else MemoryReceiptStore(clock=self.clock)
        )
        self._previews = previews
        self.audit: AuditSink = audit if audit is not None else MemoryAuditSink()
        self.cursors = CursorCodec(_default_cursor_key() if cursor_key is None else cursor_key)
        self.resend_unknown = resend_unknown
        #: where retry backoff draws its jitter (backoff.py); seed one for reproducible delays
        self.retry_random: random.Random = retry_random if retry_random is not None else random.Random()
        self._client = http_client
        self._aclient = async_http_client
        self._own_client = http_client is None
        self._client_lock = threading.Lock()
        self._deadlines_checked = (
            False  # the sync client gets the attempt deadline on first use (deadline.py)
        )
        self._own_aclient = async_http_client is None
        by_name = {str(t["name"]): dict(t) for t in catalog}
        self.specs: dict[str, ToolSpec] = {}
        for row in self.table.tools:
            entry = by_name.get(row.tool)
            if entry is None:
                raise ValueError(f"policy row {row.tool!r} has no entry in the MCP catalog")
            self.specs[row.tool] = load_spec(row, entry)
        for spec in self.specs.values():
            for one in (spec, *spec.steps):  # a composite's write steps name the API's read tools too
                if one.mutating and one.row.composite is None:
                    one.check_tools = read_tools_for(one.row, self.specs)

    # -- loading ---------------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, path: str | os.PathLike[str], **options: Any) -> Registry:
        """Load ``policy.json`` and ``mcp.json`` from a generated API folder. Raises
        `FileNotFoundError` / `ValueError` on a missing or malformed package; a policy table that is not
        of this format is a `PolicyFormatError` naming the file and the member's JSON pointer."""
        folder = Path(path)
        policy = read_policy(folder / "policy.json")
        try:
            catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
        except RecursionError:
            raise ValueError(
                f"{folder / 'mcp.json'}: not JSON this runtime reads (nested too deep)"
            ) from None
        registry = cls(policy, catalog, **options)
        registry.source = folder
        return registry

    @classmethod
    def from_package(cls, module: ModuleType, **options: Any) -> Registry:
        """Load from a generated Python package exposing ``POLICY`` (dict) and ``MCP_TOOLS`` (list).
        Raises `PolicyFormatError` (a ValueError) naming the package's ``policy.json`` and the member's
        JSON pointer when ``POLICY`` is not of this format."""
        where = getattr(module, "__file__", None)
        shown = str(Path(where).parent / "policy.json") if where else f"{module.__name__}.POLICY"
        return cls(from_json(module.POLICY, shown), module.MCP_TOOLS, **options)

    # -- introspection ---------------------------------------------------------------------------

    def tool_names(self) -> list[str]:
        return sorted(self.specs)

    def catalog(self) -> list[dict[str, Any]]:
        """The MCP catalog entries (name, title, description, inputSchema, outputSchema, annotations)."""
        return [self.specs[n].catalog for n in self.tool_names()]

    def row(self, tool: str) -> PolicyRow:
        """The typed policy row of `tool`; raises `KeyError` for an unknown tool."""
        return self.specs[tool].row

    def row_json(self, tool: str) -> dict[str, Any]:
        """The policy row of `tool` as ``policy.json`` holds it (`PolicyRow.to_json`), for display;
        the call path reads the typed `row`. Raises `KeyError` for an unknown tool."""
        return self.specs[tool].row.to_json()

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close clients the registry created (not ones passed in) and the receipt store."""
        if self._client is not None and self._own_client:
            self._client.close()
            self._client = None
        self.receipts.close()

    async def aclose(self) -> None:
        if self._aclient is not None and self._own_aclient:
            await self._aclient.aclose()
            self._aclient = None
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public entry points ---------------------------------------------------------------------

    def call(
        self,
        tool: str,
        args: Any,
        *,
        actor: Actor,
        approval: Approval | str | None = None,
        timeout_ms: int | None = None,
        dialect: str | None = None,
    ) -> CallResult:
        """Run one tool call synchronously through the call path.

        Never raises, whatever the caller passes and whatever the API answers: every failure is a
        ``CallResult(ok=False, error=ToolError(...))`` (``invalid_arguments`` with a JSON pointer for
        anything wrong with `args`, checked before a receipt is written or a byte is sent), and a
        call never leaves its idempotency receipt ``pending``. `timeout_ms` can only lower the
        row's timeout bound; it never shortens another call's in-flight window. `dialect`: the
        catalog the caller's model saw (``openai``, ``gemini``...); its argument rewrites are undone
        first (`toolgen.runtime.call.dialect_args`). None: the arguments are canonical (MCP)."""
        gen = run(self, tool, args, actor, approval, timeout_ms, dialect)
        try:
            result: CallResult = drive_sync(gen, self._send_sync)
            return result
        except Exception as exc:  # noqa: BLE001 - the promise: a call never raises
            return self._crashed(tool, exc)

    async def acall(
        self,
        tool: str,
        args: Any,
        *,
        actor: Actor,
        approval: Approval | str | None = None,
        timeout_ms: int | None = None,
        dialect: str | None = None,
    ) -> CallResult:
        """`call` for asyncio (httpx.AsyncClient); same call path, same results, same guarantees."""
        gen = run(self, tool, args, actor, approval, timeout_ms, dialect)
        try:
            result: CallResult = await drive_async(gen, self._send_async)
            return result
        except Exception as exc:  # noqa: BLE001 - the promise: a call never raises
            return self._crashed(tool, exc)

    def _crashed(self, tool: Any, exc: Exception) -> CallResult:
        """The result of a call whose path failed before it held a receipt (a runtime bug); the
        call path settles any receipt it holds itself."""
        name = str(tool)[:200]
        with contextlib.suppress(Exception):  # the audit sink failing must not turn into a raise either
            self.audit.emit(
                AuditEvent(
                    self.clock.time(),
                    "",
                    name,
                    "",
                    "result",
                    "error",
                    None,
                    "internal_error",
                    {"error": type(exc).__name__},
                )
            )
        spec = self.specs.get(name)
        return CallResult(
            name,
            False,
            error=make_error(
                "internal_error",
                f"{name}: the runtime failed while handling the call ({type(exc).__name__}).",
                result_known=not (spec is not None and spec.mutating),
            ),
        )

    # -- drivers ---------------------------------------------------------------------------------
    # A driver performs the IO the call path yields and never raises: whatever the HTTP client
    # throws becomes an `Outcome` the call path classifies (transport/http_client.py).

    def _send_sync(self, send: Send) -> Outcome:
        with self._client_lock:  # an aggregate's steps send from several threads at once
            if self._client is None:
                self._client = httpx.Client(
                    follow_redirects=False, verify=tls_context()
                )  # CAs loaded once a process
            if not self._deadlines_checked:
                self._deadlines_checked = True
                ensure_deadlines(self._client)
        return send_sync(self._client, send)

    async def _send_async(self, send: Send) -> Outcome:
        if self._aclient is None:
            self._aclient = async_client()
        return await send_async(self._aclient, send)

    # -- issued approvals ------------------------------------------------------------------------

    def approvable_request(self, record_tool: str, preview_id: str, actor_id: str) -> dict[str, Any]:
        """What a human approves: the request (``method``, ``url``, ``headers`` with credentials
        redacted, ``body``) that `record_tool` would send for the stored preview `preview_id` made
        by the actor `actor_id`, rebuilt exactly as the record call rebuilds it
        (`toolgen.runtime.serving.issuing.approvable_request`).

        Raises `ToolError`: ``unknown_tool`` (not an approval-gated record tool), ``preview_not_found``,
        ``preview_expired``, ``preview_mismatch`` (the stored preview no longer builds that request,
        e.g. another base URL), ``receipt_store_unavailable``."""
        return issuing.approvable_request(self, record_tool, preview_id, actor_id)

    def issue_approval(
        self,
        record_tool: str,
        preview_id: str,
        *,
        approved_by: str,
        actor: str,
        ttl_s: float = DEFAULT_APPROVAL_TTL_S,
    ) -> str:
        """Issue a human's approval of the stored preview `preview_id` of `record_tool`, made by the
        actor `actor`, and return its ``approval_id`` (`toolgen.runtime.serving.issuing.issue_approval`:
        audited, then stored for `ttl_s` seconds; accepted in ``approvals="issued"`` mode only for
        this record tool, ``preview_id`` and actor).

        Raises `ValueError` (blank `approved_by`, `ttl_s` outside (0, `MAX_APPROVAL_TTL_S`]) and
        `ToolError` (as `approvable_request`; ``receipt_store_unavailable`` when it cannot be stored)."""
        return issuing.issue_approval(
            self, record_tool, preview_id, approved_by=approved_by, actor=actor, ttl_s=ttl_s
        )

    def preview_store(self) -> PreviewStore:
        """The store of previews that record tools execute: the one passed in, else the receipt
        store's (``receipts.previews()``; opened on first use, so a store outage is a call's
        ``receipt_store_unavailable``, never a failure to load), else one in memory."""
        if self._previews is None:
            opener = getattr(self.receipts, "previews", None)
            self._previews = opener() if callable(opener) else MemoryPreviewStore(clock=self.clock)
        return self._previews

    # -- tools by identity -----------------------------------------------------------------------

    def permits(self, tool: str, actor: Actor) -> bool:
        """True when `tool` exists and `actor` holds every scope of its ``permission`` (the rule of
        the call path's permission step, `toolgen.runtime.identity.permits`)."""
        spec = self.specs.get(tool)
        return spec is not None and permits(spec.row, actor.scopes)

    def visible_tools(self, actor: Actor, *, deferred: bool = True) -> list[str]:
        """The names of the tools `actor`'s scopes allow, sorted; ``deferred=False`` leaves out rows
        with ``loading: deferred`` (those a client finds through search)."""
        return [
            name
            for name in self.tool_names()
            if permits(self.specs[name].row, actor.scopes)
            and (deferred or not is_deferred(self.specs[name].row))
        ]

    def visible_catalog(self, actor: Actor, *, deferred: bool = True) -> list[dict[str, Any]]:
        """`catalog()` cut down to `visible_tools(actor, deferred=...)`: the MCP entries, by name."""
        return [self.specs[name].catalog for name in self.visible_tools(actor, deferred=deferred)]

    def refuse_hidden(self, tool: str, actor: Actor) -> CallResult | None:
        """For a server that lists tools by identity: a call of a tool that exists but that `actor`
        may not use is refused with ``permission_denied`` before its arguments are looked at (so
        the refusal says nothing about the tool's schema), and audited (step ``permission``,
        decision ``deny``). None when the tool is unknown or allowed: the call path goes on."""
        spec = self.specs.get(tool)
        error = None if spec is None else permission_error(tool, spec.row, actor.id, actor.scopes)
        if error is None:
            return None
        missing = error.details["missing"]
        call_id = secrets.token_hex(8)
        for step, decision in (("permission", "deny"), ("result", "error")):
            with contextlib.suppress(Exception):  # a failing sink never breaks a refusal
                self.audit.emit(
                    AuditEvent(
                        self.clock.time(),
                        call_id,
                        tool,
                        actor.id,
                        step,
                        decision,
                        None,
                        "permission_denied",
                        {"missing": missing} if step == "permission" else {},
                    )
                )
        return CallResult(tool, False, error=error, call_id=call_id)
