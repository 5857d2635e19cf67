"""The tool registry: loads a generated package and runs every tool call through one call path.

Input: ``policy.json`` + ``mcp.json`` of a generated API (``docs/generated-format.md``), or the
generated Python package's ``POLICY``/``MCP_TOOLS`` constants. Output: `CallResult`s.

The call path is a single function, `Registry._pipeline`, with a fixed order no tool can skip:

    find tool (a tool whose ``permission`` the actor lacks is refused here, before its arguments are
    read, so a refusal says nothing of a hidden tool's schema) → validate arguments (plain JSON, mcp.json ``inputSchema`` as JSON Schema 2020-12
    incl. formats, closed nested objects; a record tool executing a stored preview (policy
    ``record.arguments: preview``) takes the arguments its preview stored, once the actor holds the
    scopes, and must rebuild a request whose fingerprint is the ``preview_id``; then the canonical
    request itself) → permission (actor scopes ⊇ row.permission) → approval (record rows: an `Approval` whose ``preview_id`` equals the
    fingerprint of this canonical request — in ``approvals="issued"`` mode also an ``approval_id``
    this runtime issued for this record tool, preview and actor, approvals.py; spent only when the
    request is about to be sent) →
    timeout bound → idempotency (receipt store) → HTTP request (bounded retries; a write is re-sent
    only where it cannot write twice) → validate + shape output → result

The pipeline is written once, sans IO: it *yields* the IO it needs (send a request, sleep) and a
driver performs it — `call` with a sync httpx client, `acall` with an async one. Every decision is
emitted as an `AuditEvent`.

Fingerprint (see docs/generated-format.md): ``"sha256:" + hex(sha256(canonical_json({"intent":
intent, "request": canonical})))`` where `canonical` is `BuiltRequest.canonical`: the method, the
final URL, the headers, the cookies and the SHA-256 of the body exactly as they go on the wire,
minus the credentials and the idempotency key. A preview's ``preview_id`` is this fingerprint, so an
approval covers one request byte for byte; the idempotency receipt stores it too. A preview whose
record tool executes it stores its arguments in the preview store (`receipts.previews`), keyed
by ``(<api>/<record tool>, actor id, preview_id)``, until ``record.preview_ttl_s`` runs out.

Result knowledge: `ToolError.result_known` is false once any attempt of a write may have reached the
API without a definitive answer (timeout, broken connection, 5xx, 3xx), and stays false unless a
later attempt gets the API's own success; the receipt is then kept as ``unknown``, never released.
"""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import json
import os
import random
import secrets
import time
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Self
from urllib.parse import quote, unquote, unquote_plus, urlencode

import anyio
import httpx
import jsonschema_rs

from ..pointer import join_pointer
from ..results import RESULT_KEY, binary_summary, media_kind, shape_body
from . import credentials as creds
from .approvals import (
    APPROVAL_MODES,
    DEFAULT_APPROVAL_TTL_S,
    MAX_APPROVAL_TTL_S,
    approval_key,
    approval_record,
    approval_scope,
    check_issued,
    issue_next_step,
)
from .arguments import invalid_argument, plain_arguments, strict_json
from .audit import AuditEvent, AuditSink, MemoryAuditSink
from .backoff import retry_delay
from .content_coding import BodyTooLarge, BoundedDecoder
from .deadline import attempt_deadline, ensure_deadlines
from .dialect_args import Rewrites, compile_rewrites, decode_arguments
from .errors import ToolError, failure_cause, from_http_response, make_error, parse_retry_after, scrub_url
from .identity import is_deferred, permits, required_scopes, scope_set
from .paging import STALLED, STALLED_KEY, page_digest, pages_seen, remember, repeats
from .receipts import (
    MemoryPreviewStore,
    MemoryReceiptStore,
    PreviewStore,
    Receipt,
    ReceiptStore,
    StoredPreview,
    spend_digest,
)
from .request import BuiltRequest, build_request, normalise_nulls, transport_headers, undeclared_member
from .shaping import (
    CursorCodec,
    cursor_key_from_env,
    enforce_budget,
    field_tree,
    fit_page,
    get_path,
    next_position,
    project,
    redact,
    redact_anywhere,
    shrink,
)

#: Bodies larger than this are not read into memory (bytes).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: JSON bodies nested deeper than this are not shaped (an unreadable body, not a crash).
MAX_RESPONSE_DEPTH = 128
#: Added to a call's deadline to form the lease its pending receipt stores (milliseconds): the
#: window in which another caller treats the receipt as in flight.
_LEASE_MARGIN_MS = 2000
#: How long after its deadline (``deadline_ms``: ``timeout_ms`` per attempt, at most ``timeout_ms`` ×
#: attempts or the row's ``retry.deadline_ms``) a call returns at the latest, sync or async, whatever
#: the upstream does (milliseconds; docs/runtime.md "Deadlines"). Receipt-store latency is extra.
DEADLINE_SLACK_MS = 250
#: Seconds a stored preview stays executable when the policy row does not say (``record.preview_ttl_s``).
DEFAULT_PREVIEW_TTL_S = 900
#: The most of an API's error body (problem details) a structured error carries (bytes of JSON).
_MAX_PROBLEM_BYTES = 2000


@dataclass(frozen=True)
class Actor:
    """Who is calling: an id for audit and receipts, and the permission scopes the caller holds.

    `scopes` may be given as any iterable of scope names or as one OAuth scope string (names
    separated by spaces); either way it is stored as a frozenset of whole names (`scope_set`), so
    membership is never a substring test. Raises `TypeError` for a scope that is not a string."""

    id: str
    scopes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "scopes", scope_set(self.scopes))

    @classmethod
    def of(cls, id: str, scopes: str | Iterable[str] = ()) -> Actor:
        return cls(id, scope_set(scopes))


@dataclass(frozen=True)
class Approval:
    """A human's approval of one previewed action. `preview_id` is the ``preview_id`` returned by the
    preview tool; `approved_by` is recorded in the audit log. An approval never grants a scope.

    An approval is spent on one action: the first record call that uses it binds it to its
    idempotency key (or, without one, to that single call); retries with the same key may reuse it,
    any other action gets `approval_used`, for as long as the approval can be presented (an issued
    approval until its expiry, a client one forever), whatever the receipt store purges; a call that
    spent it and sent nothing gives it back (`ReceiptStore.spend`, docs/runtime.md "Spent
    approvals"). `approval_id` tells apart two approvals of identical arguments (default: the
    `preview_id`, i.e. one approval per previewed request)."""

    preview_id: str
    approved_by: str | None = None
    approval_id: str | None = None


@dataclass
class CallResult:
    """The outcome of one call.

    Success: `ok` true, `result` the shaped JSON object, `replayed` true when an idempotency receipt
    was replayed (no HTTP request was made). Failure: `ok` false and `error` set. `fingerprint` is
    the canonical-request fingerprint (``None`` if arguments were invalid); `status` the HTTP
    status (``None`` without a response); `attempts` the number of HTTP attempts; `warnings` e.g.
    output-schema mismatches in ``warn`` mode; `call_id` joins the call's audit events;
    `idempotency_key` the key of the receipt a record call completed or replayed; `request` the
    redacted request a record call that executes a stored preview sent (or replayed), as its preview
    showed it (``{"method", "url", "headers", "body"}``), so whoever approves sees what ran.
    """

    tool: str
    ok: bool
    result: dict[str, Any] | None = None
    error: ToolError | None = None
    replayed: bool = False
    fingerprint: str | None = None
    status: int | None = None
    attempts: int = 0
    warnings: list[str] = field(default_factory=list)
    call_id: str = ""
    idempotency_key: str | None = None
    request: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"ok": true, "tool", "result", "replayed"[, "warnings"][, "request"]}`` or ``{"ok": false,
        "tool", "error": {...}}`` (a record call executing a stored preview names the request in
        ``error.details.request``)."""
        if self.ok:
            out: dict[str, Any] = {"ok": True, "tool": self.tool, "result": self.result, "replayed": self.replayed}
            if self.warnings:
                out["warnings"] = self.warnings
            if self.request is not None:
                out["request"] = self.request
            return out
        assert self.error is not None
        return {"ok": False, "tool": self.tool, **self.error.to_json()}


@dataclass
class ToolSpec:
    """A loaded tool: its policy row, its MCP catalog entry and compiled validators."""

    name: str
    row: dict[str, Any]
    catalog: dict[str, Any]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    input_validator: Any
    output_validator: Any | None
    send_null: frozenset[str]
    intent: str
    mutating: bool
    field_tree: dict[str, Any]
    redact_tree: dict[str, Any]
    check_tools: tuple[str, ...] = ()
    rewrites: dict[str, Rewrites] = field(default_factory=dict)
    #: the members the output schema's root requires: the output budget drops them last
    required_members: frozenset[str] = frozenset()


#: The catalogs a caller's model may have seen (`Registry.call`'s `dialect`).
KNOWN_DIALECTS: tuple[str, ...] = ("openai", "anthropic", "gemini", "mcp")


# ------------------------------------------------------------------------------------------------
# IO effects the pipeline yields


@dataclass
class _Send:
    request: httpx.Request
    timeout_s: float


@dataclass
class _Sleep:
    seconds: float


@dataclass
class _Outcome:
    """What the driver observed: a response, or a failure `kind` — ``connect`` (nothing was sent),
    ``timeout`` (sent or partly sent, no answer in time), ``broken`` (connection broke after sending),
    ``too_large``."""

    status: int = 0
    headers: httpx.Headers | None = None
    content: bytes = b""
    kind: str | None = None
    elapsed_ms: float = 0.0
    cause: str | None = None  # why nothing (or no answer) came back, for `upstream_unavailable`


_Effect = _Send | _Sleep
_Pipeline = Generator[_Effect, Any, CallResult]


def _failure_kind(exc: Exception) -> str:
    """``connect`` when nothing was sent (connect error/timeout, no pooled connection, bad URL),
    ``timeout`` when the request went out but no answer came in time, else ``broken`` (the request
    may have been sent: any other failure, including ones the HTTP client does not classify)."""
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)):
        return "connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    return "broken"


def _may_have_applied(outcome: _Outcome) -> bool:
    """Whether a write attempt with this outcome may have taken effect without the API saying so:
    no answer (timeout, broken connection), a server error or gateway failure, or a redirect (the
    API answered, but not with the write's result)."""
    if outcome.kind in ("timeout", "broken"):
        return True
    if outcome.kind is None:
        return outcome.status >= 500 or 300 <= outcome.status < 400
    return False


def _key_in_use(body: Any) -> bool:
    """Whether an error body says the idempotency key is in use by a request still running (Stripe's
    ``idempotency_key_in_use``; the IETF Idempotency-Key draft's 409 for a concurrent request)."""
    texts: list[str] = []
    for node in (body, body.get("error") if isinstance(body, dict) else None):
        if isinstance(node, dict):
            texts.extend(str(node.get(k, "")) for k in ("code", "type", "title", "detail", "message"))
    joined = " ".join(texts).lower()
    return "idempotency" in joined or "idempotent" in joined


def _secret_forms(values: Iterable[str]) -> list[str]:
    """Each secret as sent and as an API may echo it (`credentials.echo_forms`)."""
    return creds.echo_forms(values)


def canonical_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(intent: str, canonical_request: Mapping[str, Any]) -> str:
    """The canonical-request fingerprint (also a preview's ``preview_id``): ``"sha256:<hex>"`` of
    the canonical JSON of ``{"intent": intent, "request": canonical_request}``, where
    `canonical_request` is a `BuiltRequest.canonical` (no credentials, no idempotency key)."""
    text = canonical_json({"intent": intent, "request": canonical_request})
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pointer(path: Iterable[str | int]) -> str:
    return join_pointer("", *path)


def _describe_error(error: Any) -> dict[str, str]:
    """A jsonschema_rs validation error as ``{"pointer", "keyword", "message"}``. For ``required``
    the pointer names the missing property; for ``additionalProperties`` the first unexpected one."""
    path = list(error.instance_path)
    keyword = str(error.schema_path[-1]) if error.schema_path else ""
    try:
        info = error.kind.as_dict()
    except (AttributeError, TypeError):  # pragma: no cover - defensive: older jsonschema_rs
        info = {}
    if keyword == "required" and isinstance(info.get("property"), str):
        path.append(info["property"])
    elif keyword == "additionalProperties" and info.get("unexpected"):
        path.append(str(info["unexpected"][0]))
    return {"pointer": _pointer(path), "keyword": keyword, "message": str(error.message)[:300]}


def _scrub(value: Any, secret_values: list[str]) -> Any:
    """`value` with every occurrence of a secret (in strings and object keys) replaced by
    ``"[redacted]"``. Bounded depth: it runs on decoded bodies already checked by `_depth_exceeds`
    and on arguments bounded by `MAX_ARGUMENT_DEPTH`."""
    if not secret_values:
        return value
    if isinstance(value, str):
        for s in secret_values:
            if s in value:
                value = value.replace(s, "[redacted]")
        return value
    if isinstance(value, dict):
        return {_scrub(k, secret_values): _scrub(v, secret_values) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secret_values) for v in value]
    return value


def _may_hold_secret(content: bytes, secret_values: list[str], headers: httpx.Headers | None = None) -> bool:
    """Whether a body's bytes can hold a secret once decoded: one appears as is (in any of the forms
    `_secret_forms` lists), the body uses JSON escapes (``\\u0073``, ``\\/``) that could spell
    one, or it is text in a declared charset other than UTF-8. Lets the common case skip the decoded
    walk."""
    if not secret_values or not content:
        return False
    if b"\\" in content or _text_charset(headers) not in (None, "utf-8", "ascii"):
        return True
    return any(s.encode("utf-8") in content for s in secret_values)


def _text_charset(headers: httpx.Headers | None) -> str | None:
    """The ``charset`` parameter of a response's Content-Type, as Python's codec name (lower case),
    or None when absent or not a text encoding Python knows."""
    ctype = headers.get("content-type", "") if headers is not None else ""
    for param in ctype.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            try:
                info = codecs.lookup(value.strip().strip('"'))
            except LookupError:
                return None
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return None


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests deeper than `limit` (an iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _decode_body(headers: httpx.Headers | None, content: bytes, expect: str | None = None) -> tuple[Any, str | None]:
    """(decoded body, problem) by the answer's Content-Type (`toolgen.results.media_kind`) and what
    the spec says may come (`expect`, the row's ``output.body``): JSON for JSON media types (any
    ``+json`` type, ``text/json``, with or without parameters), and tried first for a wildcard or
    missing type and, when the spec says JSON (``expect == "json"``), for any type but HTML (a
    springdoc ``*/*`` answer labelled ``text/plain`` or ``application/octet-stream``); text for
    other text; `toolgen.results.binary_summary` for binary. `problem` is set, and the body not to
    be trusted, when a JSON body does not parse or nests deeper than `MAX_RESPONSE_DEPTH`, or the
    API sent an HTML page (an error or login page, never a tool result)."""
    if not content:
        return None, None
    ctype = (headers.get("content-type", "") if headers is not None else "").lower()
    kind = media_kind(ctype)
    html = "html" in ctype
    if kind in ("json", "any") or (expect == "json" and not html):
        try:
            # RFC 8259 §8.1: JSON between systems is UTF-8 (no UTF-16/32 detection, so a secret cannot
            # hide from the byte-level check in another encoding); NaN and Infinity are not JSON
            value = strict_json(content.decode("utf-8-sig"))
        except (ValueError, RecursionError):
            if kind == "json":
                return content[:2000].decode("utf-8", "replace"), "invalid JSON"
        else:
            if _depth_exceeds(value, MAX_RESPONSE_DEPTH):
                return None, f"JSON nested deeper than {MAX_RESPONSE_DEPTH} levels"
            return value, None
    if html:
        return content[:2000].decode("utf-8", "replace"), "an HTML page where data was expected"
    if kind in ("text", "any"):
        return content.decode(_text_charset(headers) or "utf-8", "replace"), None
    return binary_summary(ctype, len(content)), None


def _permission_error(tool: str, row: Mapping[str, Any], actor: Actor) -> ToolError | None:
    """``permission_denied`` naming the scopes of `row`'s ``permission`` that `actor` lacks, or None
    when it holds them all (`toolgen.runtime.identity.permits`). The call path asks this right after
    finding the tool, so a tool the actor may not see is refused before its arguments are read and
    the refusal reveals nothing of its schema."""
    if permits(row, actor.scopes):
        return None
    required = required_scopes(row)
    missing = [s for s in required if s not in actor.scopes]
    return make_error("permission_denied",
                      f"{tool} needs the scope(s) {', '.join(missing)}, which actor {actor.id!r} does not hold.",
                      details={"missing": missing, "required": required})


def _reshaped(spec: ToolSpec, stored: Any) -> Any:
    """A stored (replayed) result shaped again with the current policy's ``output.redact`` paths: a
    rebuild may have added one since the result was stored, and a replay must not show what a new
    call would hide. Applied at the top of the result and to each item of a wrapped array
    (``result``) or a page (``items``); redaction only hides, so applying it twice changes nothing.
    ``output.fields`` is not applied again: a stored result does not say which of its keys came
    from the API's body (``{"status": 204}`` did not)."""
    tree = spec.redact_tree
    if not tree or not isinstance(stored, dict):
        return stored
    out = redact(stored, tree)
    for key in ("result", "items"):
        if isinstance(out.get(key), list):
            out[key] = [redact(item, tree) for item in out[key]]
    return out


def _default_cursor_key() -> bytes:
    return cursor_key_from_env() or secrets.token_bytes(32)


class Registry:
    """Loaded tools of one API plus everything needed to run them.

    Parameters: `policy` (the policy.json object), `catalog` (the mcp.json list); `base_url`
    overrides the policy's; `credentials` (default: environment variables); `receipts` (default: an
    in-memory store — pass a `SqliteReceiptStore` for durability); `audit` (default: a
    `MemoryAuditSink`, exposed as `.audit`); `previews` (default: the receipt store's own preview
    store, ``receipts.previews()``: same backend, separate table or key prefix); `cursor_key` (HMAC key for cursors; default
    ``TOOLGEN_CURSOR_KEY`` or random per process); `resend_unknown` (default true: a retry of a write
    whose outcome is unknown is re-sent when the key is forwarded to the API, which deduplicates it;
    false: always report ``result_unknown``); `http_client` / `async_http_client` (httpx clients to
    reuse; created lazily otherwise); `approvals` (``"client"``, the default: an `Approval` is the
    caller's word, for a host application that is itself the caller; ``"issued"``: a record call's
    approval must carry an ``approval_id`` issued by `issue_approval` for exactly this record tool,
    ``preview_id`` and actor, not expired — see docs/runtime.md "Issued approvals"); `retry_random`
    (the `random.Random` retry backoff draws its jitter from, backoff.py; default: a fresh one).
    Raises `ValueError` for an unknown `approvals` mode or a base URL holding credentials.
    """

    def __init__(
        self,
        policy: Mapping[str, Any],
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
    ) -> None:
        if approvals not in APPROVAL_MODES:
            raise ValueError(f"approvals must be one of {', '.join(APPROVAL_MODES)}, not {approvals!r}")
        self.approvals: str = approvals
        self.policy = dict(policy)
        #: the generated folder this registry was loaded from (`from_dir`), else None; what else the
        #: build wrote there (``search.json``) is read from it
        self.source: Path | None = None
        self.api: str = str(policy.get("api", ""))
        self.base_url: str = base_url or str(policy.get("base_url", ""))
        if "@" in self.base_url.split("?", 1)[0].split("#", 1)[0] and httpx.URL(self.base_url).userinfo:
            raise ValueError("the base URL holds credentials (user:password@); give them to the runtime as a "
                             "secret, never in the URL (previews and cursors would show them)")
        self.credentials: creds.CredentialsProvider = credentials or creds.EnvCredentials()
        self.receipts: ReceiptStore = receipts if receipts is not None else MemoryReceiptStore()
        self._previews = previews
        self.audit: AuditSink = audit if audit is not None else MemoryAuditSink()
        self.cursors = CursorCodec(cursor_key or _default_cursor_key())
        self.resend_unknown = resend_unknown
        #: where retry backoff draws its jitter (backoff.py); seed one for reproducible delays
        self.retry_random: random.Random = retry_random if retry_random is not None else random.Random()
        self._client = http_client
        self._aclient = async_http_client
        self._own_client = http_client is None
        self._deadlines_checked = False  # the sync client gets the attempt deadline on first use (deadline.py)
        self._own_aclient = async_http_client is None
        by_name = {str(t["name"]): dict(t) for t in catalog}
        self.specs: dict[str, ToolSpec] = {}
        for row in policy.get("tools", []):
            name = str(row["tool"])
            entry = by_name.get(name)
            if entry is None:
                raise ValueError(f"policy row {name!r} has no entry in the MCP catalog")
            self.specs[name] = self._load_spec(dict(row), entry)
        for spec in self.specs.values():
            if spec.mutating:
                spec.check_tools = self._read_tools_for(spec.row)

    # -- loading ---------------------------------------------------------------------------------

    def _read_tools_for(self, row: Mapping[str, Any]) -> tuple[str, ...]:
        """The read tools that show the state a write changes: those whose path shares the most
        leading segments with the write's path (``POST /v1/customers/{customer}`` →
        ``get_customer``, ``list_customers``), at most three, by name."""
        target = [p for p in str(row["operation"]["path"]).split("/") if p]
        scored: list[tuple[int, str]] = []
        for name, spec in self.specs.items():
            if spec.mutating or spec.row.get("mode") == "preview":
                continue
            path = [p for p in str(spec.row["operation"]["path"]).split("/") if p]
            common = 0
            for a, b in zip(target, path):
                if a != b:
                    break
                common += 1
            literal = [p for p in path[:common] if not p.startswith("{")]
            if literal and len(path) <= len(target) + 1:
                scored.append((common, name))
        if not scored:
            return ()
        best = max(score for score, _ in scored)
        return tuple(sorted(name for score, name in scored if score == best)[:3])

    @staticmethod
    def _load_spec(row: dict[str, Any], entry: dict[str, Any]) -> ToolSpec:
        input_schema = entry.get("inputSchema") or {"type": "object"}
        output_schema = entry.get("outputSchema")
        out_policy = row.get("output") or {}
        send_null = frozenset(
            b["arg"] for b in (row.get("request") or {}).get("bindings", []) if b.get("null") == "send"
        )
        intent = str(row.get("intent") or row["tool"].removeprefix("preview_").removeprefix("record_"))
        effect = row.get("effect", "read")
        mutating = row.get("mode") == "record" or (row.get("mode") != "preview" and effect != "read")
        return ToolSpec(
            name=row["tool"],
            row=row,
            catalog=entry,
            input_schema=input_schema,
            output_schema=output_schema,
            input_validator=jsonschema_rs.Draft202012Validator(input_schema, validate_formats=True),
            output_validator=(
                jsonschema_rs.Draft202012Validator(output_schema, validate_formats=True)
                if output_schema and out_policy.get("schema_mode", "warn") != "off"
                else None
            ),
            send_null=send_null,
            intent=intent,
            mutating=mutating,
            field_tree=field_tree(out_policy.get("fields") or _declared_fields(row, output_schema)),
            redact_tree=field_tree(out_policy.get("redact") or []),
            rewrites={str(d): compile_rewrites(records) for d, records in (row.get("dialect_rewrites") or {}).items()
                      if isinstance(records, list)},
            required_members=frozenset(r for r in (output_schema or {}).get("required") or [] if isinstance(r, str)),
        )

    @classmethod
    def from_dir(cls, path: str | os.PathLike[str], **options: Any) -> Registry:
        """Load ``policy.json`` and ``mcp.json`` from a generated API folder. Raises
        `FileNotFoundError` / `ValueError` on a missing or malformed package."""
        folder = Path(path)
        policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
        catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
        registry = cls(policy, catalog, **options)
        registry.source = folder
        return registry

    @classmethod
    def from_package(cls, module: ModuleType, **options: Any) -> Registry:
        """Load from a generated Python package exposing ``POLICY`` (dict) and ``MCP_TOOLS`` (list)."""
        return cls(module.POLICY, module.MCP_TOOLS, **options)

    # -- introspection ---------------------------------------------------------------------------

    def tool_names(self) -> list[str]:
        return sorted(self.specs)

    def catalog(self) -> list[dict[str, Any]]:
        """The MCP catalog entries (name, title, description, inputSchema, outputSchema, annotations)."""
        return [self.specs[n].catalog for n in self.tool_names()]

    def row(self, tool: str) -> dict[str, Any]:
        return self.specs[tool].row

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

    def call(self, tool: str, args: Any, *, actor: Actor,
             approval: Approval | str | None = None, timeout_ms: int | None = None,
             dialect: str | None = None) -> CallResult:
        """Run one tool call synchronously through the call path.

        Never raises, whatever the caller passes and whatever the API answers: every failure is a
        ``CallResult(ok=False, error=ToolError(...))`` (``invalid_arguments`` with a JSON pointer for
        anything wrong with `args`, checked before a receipt is written or a byte is sent), and a
        call never leaves its idempotency receipt ``pending``. `timeout_ms` can only lower the
        row's timeout bound; it never shortens another call's in-flight window. `dialect`: the
        catalog the caller's model saw (``openai``, ``gemini``...); its argument rewrites are undone
        first (`toolgen.runtime.dialect_args`). None: the arguments are canonical (MCP)."""
        gen = self._pipeline(tool, args, actor, approval, timeout_ms, dialect)
        try:
            effect = next(gen)
            while True:
                if isinstance(effect, _Sleep):
                    time.sleep(effect.seconds)
                    effect = gen.send(None)
                else:
                    effect = gen.send(self._send_sync(effect))
        except StopIteration as stop:
            result: CallResult = stop.value
            return result
        except Exception as exc:  # noqa: BLE001 - the promise: a call never raises
            return self._crashed(tool, exc)
        except BaseException:  # KeyboardInterrupt, SystemExit: settle the receipt, then let it go on
            gen.close()
            raise

    async def acall(self, tool: str, args: Any, *, actor: Actor,
                    approval: Approval | str | None = None, timeout_ms: int | None = None,
                    dialect: str | None = None) -> CallResult:
        """`call` for asyncio (httpx.AsyncClient); same call path, same results, same guarantees."""
        gen = self._pipeline(tool, args, actor, approval, timeout_ms, dialect)
        try:
            effect = next(gen)
            while True:
                if isinstance(effect, _Sleep):
                    await asyncio.sleep(effect.seconds)
                    effect = gen.send(None)
                else:
                    effect = gen.send(await self._send_async(effect))
        except StopIteration as stop:
            result: CallResult = stop.value
            return result
        except Exception as exc:  # noqa: BLE001 - the promise: a call never raises
            return self._crashed(tool, exc)
        except BaseException:  # cancellation: the receipt is settled (unknown) now, not at garbage collection
            gen.close()
            raise

    def _crashed(self, tool: Any, exc: Exception) -> CallResult:
        """The result of a call whose path failed before it held a receipt (a runtime bug); the
        call path settles any receipt it holds itself."""
        name = str(tool)[:200]
        try:
            self.audit.emit(AuditEvent(time.time(), "", name, "", "result", "error", None, "internal_error",
                                       {"error": type(exc).__name__}))
        except Exception:  # noqa: BLE001, S110 - the audit sink failing must not turn into a raise either
            pass
        spec = self.specs.get(name)
        return CallResult(name, False, error=make_error(
            "internal_error", f"{name}: the runtime failed while handling the call ({type(exc).__name__}).",
            result_known=not (spec is not None and spec.mutating)))

    # -- drivers ---------------------------------------------------------------------------------
    # A driver performs the IO the call path yields and never raises: whatever the HTTP client
    # throws becomes an `_Outcome` the call path classifies.

    def _send_sync(self, send: _Send) -> _Outcome:
        if self._client is None:
            self._client = httpx.Client(follow_redirects=False)
        if not self._deadlines_checked:
            self._deadlines_checked = True
            ensure_deadlines(self._client)
        started = time.perf_counter()
        send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
        try:
            with attempt_deadline(send.timeout_s):  # the whole attempt: every socket operation (deadline.py)
                return self._exchange_sync(self._client, send, started)
        except Exception as exc:  # noqa: BLE001 - see _failure_kind
            return _Outcome(kind=_failure_kind(exc), elapsed_ms=(time.perf_counter() - started) * 1000,
                            cause=failure_cause(exc))

    @staticmethod
    def _exchange_sync(client: httpx.Client, send: _Send, started: float) -> _Outcome:
        response = client.send(send.request, stream=True)
        try:  # raw bytes, decoded within the size cap (content_coding.py): a gzip bomb never inflates
            whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
            decoder = BoundedDecoder(None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES)
            chunks: list[bytes] = []
            for chunk in response.iter_bytes() if whole else response.iter_raw():
                chunks.append(decoder.feed(chunk))
                if time.perf_counter() - started > send.timeout_s:  # a body trickling in past the deadline
                    return _Outcome(kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)
            chunks.append(decoder.finish())
        except BodyTooLarge:
            return _Outcome(status=response.status_code, kind="too_large")
        finally:
            response.close()
        return _Outcome(response.status_code, response.headers, b"".join(chunks),
                        elapsed_ms=(time.perf_counter() - started) * 1000)

    async def _send_async(self, send: _Send) -> _Outcome:
        if self._aclient is None:
            self._aclient = httpx.AsyncClient(follow_redirects=False)
        started = time.perf_counter()
        send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
        try:
            with anyio.fail_after(send.timeout_s + 0.05):  # the whole attempt, not each socket read
                return await self._exchange_async(self._aclient, send, started)
        except TimeoutError:
            return _Outcome(kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)
        except Exception as exc:  # noqa: BLE001 - see _failure_kind
            return _Outcome(kind=_failure_kind(exc), elapsed_ms=(time.perf_counter() - started) * 1000,
                            cause=failure_cause(exc))

    @staticmethod
    async def _exchange_async(client: httpx.AsyncClient, send: _Send, started: float) -> _Outcome:
        response = await client.send(send.request, stream=True)
        try:  # raw bytes, decoded within the size cap (content_coding.py)
            whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
            decoder = BoundedDecoder(None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES)
            chunks: list[bytes] = []
            async for chunk in response.aiter_bytes() if whole else response.aiter_raw():
                chunks.append(decoder.feed(chunk))
            chunks.append(decoder.finish())
        except BodyTooLarge:
            return _Outcome(status=response.status_code, kind="too_large")
        finally:
            await response.aclose()
        return _Outcome(response.status_code, response.headers, b"".join(chunks),
                        elapsed_ms=(time.perf_counter() - started) * 1000)

    # -- the call path ---------------------------------------------------------------------------

    def _pipeline(self, tool: str, raw_args: Any, actor: Actor,
                  approval: Approval | str | None, timeout_override_ms: int | None,
                  dialect: str | None = None) -> _Pipeline:
        call_id = secrets.token_hex(8)
        fp: str | None = None
        secret_values: list[str] = []
        shown: dict[str, Any] | None = None  # the request a record executing a stored preview sends
        if isinstance(approval, str):  # a bare preview_id is an approval of that preview
            approval = Approval(approval)

        audit_failures: list[str] = []

        def emit(step: str, decision: str, code: str | None = None, **detail: Any) -> None:
            """Audit one decision. A failing sink never breaks the call; it only stops a call that
            has not sent anything yet (below: nothing is sent unaudited)."""
            try:
                self.audit.emit(AuditEvent(time.time(), call_id, tool, actor.id, step, decision, fp, code,
                                           _scrub(detail, secret_values)))
            except Exception as exc:  # noqa: BLE001 - the sink's own failure
                audit_failures.append(type(exc).__name__)

        def store(op: str, *args: Any) -> None:
            """A receipt-store update after the request was sent: a store failure (Redis down, SQLite
            locked) must not hide the call's real outcome, so it is audited and the call goes on."""
            try:
                getattr(self.receipts, op)(*args)
            except Exception as exc:  # noqa: BLE001 - any store failure is reported, never raised
                emit("idempotency", "store_failed", "receipt_store_unavailable", operation=op,
                     error=type(exc).__name__)

        def fail(step: str, error: ToolError, **extra: Any) -> CallResult:
            error.message = _scrub(error.message, secret_values)
            error.details = _scrub(error.details, secret_values)
            if error.next_step:
                error.next_step = _scrub(error.next_step, secret_values)
            if shown is not None and "request" not in error.details:
                error.details["request"] = _scrub(shown, secret_values)
            emit(step, "deny" if error.category in ("policy", "validation") else "fail", error.code,
                 **{k: v for k, v in error.details.items() if k in ("pointer", "missing", "status")})
            emit("result", "error", error.code)
            return CallResult(tool, False, error=error, fingerprint=fp, call_id=call_id, **extra)

        # 1. find tool
        spec = self.specs.get(tool) if isinstance(tool, str) else None
        if spec is None:
            return fail("find", make_error("unknown_tool", f"There is no tool named {str(tool)[:200]!r}.",
                                           details={"tool": str(tool)[:200], "available": self.visible_tools(actor)}))
        row = spec.row
        emit("find", "allow", mode=row.get("mode"), effect=row.get("effect"))
        hidden = _permission_error(tool, row, actor)
        if hidden is not None:  # a tool the actor may not see: refused before its arguments are read
            return fail("permission", hidden)

        # 2. validate arguments: plain JSON, the canonical input schema, closed nested objects, then
        #    the request itself (every value must reach the wire exactly as the preview shows it)
        try:
            args = plain_arguments(raw_args)
            if dialect is not None:
                if dialect not in KNOWN_DIALECTS:
                    raise make_error("invalid_arguments", f"Unknown dialect {str(dialect)[:40]!r}; known: "
                                     f"{', '.join(KNOWN_DIALECTS)}.", details={"pointer": "", "dialect": str(dialect)[:40]})
                if dialect in spec.rewrites:
                    args = decode_arguments(args, spec.rewrites[dialect])
            args = normalise_nulls(args, spec.input_schema, spec.send_null)
        except ToolError as exc:
            return fail("validate", exc)
        if not spec.input_validator.is_valid(args):
            errors = [_describe_error(e) for e in spec.input_validator.iter_errors(args)]
            errors.sort(key=lambda e: (e["pointer"].count("/"), e["pointer"]))
            first = errors[0]
            where = f"argument {first['pointer']}" if first["pointer"] else "arguments"
            return fail("validate", make_error(
                "invalid_arguments",
                f"Invalid {where}: {first['message']}"[:500],
                details={"pointer": first["pointer"], "keyword": first["keyword"], "errors": errors[:5]},
            ))
        undeclared = undeclared_member(args, spec.input_schema)
        if undeclared is not None:
            return fail("validate", invalid_argument(
                undeclared, "the schema declares no such property; remove it"))
        idem = row.get("idempotency") if row.get("mode") == "record" else None
        idem_arg = idem.get("arg") if idem else None
        # a record that executes a stored preview: its arguments are the preview's, as stored
        executes = self._executes_preview(row)
        preview_id = str(args.get("preview_id", "")) if executes else None
        required = required_scopes(row)
        if preview_id is not None:
            try:
                stored_args = self._stored_arguments(spec, preview_id, actor)
            except ToolError as exc:
                return fail("validate", exc)
            if idem_arg and idem_arg in args:
                stored_args[str(idem_arg)] = args[idem_arg]
            args = stored_args
        pagination = row.get("pagination")
        cursor_payload: dict[str, Any] | None = None
        if pagination:
            cursor_arg = pagination.get("cursor_arg") or "cursor"
            token = args.get(cursor_arg)
            if token is not None:
                try:
                    if not isinstance(token, str):
                        raise make_error("invalid_cursor", "The cursor must be a string issued by this tool.",
                                         details={"pointer": "/" + cursor_arg})
                    cursor_payload = self.cursors.decode(f"{self.api}/{tool}", token)
                except ToolError as exc:
                    exc.details["pointer"] = "/" + cursor_arg
                    return fail("validate", exc)
        try:
            extra_query, page_size, position, skip, link_url = self._pagination_params(row, args, cursor_payload)
            built = build_request(row, args, base_url=self.base_url, extra_query=extra_query)
        except ToolError as exc:
            if preview_id is not None and exc.details.get("pointer") != f"/{idem_arg}":  # not the caller's key
                return fail("validate", make_error(
                    "preview_mismatch", f"The stored preview {preview_id[:24]}… no longer builds a request "
                    f"({exc.message[:200]}); nothing was sent.", details={"pointer": "/preview_id"}))
            return fail("validate", exc)
        except (ValueError, KeyError, TypeError) as exc:
            return fail("request", make_error("internal_error", f"Could not build the request: {type(exc).__name__}."))
        if link_url is not None:
            built.url = link_url
            built.canonical = {**built.canonical, "url": link_url}
        fp = fingerprint(spec.intent, built.canonical)
        if preview_id is not None:
            if fp != preview_id:
                # the stored arguments (or the policy) changed since the preview: what would be sent is
                # not what was shown and approved
                return fail("validate", make_error(
                    "preview_mismatch",
                    f"The stored preview {preview_id[:24]}… builds another request than the one previewed; "
                    "nothing was sent.", details={"pointer": "/preview_id", "rebuilt_preview_id": fp}))
            shown = self._display(row, built)
        emit("validate", "allow")

        # 3. permission (held since step 1: a tool the actor may not use is refused before validation)
        emit("permission", "allow", required=required)

        # 4. approval (separate from permission; bound to the canonical request of the preview). It is
        #    checked here and spent only once the request is about to be sent (below).
        needs_approval = row.get("mode") == "record" and row.get("approval") == "required"
        approval_until: float | None = None  # until when the approval can be presented (None: always)
        preview_tool = row.get("pair") or "preview_" + spec.intent
        issued = self.approvals == "issued"
        if needs_approval and issued and preview_id is not None and (approval is None or not approval.approval_id):
            return fail("approval", make_error(
                "approval_required",
                f"{tool} needs a human approval of preview {preview_id[:24]}… issued by this runtime"
                + (": a preview_id alone is not an approval here." if approval is not None else "."),
                details={"preview_tool": preview_tool, "preview_id": preview_id, "approvals": "issued"},
                next_step=issue_next_step(self.api, tool, preview_id, actor.id),
            ))
        if needs_approval:
            if approval is None and preview_id is not None:
                return fail("approval", make_error(
                    "approval_required",
                    f"{tool} needs a human approval of preview {preview_id[:24]}….",
                    details={"preview_tool": preview_tool, "preview_id": preview_id},
                    next_step="Show the previewed request to a human, get this preview_id approved, then call "
                              "again with the approval.",
                ))
            if approval is None:
                return fail("approval", make_error(
                    "approval_required",
                    f"{tool} needs a human approval of its preview: call {preview_tool} with the same "
                    "arguments and pass the approved preview_id.",
                    details={"preview_tool": preview_tool},
                    next_step=f"Call {preview_tool} with these arguments (without {idem_arg or 'the key'}), "
                              "get its preview_id approved, then call again with the approval.",
                ))
            if approval.preview_id != fp:
                return fail("approval", make_error(
                    "approval_mismatch",
                    f"The approval was given for preview {str(approval.preview_id)[:20]}…, not for this request.",
                    details={"preview_tool": preview_tool, "approved_preview_id": str(approval.preview_id)[:80]},
                ))
            if issued:
                try:
                    approval, approval_until = self._issued(spec, approval, fp, actor)
                except ToolError as exc:
                    return fail("approval", exc)

        # 5. timeout bound
        retry = row.get("retry") or {}
        timeout_ms = int(row.get("timeout_ms") or 5000)
        max_attempts = max(1, int(retry.get("max_attempts") or 1))
        row_deadline_ms = max(int(retry.get("deadline_ms") or timeout_ms * max_attempts), timeout_ms)
        if timeout_override_ms is not None:
            try:
                timeout_ms = max(1, min(timeout_ms, int(timeout_override_ms)))
            except (TypeError, ValueError, OverflowError):
                return fail("validate", invalid_argument((), "timeout_ms must be a whole number of milliseconds"))
        deadline_ms = int(retry.get("deadline_ms") or timeout_ms * max_attempts)
        if timeout_override_ms is not None:
            deadline_ms = min(deadline_ms, timeout_ms * max_attempts)
        deadline_ms = max(deadline_ms, timeout_ms)
        started = time.monotonic()
        deadline = started + deadline_ms / 1000.0
        emit("timeout", "allow", timeout_ms=timeout_ms, deadline_ms=deadline_ms, max_attempts=max_attempts)

        if row.get("mode") == "preview":
            view = self._display(row, built)
            op = row["operation"]
            preview = {
                "preview_id": fp,
                "request": view,
                "effect": self._previewed_effect(row),
                "side_effects": f"Sends {op['method'].upper()} {op['path']}"
                                + (f" ({op['id']})." if op.get("id") else "."),
                "approval_required": self._record_needs_approval(row),
                "record_tool": row.get("pair") or "record_" + spec.intent,
            }
            blockers = self._preview_blockers(row, built, str(preview["record_tool"]))
            if blockers:
                preview["cannot_send"] = blockers
            record_spec = self.specs.get(str(preview["record_tool"]))
            if record_spec is not None and self._executes_preview(record_spec.row):
                # store what the record tool executes: these validated, normalised arguments
                ttl = int((record_spec.row.get("record") or {}).get("preview_ttl_s") or DEFAULT_PREVIEW_TTL_S)
                now = time.time()
                try:
                    self.preview_store().put(StoredPreview(
                        f"{self.api}/{record_spec.name}", actor.id, fp, spec.intent, args, now, now + ttl))
                except Exception as exc:  # noqa: BLE001 - any store outage: no preview_id to execute
                    return fail("preview", make_error(
                        "receipt_store_unavailable",
                        f"{tool}: the preview store could not keep this preview ({type(exc).__name__}), so "
                        f"{record_spec.name} could not execute it.",
                        details={"store": type(self.receipts).__name__}))
                preview["expires_in_s"] = ttl
                emit("preview", "stored", ttl_s=ttl)
            emit("http", "skip", reason="preview")
            emit("result", "ok")
            return CallResult(tool, True, result=preview, fingerprint=fp, call_id=call_id)

        # the wire request: the canonical one plus the key and the credentials, nothing else
        try:
            injected = creds.resolve(list(row.get("auth") or []), self.credentials, tool=tool)
        except ToolError as exc:
            return fail("request", exc)
        secret_values.extend(_secret_forms(injected.secret_values))
        wire = built.with_credentials(injected)
        try:
            http_request = httpx.Request(wire.method, wire.url, headers=transport_headers(wire.headers),
                                         content=wire.content)
            sent_url = str(http_request.url)
        except Exception as exc:  # noqa: BLE001 - an unsendable URL or header: nothing was sent
            return fail("request", make_error(
                "internal_error", f"{tool}: the HTTP client refused the request ({type(exc).__name__}); nothing was sent."))
        if sent_url != wire.url:
            return fail("request", make_error(
                "internal_error",
                f"{tool}: the HTTP client would send another URL than the previewed one; nothing was sent.",
                details={"previewed_url": wire.display()["url"], "client_url": _scrub(sent_url, secret_values)}))

        # 6. idempotency
        scope = f"{self.api}/{tool}"
        key: str | None = None
        forwarded = bool(idem and idem.get("in") in ("header", "query", "body"))
        honoured = forwarded and bool(idem and idem.get("honoured_by_api")) and self.resend_unknown
        if idem and idem_arg:
            key_value = args.get(idem_arg)
            key = None if key_value is None else str(key_value)
            if key is not None and not key.strip():
                return fail("validate", invalid_argument((str(idem_arg),), "an idempotency key may not be blank"))
        # the owner's worst case: its deadline, plus one socket read that started just before it
        lease_ms = deadline_ms + timeout_ms + _LEASE_MARGIN_MS
        decision = "new"
        if key is not None:
            try:
                existing = self.receipts.begin(scope, key, fp, actor.id, lease_ms)
            except Exception as exc:  # noqa: BLE001 - any store outage (Redis down, SQLite locked): nothing sent yet
                return fail("idempotency", make_error(
                    "receipt_store_unavailable",
                    f"{tool}: the receipt store could not record the idempotency key ({type(exc).__name__}); "
                    "the request was not sent.",
                    details={"store": type(self.receipts).__name__},
                ))
            if existing is not None:
                decision = self._receipt_decision(existing, fp, honoured, row_deadline_ms + _LEASE_MARGIN_MS)
                if decision == "replay":
                    emit("idempotency", "replay", original_actor=existing.actor)
                    emit("result", "ok", replayed=True)
                    return CallResult(tool, True, result=_scrub(_reshaped(spec, existing.result), secret_values),
                                      replayed=True,
                                      fingerprint=fp, status=existing.status, call_id=call_id, idempotency_key=key,
                                      request=shown)
                if decision == "conflict":
                    return fail("idempotency", make_error(
                        "idempotency_conflict",
                        f"The key {idem_arg}={key!r} was already used by {tool} with a different request.",
                        details={"key_arg": idem_arg, "pointer": "/" + str(idem_arg)},
                    ))
                if decision == "in_progress":
                    return fail("idempotency", make_error(
                        "idempotency_in_progress",
                        f"A call of {tool} with {idem_arg}={key!r} is still in flight.",
                        details={"key_arg": idem_arg, "retry_after": 1.0},
                    ))
                if decision == "unknown":
                    if existing.state == "pending":  # its owner is gone (lease over): say so in the store
                        store("mark_unknown", scope, key)
                    return fail("idempotency", self._unknown_error(
                        spec, f"An earlier call of {tool} with {idem_arg}={key!r} was interrupted; whether it "
                              "took effect is unknown, and this API is not declared to deduplicate the key, so "
                              "it is not re-sent.",
                        honoured=False, details={"key_arg": idem_arg, "receipt_state": existing.state}))
                store("resume", scope, key, lease_ms)
                emit("idempotency", "resend", receipt_state=existing.state)
            else:
                emit("idempotency", "new")

        # from here on this call holds the receipt: however the call ends, it never stays pending
        held = {"open": key is not None}

        def settle(op: str, *extra: Any) -> None:
            if held["open"] and key is not None:
                store(op, scope, key, *extra)
            held["open"] = False

        def unaudited() -> CallResult | None:
            """Nothing is sent unaudited: once the audit sink failed, the call stops here, settling
            the receipt it holds (released when this call created it)."""
            if not audit_failures:
                return None
            settle("release" if decision == "new" else "mark_unknown")
            return fail("audit", make_error(
                "internal_error", f"{tool}: the audit sink failed ({audit_failures[0]}); nothing was sent."))

        spend: tuple[str, str, str] | None = None  # (scope, digest, action) of an approval this call spent

        def unspend() -> None:
            """Give back the approval this call spent, when nothing was sent (see `_spend_approval`)."""
            if spend is not None:
                store("unspend", *spend)

        try:
            if (stopped := unaudited()) is not None:  # checked before the approval is spent, too
                return stopped
            # 4b. spend the approval on this action, now that it will be sent
            if needs_approval and approval is not None:
                try:
                    spend = self._spend_approval(tool, approval, key, call_id, actor, approval_until, preview_tool,
                                                 decision == "new")
                except ToolError as exc:
                    settle("release" if decision == "new" else "mark_unknown")
                    return fail("approval", exc)
                emit("approval", "allow", approved_by=approval.approved_by)
            if (stopped := unaudited()) is not None:
                unspend()  # nothing was sent: the approval is not spent either
                return stopped

            # 7. HTTP request, with bounded retries. What is known of a write only grows: once an
            #    attempt may have reached the API without a definitive answer, only the API's own
            #    success (or replay) makes the outcome known again.
            mutating = spec.mutating
            uncertain = mutating and decision == "resend"
            allowed = {str(c) for c in retry.get("on") or []}
            attempts = 0
            outcome: _Outcome | None = None
            while True:
                attempts += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0 and attempts > 1:
                    break
                outcome = yield _Send(http_request, max(0.001, min(timeout_ms / 1000.0, remaining)))
                emit("http", "send", attempt=attempts, status=outcome.status or None, failure=outcome.kind,
                     elapsed_ms=round(outcome.elapsed_ms, 1))
                if mutating and _may_have_applied(outcome):
                    uncertain = True
                condition = self._retry_condition(outcome, row)
                if condition is None:
                    break
                if mutating:
                    # re-sending a write is safe only where it cannot write twice: the API deduplicates
                    # the key, or nothing so far can have reached it
                    safe = honoured or (not uncertain and (outcome.kind == "connect" or condition in ("429", "425")))
                else:
                    safe = True
                if attempts >= max_attempts or not safe or (condition not in allowed and outcome.kind != "connect"):
                    break
                ra = None
                if condition == "429" and outcome.headers is not None:
                    ra = parse_retry_after(outcome.headers.get("retry-after"))
                delay = retry_delay(float(retry.get("backoff_ms") or 200), attempts, ra, self.retry_random)
                if time.monotonic() + delay >= deadline:
                    break
                emit("http", "retry", attempt=attempts, condition=condition, delay_ms=round(delay * 1000))
                yield _Sleep(delay)

            op_name = row["operation"].get("id") or f"{row['operation']['method']} {row['operation']['path']}"
            elapsed_ms = round((time.monotonic() - started) * 1000)
            assert outcome is not None
            timing = {"timeout_ms": timeout_ms, "deadline_ms": deadline_ms, "observed_ms": elapsed_ms,
                      "attempts": attempts}
            if outcome.kind in ("timeout", "broken", "connect", "too_large") and mutating and (
                    uncertain or outcome.kind == "too_large"):
                settle("mark_unknown")
                what = {"timeout": f"got no answer in time ({timeout_ms} ms)",
                        "broken": "lost the connection before the answer",
                        "connect": "could not reach the API on a later attempt",
                        "too_large": f"got an answer larger than {MAX_RESPONSE_BYTES} bytes"}[outcome.kind]
                return fail("http", self._unknown_error(
                    spec, f"{tool} sent the write but {what}; it may or may not have taken effect.",
                    honoured=honoured, details={**timing, "idempotency_key_forwarded": forwarded}),
                    attempts=attempts)
            if outcome.kind == "timeout":
                return fail("http", make_error(
                    "tool_timeout", f"{tool} exceeded its {timeout_ms} ms timeout.", details=timing),
                    attempts=attempts)
            target = scrub_url(str(http_request.url))
            cause = outcome.cause or "no cause reported"
            if outcome.kind == "broken":
                return fail("http", make_error(
                    "upstream_unavailable",
                    f"{tool}: the connection to {target} broke after {round(outcome.elapsed_ms)} ms, before an "
                    f"answer ({cause}).",
                    details={**timing, "operation": op_name, "url": target, "cause": cause}), attempts=attempts)
            if outcome.kind == "connect":
                settle("release")
                unspend()  # no attempt reached the API
                return fail("http", make_error(
                    "upstream_unavailable", f"{tool} could not reach the API at {target} ({op_name}): {cause}.",
                    details={"attempts": attempts, "operation": op_name, "url": target, "cause": cause},
                ), attempts=attempts)
            if outcome.kind == "too_large":
                return fail("http", make_error(
                    "upstream_error", f"{op_name} answered with more than {MAX_RESPONSE_BYTES} bytes.",
                    details={"status": outcome.status},
                ), attempts=attempts, status=outcome.status)

            status = outcome.status
            headers = outcome.headers or httpx.Headers()
            content = creds.scrub_bytes(outcome.content, secret_values) if secret_values else outcome.content
            body, unreadable = _decode_body(headers, content, (row.get("output") or {}).get("body"))
            if _may_hold_secret(content, secret_values, headers):
                body = _scrub(body, secret_values)
            success = [int(s) for s in row.get("success_status") or []]
            ok_status = (status in success if success else False) or 200 <= status < 300
            if not ok_status:
                error = from_http_response(status, headers, body if unreadable is None else None,
                                           operation=op_name, mutating=mutating)
                if "problem" in error.details:  # an API's error body: redacted and bounded like a result
                    error.details["problem"] = shrink(redact_anywhere(error.details["problem"], spec.redact_tree),
                                                      _MAX_PROBLEM_BYTES)[0]
                if mutating and forwarded and status == 409 and _key_in_use(body):
                    settle("mark_unknown")
                    return fail("http", make_error(
                        "idempotency_in_progress",
                        f"{op_name} says a request with this idempotency key is still being processed.",
                        details={**error.details, "key_arg": idem_arg}, result_known=False, retryable=True,
                        next_step="Wait, then retry with the same "
                                  f"{'preview_id' if preview_id is not None else 'arguments'} and the same key.",
                    ), attempts=attempts, status=status)
                if mutating and (uncertain or not error.result_known or 300 <= status < 400):
                    settle("mark_unknown")
                    return fail("http", self._unknown_error(
                        spec, f"{op_name} answered HTTP {status}, but an attempt may already have written; "
                              "whether the write took effect is unknown." if uncertain and error.result_known
                        else f"{op_name} answered HTTP {status}; the write may or may not have happened.",
                        honoured=honoured, details={**error.details, **timing}),
                        attempts=attempts, status=status)
                settle("release")
                unspend()  # the API refused the write: nothing took effect, so the approval is not spent
                return fail("http", error, attempts=attempts, status=status)

            # 8. validate + shape output
            if unreadable is not None:
                settle("mark_unknown")
                message = f"{op_name} answered HTTP {status} with a body that cannot be read ({unreadable})."
                if mutating:
                    return fail("output", self._unknown_error(
                        spec, message + " The API reported success, but what it did is not known.",
                        honoured=honoured, details={"status": status, "problem": unreadable}),
                        attempts=attempts, status=status)
                return fail("output", make_error("output_invalid", message,
                                                 details={"status": status, "problem": unreadable}),
                            attempts=attempts, status=status)
            warnings: list[str] = []
            try:
                result, omitted = self._shape(spec, body, status, headers, page_size, position, skip,
                                              cursor_payload, wire, secret_values)
            except ToolError as exc:
                settle("complete", {"status": status}, status)
                return fail("output", exc, attempts=attempts, status=status)
            mode = (row.get("output") or {}).get("schema_mode", "warn")
            if spec.output_validator is not None and mode != "off":
                problems = [] if spec.output_validator.is_valid(result) else list(spec.output_validator.iter_errors(result))
                if problems:
                    first = problems[0]
                    message = f"output {_pointer(first.instance_path) or '/'}: {first.message}"[:300]
                    if mode == "strict" and not mutating:
                        return fail("output", make_error(
                            "output_invalid", f"{tool}'s response does not match its output schema: {message}",
                            details={"pointer": _pointer(first.instance_path)},
                        ), attempts=attempts, status=status)
                    warnings.append(message)
                    emit("output", "warn", pointer=_pointer(first.instance_path))
            emit("output", "allow", bytes=None if not omitted else omitted)
            settle("complete", result, status)
            emit("result", "ok", status=status)
            return CallResult(tool, True, result=result, fingerprint=fp, status=status, attempts=attempts,
                              warnings=warnings, call_id=call_id, idempotency_key=key, request=shown)
        except Exception as exc:  # noqa: BLE001 - a fault in the call path never escapes as an exception
            settle("mark_unknown")
            return fail("result", make_error(
                "internal_error", f"{tool}: the runtime failed while handling the call ({type(exc).__name__}).",
                result_known=not spec.mutating, details={"receipt_state": "unknown" if key is not None else None}))
        finally:
            settle("mark_unknown")

    # -- issued approvals ------------------------------------------------------------------------

    def _resolve_record(self, record_tool: str) -> ToolSpec:
        spec = self.specs.get(record_tool) if isinstance(record_tool, str) else None
        if spec is None or spec.row.get("mode") != "record" or spec.row.get("approval") != "required":
            raise make_error(
                "unknown_tool", f"{str(record_tool)[:200]!r} is not an approval-gated record tool of {self.api}.",
                details={"tool": str(record_tool)[:200],
                         "available": sorted(n for n, s in self.specs.items()
                                             if s.row.get("mode") == "record" and s.row.get("approval") == "required")})
        if not self._executes_preview(spec.row):
            raise make_error(
                "preview_not_found", f"{record_tool} takes its full arguments (policy record.arguments: full), so "
                "there is no stored preview to approve; rebuild the package (approval-gated records execute their "
                "stored preview).", details={"tool": record_tool})
        return spec

    def approvable_request(self, record_tool: str, preview_id: str, actor_id: str) -> dict[str, Any]:
        """What a human approves: the request (``method``, ``url``, ``headers`` with credentials
        redacted, ``body``) that `record_tool` would send for the stored preview `preview_id` made
        by the actor `actor_id`, rebuilt exactly as the record call rebuilds it.

        Raises `ToolError`: ``unknown_tool`` (not an approval-gated record tool), ``preview_not_found``,
        ``preview_expired``, ``preview_mismatch`` (the stored preview no longer builds that request,
        e.g. another base URL), ``receipt_store_unavailable``."""
        spec = self._resolve_record(record_tool)
        args = self._stored_arguments(spec, str(preview_id), Actor.of(str(actor_id)))
        try:
            built = build_request(spec.row, args, base_url=self.base_url)
        except ToolError as exc:
            raise make_error("preview_mismatch", f"The stored preview {preview_id[:24]}… no longer builds a "
                             f"request ({exc.message[:200]}).", details={"pointer": "/preview_id"}) from None
        rebuilt = fingerprint(spec.intent, built.canonical)
        if rebuilt != preview_id:
            raise make_error(
                "preview_mismatch", f"The stored preview {preview_id[:24]}… builds another request here than the "
                "one previewed (is the base URL the server's?).",
                details={"pointer": "/preview_id", "rebuilt_preview_id": rebuilt})
        return self._display(spec.row, built)

    def issue_approval(self, record_tool: str, preview_id: str, *, approved_by: str, actor: str,
                       ttl_s: float = DEFAULT_APPROVAL_TTL_S) -> str:
        """Issue a human's approval of the stored preview `preview_id` of `record_tool`, made by the
        actor `actor`, and return its ``approval_id`` (43 URL-safe characters, 256 random bits).

        The preview must exist and rebuild its request (`approvable_request`; show that request to
        the human before calling this). The issue is audited (step ``approval``, decision ``issue``,
        with the approver) before the approval is stored on the receipt store's backend (its
        preview store, scope ``<api>/<record tool>#approval``, keyed by the SHA-256 of the id, with
        the ``preview_id``, `approved_by` and the approved request) for `ttl_s` seconds, bounded
        like previews per record tool and actor. In ``approvals="issued"`` mode a record call
        accepts it only for this record tool, this ``preview_id`` and this actor, before it expires;
        it is spent on one action like any approval.

        Raises `ValueError` (blank `approved_by`, `ttl_s` outside (0, `MAX_APPROVAL_TTL_S`]) and
        `ToolError` (as `approvable_request`; ``receipt_store_unavailable`` when it cannot be stored)."""
        by = str(approved_by).strip()
        if not by or len(by) > 255:
            raise ValueError("approved_by must name the approver (1 to 255 characters)")
        if not 0 < float(ttl_s) <= MAX_APPROVAL_TTL_S:
            raise ValueError(f"ttl_s must be more than 0 and at most {MAX_APPROVAL_TTL_S} seconds")
        request = self.approvable_request(record_tool, preview_id, actor)
        spec = self.specs[record_tool]
        approval_id = secrets.token_urlsafe(32)
        call_id = secrets.token_hex(8)
        now = time.time()
        try:  # audited before it exists: an approval the audit log does not show is never stored
            self.audit.emit(AuditEvent(now, call_id, record_tool, str(actor), "approval", "issue", preview_id, None,
                                       {"approved_by": by, "ttl_s": float(ttl_s)}))
        except Exception as exc:  # noqa: BLE001 - the sink's own failure
            raise make_error("internal_error", f"The audit sink failed ({type(exc).__name__}); no approval was "
                             "issued.") from None
        try:
            self.preview_store().put(approval_record(self.api, record_tool, spec.intent, str(actor), approval_id,
                                                     preview_id, by, request, now, float(ttl_s)))
        except Exception as exc:  # noqa: BLE001 - any store outage
            try:
                self.audit.emit(AuditEvent(time.time(), call_id, record_tool, str(actor), "approval", "fail",
                                           preview_id, "receipt_store_unavailable", {}))
            except Exception:  # noqa: BLE001, S110 - already failing; the store error is what is reported
                pass
            raise make_error("receipt_store_unavailable", f"The approval could not be stored ({type(exc).__name__}).",
                             details={"store": type(self.receipts).__name__}) from None
        return approval_id

    def _spend_approval(self, tool: str, approval: Approval, key: str | None, call_id: str, actor: Actor,
                        until: float | None, preview_tool: str, fresh: bool) -> tuple[str, str, str] | None:
        """Spend `approval` on this action (its idempotency `key`, else this single call) in the
        receipt store (`ReceiptStore.spend`), until it can no longer be presented (`until`: an issued
        approval's expiry; ``None``, a client approval, which can be presented at any time: kept
        forever). Returns ``(scope, digest, action)`` when this call spent it (the caller gives it
        back with ``unspend`` when nothing was sent), ``None`` when the same action had spent it
        before (a retry of that key). `fresh`: this call created the key's receipt, so no earlier
        call of the key is pending, unknown or stored; an earlier call that spent the approval on
        the key was then answered and its receipt forgotten (purged, or Redis ``completed_ttl``),
        since a call the API refused gives its approval back: the approval was used. Raises
        `ToolError`: ``approval_used`` (spent on another action, or on this key by a call whose
        receipt the store forgot), ``receipt_store_unavailable`` (nothing sent)."""
        token = str(approval.approval_id or approval.preview_id)
        action = "action:" + (f"key:{key}" if key is not None else f"call:{call_id}")
        scope = approval_scope(self.api, tool)
        digest = spend_digest(scope, token)
        try:
            bound = self.receipts.spend(scope, digest, action, actor.id, until)
        except Exception as exc:  # noqa: BLE001 - any store outage: refuse before sending anything
            raise make_error("receipt_store_unavailable", f"{tool}: the receipt store could not record the approval "
                             f"({type(exc).__name__}); nothing was sent.",
                             details={"store": type(self.receipts).__name__}) from None
        if bound is None:
            return scope, digest, action
        if bound != action or fresh:
            raise make_error("approval_used", f"The approval of {str(approval.preview_id)[:20]}… was already used "
                             + ("by an earlier call with this key." if fresh and bound == action
                                else "for another action."), details={"preview_tool": preview_tool},
                             next_step=f"Call {preview_tool} again and get a new approval for this action.")
        return None

    def _issued(self, spec: ToolSpec, approval: Approval, fp: str, actor: Actor) -> tuple[Approval, float]:
        """The issued approval `approval.approval_id` of `spec` for the request `fp` made by `actor`,
        as an `Approval` carrying the approver the runtime recorded (never the caller's word), and
        its expiry (Unix seconds). Raises
        `ToolError`: ``approval_required`` (no such approval issued for this record tool and actor, or
        expired), ``approval_mismatch`` (issued for another preview), ``receipt_store_unavailable``."""
        tool = spec.name
        approval_id = str(approval.approval_id or "")
        try:
            record = self.preview_store().get(approval_scope(self.api, tool), actor.id, approval_key(approval_id))
        except (ValueError, TypeError, KeyError):  # an entry that does not decode is no approval
            record = None
        except Exception as exc:  # noqa: BLE001 - any store outage: nothing is sent
            raise make_error("receipt_store_unavailable", f"{tool}: the approval store could not be read "
                             f"({type(exc).__name__}); nothing was sent.",
                             details={"store": type(self.receipts).__name__}) from None
        approved_by = check_issued(record, api=self.api, tool=tool, intent=spec.intent, fp=fp, actor_id=actor.id,
                                   now=time.time())
        assert record is not None  # check_issued refuses a missing record
        return Approval(fp, approved_by=approved_by, approval_id=approval_id), record.expires_at

    def preview_store(self) -> PreviewStore:
        """The store of previews that record tools execute: the one passed in, else the receipt
        store's (``receipts.previews()``; opened on first use, so a store outage is a call's
        ``receipt_store_unavailable``, never a failure to load), else one in memory."""
        if self._previews is None:
            opener = getattr(self.receipts, "previews", None)
            self._previews = opener() if callable(opener) else MemoryPreviewStore()
        return self._previews

    @staticmethod
    def _executes_preview(row: Mapping[str, Any]) -> bool:
        """Whether a record row executes a stored preview (policy ``record.arguments`` =
        ``preview``). Rows without ``record`` (an earlier policy.json) take the full arguments."""
        record = row.get("record")
        return row.get("mode") == "record" and isinstance(record, dict) and record.get("arguments") == "preview"

    @staticmethod
    def _display(row: Mapping[str, Any], built: BuiltRequest) -> dict[str, Any]:
        """The request as a preview shows it: `BuiltRequest.display` with every credential header the
        row declares redacted."""
        view = built.display()
        for entry in row.get("auth") or []:
            where, name = entry.get("in", "header"), entry.get("name") or "Authorization"
            if where == "header":
                view["headers"][name] = "[redacted]"
        return view

    def _stored_arguments(self, spec: ToolSpec, preview_id: str, actor: Actor) -> dict[str, Any]:
        """The canonical arguments of the stored preview `preview_id` of `spec`'s record tool made
        by `actor`, validated again against the preview tool's input schema. Raises `ToolError`:
        ``receipt_store_unavailable`` (store outage), ``preview_not_found``, ``preview_expired``
        (both pointing at ``/preview_id``), ``preview_mismatch`` (the stored entry is not valid
        for this tool)."""
        pointer = {"pointer": "/preview_id"}
        preview_tool = str(spec.row.get("pair") or "preview_" + spec.intent)
        try:
            stored: StoredPreview | None = self.preview_store().get(f"{self.api}/{spec.name}", actor.id, preview_id)
        except (ValueError, TypeError, KeyError):  # an entry that does not decode: changed behind the runtime
            raise make_error(
                "preview_mismatch", f"The stored preview {preview_id[:24]}… of {spec.name} cannot be read; nothing "
                "was sent.", details={**pointer, "preview_tool": preview_tool}) from None
        except Exception as exc:  # noqa: BLE001 - any store outage: nothing is sent
            raise make_error(
                "receipt_store_unavailable",
                f"{spec.name}: the preview store could not be read ({type(exc).__name__}); nothing was sent.",
                details={"store": type(self.receipts).__name__}) from None
        if stored is None:
            raise make_error(
                "preview_not_found",
                f"No preview {preview_id[:24]}… of {spec.name} was stored for actor {actor.id!r}.",
                details={**pointer, "preview_tool": preview_tool},
                next_step=f"Call {preview_tool} with the arguments, then pass the preview_id it returns.")
        if stored.expired(time.time()):
            raise make_error(
                "preview_expired", f"The preview {preview_id[:24]}… of {spec.name} expired.",
                details={**pointer, "preview_tool": preview_tool},
                next_step=f"Call {preview_tool} again with the same arguments (same preview_id), then call "
                          f"{spec.name} again.")
        pair = self.specs.get(preview_tool)
        arguments = stored.arguments
        if (stored.intent != spec.intent or pair is None or not pair.input_validator.is_valid(arguments)
                or undeclared_member(arguments, pair.input_schema) is not None):
            raise make_error(
                "preview_mismatch",
                f"The stored preview {preview_id[:24]}… does not hold valid arguments of {preview_tool}; "
                "nothing was sent.", details={**pointer, "preview_tool": preview_tool})
        return dict(arguments)

    def _preview_blockers(self, row: Mapping[str, Any], built: Any, tool: str) -> list[str]:
        """Why the record call of a preview would not send the request it shows (empty when it
        would): a credential the runtime does not have, or a URL the HTTP client would change."""
        blockers: list[str] = []
        try:
            creds.resolve(list(row.get("auth") or []), self.credentials, tool=tool)
        except ToolError as exc:
            blockers.append(f"{exc.code}: {exc.message}")
        try:
            if str(httpx.URL(built.url)) != built.url:
                blockers.append("internal_error: the HTTP client would send another URL than the one shown")
        except Exception as exc:  # noqa: BLE001 - an unparsable URL is reported, never raised
            blockers.append(f"internal_error: the URL cannot be sent ({type(exc).__name__})")
        return blockers

    def _unknown_error(self, spec: ToolSpec, message: str, *, honoured: bool, details: dict[str, Any]) -> ToolError:
        """``result_unknown``: the write may or may not have taken effect. The next step says how to
        find out (the read tools of the same resource) or, where the API deduplicates the key, to
        retry with the same key."""
        idem = spec.row.get("idempotency") or {}
        key_arg = idem.get("arg") or "the key"
        checks = ", ".join(spec.check_tools)
        look = f"Read the current state first ({checks})" if checks else "Read the current state first"
        same = "preview_id" if self._executes_preview(spec.row) else "arguments"
        if honoured:
            step = (f"Retry with the same {same} and the same {key_arg}: the API deduplicates it, so it "
                    "cannot write twice.")
        else:
            step = (f"{look}. If the write did not happen, call again with a new {key_arg}; do not simply "
                    "repeat the call: this API is not declared to deduplicate the key, so the runtime does "
                    "not re-send it.")
        return make_error("result_unknown", message, details={**details, "check_tools": list(spec.check_tools)},
                          result_known=False, retryable=honoured, next_step=step)

    # -- helpers of the call path ------------------------------------------------------------------


    def _previewed_effect(self, row: Mapping[str, Any]) -> str:
        pair = row.get("pair")
        if pair and pair in self.specs:
            return str(self.specs[pair].row.get("effect", "write"))
        effect = str(row.get("effect", "write"))
        return effect if effect != "read" else "write"

    def _record_needs_approval(self, row: Mapping[str, Any]) -> bool:
        pair = row.get("pair")
        if pair and pair in self.specs:
            return self.specs[pair].row.get("approval") == "required"
        return True

    @staticmethod
    def _receipt_decision(existing: Receipt, fp: str, honoured: bool, fallback_lease_ms: int) -> str:
        """replay | conflict | in_progress | unknown | resend for an existing receipt. A ``pending``
        receipt is in flight for the lease its owner stored (`Receipt.in_flight`), whatever this
        caller's deadline; after it, or once ``unknown``, the write is re-sent only to an API that
        deduplicates the key."""
        if existing.fingerprint != fp:
            return "conflict"
        if existing.state == "completed":
            return "replay"
        if existing.in_flight(time.time(), fallback_lease_ms):
            return "in_progress"
        return "resend" if honoured else "unknown"

    @staticmethod
    def _retry_condition(outcome: _Outcome, row: Mapping[str, Any]) -> str | None:
        """The retry condition an outcome matches (``timeout``, ``connect``, or the HTTP status as a
        string), or ``None`` when the outcome is final."""
        if outcome.kind in ("timeout", "broken"):
            return "timeout"
        if outcome.kind == "connect":
            return "connect"
        if outcome.kind is None and outcome.status in (408, 425, 429, 500, 502, 503, 504):
            return str(outcome.status)
        return None

    def _pagination_params(self, row: Mapping[str, Any], args: Mapping[str, Any],
                           cursor: dict[str, Any] | None) -> tuple[list[tuple[str, str]], int, Any, int, str | None]:
        """(extra query pairs, page size, API position, items to skip, next-page URL for link style)."""
        pagination = row.get("pagination")
        if not pagination:
            return [], 0, None, 0, None
        max_size = int(pagination.get("max_page_size") or 100)
        min_size = int(pagination.get("min_page_size") or 1)
        page_size = args.get(pagination.get("page_size_arg") or "page_size")
        if not isinstance(page_size, int) or isinstance(page_size, bool):
            page_size = int(pagination.get("default_page_size") or 20)
        page_size = max(min_size, min(page_size, max_size))
        position = cursor.get("c") if cursor else None
        first = pagination.get("first_position")
        if position is None and isinstance(first, int) and pagination.get("style") in ("page", "offset"):
            # the first page of a page/offset walk starts at the API's first page number (or offset),
            # sent when the parameter is required (else the API's own default applies)
            position = first if pagination.get("first_required") else None
        skip = int(cursor.get("s") or 0) if cursor else 0
        if cursor is not None and int(cursor.get("n") or page_size) != page_size:
            # the page geometry is part of the position for offset/page styles
            page_size = int(cursor.get("n") or page_size)
        query: list[tuple[str, str]] = []
        style = pagination.get("style")
        limit_param = pagination.get("limit_param")
        cursor_param = pagination.get("cursor_param")
        link_url: str | None = None
        if style == "link" and position:
            link_url = str(position)
            if not self._same_origin(link_url):
                raise make_error("invalid_cursor", "The cursor points outside this API.",
                                 details={"pointer": "/" + (pagination.get("cursor_arg") or "cursor")})
            return [], page_size, position, skip, link_url
        if limit_param:
            query.append((str(limit_param), str(page_size)))
        if position is not None and cursor_param:
            query.append((str(cursor_param), str(position)))
        return query, page_size, position, skip, link_url

    def _same_origin(self, url: str) -> bool:
        """Whether `url` is an absolute URL of the API's own origin (RFC 6454: scheme, host and
        port equal to the base URL's), without userinfo. A text prefix is not enough:
        ``https://api.example.com.evil.net`` and ``https://api.example.com@evil.net`` start with
        the origin's text."""
        try:
            target, base = httpx.URL(url), httpx.URL(self.base_url)
        except Exception:  # noqa: BLE001 - an unparsable URL is simply not ours
            return False
        return (target.is_absolute_url and not target.userinfo and target.scheme == base.scheme
                and target.host == base.host and target.port == base.port)

    def _link_position(self, raw: str, request: BuiltRequest, secret_values: list[str]) -> str | None:
        """The next-page URL of a ``Link`` header made safe to keep in a cursor: resolved against the
        request URL (RFC 8288 allows relative targets), on the API's own origin only, and stripped of
        the credential query parameters the runtime adds itself (an API that copies its query into
        the link would otherwise put the key into a readable cursor). ``None`` (the last page) for
        a target elsewhere, or one that still holds a secret, as is or once percent-decoded."""
        try:
            url = httpx.URL(request.url).join(raw)
        except Exception:  # noqa: BLE001 - an unparsable link ends the walk
            return None
        if not self._same_origin(str(url)):
            return None
        if request.redact_query:
            kept = [(k, v) for k, v in url.params.multi_items() if k.lower() not in request.redact_query]
            url = url.copy_with(query=urlencode(kept, quote_via=quote).encode("ascii") or None)
        text = str(url)
        readings = (text, unquote(text), unquote_plus(text))  # %5F is _ to the API (RFC 3986 §2.3)
        if any(secret in reading for secret in secret_values for reading in readings):
            return None
        return text

    def _shape(self, spec: ToolSpec, body: Any, status: int, headers: httpx.Headers, page_size: int,
               position: Any, skip: int, cursor: dict[str, Any] | None, request: BuiltRequest,
               secret_values: list[str]) -> tuple[dict[str, Any], int]:
        row = spec.row
        out_policy = row.get("output") or {}
        max_bytes = int(out_policy.get("max_bytes") or 16000)
        pagination = row.get("pagination")
        if pagination:
            raw_items = get_path(body, pagination.get("items") or "")
            items: list[Any] = list(raw_items) if isinstance(raw_items, list) else []
            next_pos = next_position(pagination, body, headers, items, page_size, position)
            current = position
            if pagination.get("style") == "link":
                current = self._link_position(request.url, request, [])  # this page's URL, as a cursor keeps it
                if next_pos is not None:
                    next_pos = self._link_position(str(next_pos), request, secret_values)
            digest = page_digest(items)
            history = pages_seen(cursor)  # digests of the API pages this walk has left
            again = bool(items) and not skip and digest in history
            stalled = again or repeats(next_pos, current)  # the API did not move: end here (paging.py)
            if stalled:
                next_pos = None
            visible = [] if again else items[skip:]  # a page answered again was shown already
            shaped = [project(redact(i, spec.redact_tree), spec.field_tree) for i in visible]
            scope = f"{self.api}/{spec.name}"
            style = pagination.get("style")

            def cursor_after(kept: int) -> str | None:
                """The cursor once the first `kept` visible items were shown."""
                if kept >= len(visible):
                    return None if next_pos is None else self.cursors.encode(
                        scope, {"c": next_pos, "n": page_size, "h": remember(history, digest)})
                if style == "cursor" and pagination.get("cursor_from_item") and kept:
                    last = get_path(visible[kept - 1], pagination["cursor_from_item"])
                    if last not in (None, "") and last != position:
                        return self.cursors.encode(scope, {"c": last, "n": page_size, "h": history})
                    # the last shown item names no position: stay on this page, skip what was shown
                if style == "offset":
                    start = position if position is not None else pagination.get("first_position") or 0
                    return self.cursors.encode(scope, {"c": int(start) + skip + kept, "n": page_size, "h": history})
                return self.cursors.encode(scope, {"c": position, "s": skip + kept, "n": page_size, "h": history})

            if not stalled:
                return fit_page(shaped, max_bytes, cursor_after)
            marker = {STALLED_KEY: STALLED}
            room = max_bytes if max_bytes <= 0 else max(1, max_bytes - len(canonical_json(marker)) - 1)
            page, omitted = fit_page(shaped, room, cursor_after)
            if page.get("next_cursor") is None:  # the last of this page's items is shown: say why it ends
                page.update(marker)
            return page, omitted
        # projection and redaction apply to an object body, or to each item of an array body
        if isinstance(body, list):
            body = [project(redact(i, spec.redact_tree), spec.field_tree) for i in body]
        elif isinstance(body, dict):
            body = project(redact(body, spec.redact_tree), spec.field_tree)
        shaped_body = shape_body(body, out_policy.get("shape"), status)
        return enforce_budget(shaped_body, max_bytes,
                              list_key=RESULT_KEY if isinstance(shaped_body.get(RESULT_KEY), list) else None,
                              keep=spec.required_members)

    # -- tools by identity -----------------------------------------------------------------------

    def permits(self, tool: str, actor: Actor) -> bool:
        """True when `tool` exists and `actor` holds every scope of its ``permission`` (the rule of
        the call path's permission step, `toolgen.runtime.identity.permits`)."""
        spec = self.specs.get(tool)
        return spec is not None and permits(spec.row, actor.scopes)

    def visible_tools(self, actor: Actor, *, deferred: bool = True) -> list[str]:
        """The names of the tools `actor`'s scopes allow, sorted; ``deferred=False`` leaves out rows
        with ``loading: deferred`` (those a client finds through search)."""
        return [name for name in self.tool_names()
                if permits(self.specs[name].row, actor.scopes) and (deferred or not is_deferred(self.specs[name].row))]

    def visible_catalog(self, actor: Actor, *, deferred: bool = True) -> list[dict[str, Any]]:
        """`catalog()` cut down to `visible_tools(actor, deferred=...)`: the MCP entries, by name."""
        return [self.specs[name].catalog for name in self.visible_tools(actor, deferred=deferred)]

    def refuse_hidden(self, tool: str, actor: Actor) -> CallResult | None:
        """For a server that lists tools by identity: a call of a tool that exists but that `actor`
        may not use is refused with ``permission_denied`` before its arguments are looked at (so
        the refusal says nothing about the tool's schema), and audited (step ``permission``,
        decision ``deny``). None when the tool is unknown or allowed: the call path goes on."""
        spec = self.specs.get(tool)
        error = None if spec is None else _permission_error(tool, spec.row, actor)
        if error is None:
            return None
        missing = error.details["missing"]
        call_id = secrets.token_hex(8)
        for step, decision in (("permission", "deny"), ("result", "error")):
            try:
                self.audit.emit(AuditEvent(time.time(), call_id, tool, actor.id, step, decision, None,
                                           "permission_denied", {"missing": missing} if step == "permission" else {}))
            except Exception:  # noqa: BLE001, S110 - a failing sink never breaks a refusal
                pass
        return CallResult(tool, False, error=error, call_id=call_id)


def _declared_fields(row: Mapping[str, Any], output_schema: Any) -> list[str]:
    """Without `output.fields`, the result keeps the top-level properties its output schema declares
    (of each item, for a paginated tool): a field the API adds that the spec does not declare never
    reaches the model. Schemas that allow other properties, or declare none, keep everything."""
    if row.get("mode") == "preview" or not isinstance(output_schema, dict):
        return []
    node = output_schema
    if row.get("pagination"):
        node = ((node.get("properties") or {}).get("items") or {}).get("items") or {}
    if not isinstance(node, dict) or "anyOf" in node or "oneOf" in node or "$ref" in node:
        return []
    props = node.get("properties")
    extra = node.get("additionalProperties")
    if not isinstance(props, dict) or not props or (extra is not None and extra is not False):
        return []
    if set(props) == {"result"} or set(props) == {"status"}:
        return []  # a wrapped body: its content is not projected
    return sorted(props)


__all__ = ["Actor", "Approval", "CallResult", "Registry", "ToolSpec", "canonical_json", "fingerprint"]
