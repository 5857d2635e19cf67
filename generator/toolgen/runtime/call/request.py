"""Request building: validated tool arguments + a policy row's binding table → one HTTP request.

Input: a policy row (``docs/generated-format.md``), the validated arguments, a base URL and the
injected credentials. Output: a `BuiltRequest` (method, URL, headers, encoded body) that the registry
sends with httpx, and a redacted `display()` view that preview tools return.

Parameters are serialised as OpenAPI 3.1 "Style Values" say
(https://spec.openapis.org/oas/v3.1.0#style-values; `toolgen.runtime.call.parameter_styles`): path
``simple``/``label``/``matrix``; query ``form`` (explode: repeated keys / comma lists),
``spaceDelimited``, ``pipeDelimited``, ``deepObject`` (``a[b]=v``, recursively ``a[b][c]=v``, arrays
indexed ``a[0]=v`` as Stripe expects); header ``simple``; cookie ``form``. Bodies: JSON,
``application/x-www-form-urlencoded`` (per-property encoding style, ``deepObject`` nesting for
Stripe), ``multipart/form-data``, binary and text.

Null handling (null means "omit") and members a closed nested object does not declare are
`toolgen.runtime.call.nulls`: it runs before validation, this module after.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import quote, urlencode

from ... import __version__
from ...policy.format import METHOD_OVERRIDE_HEADERS, RESERVED_HEADERS, ArgBinding, ArgLocation, PolicyRow
from .arguments import invalid_argument
from .credentials import Injected
from .parameter_styles import (
    check_bracket_key,
    param_key,
    scalar,
    serialise_header,
    serialise_path,
    serialise_query,
)
from .shaping import REDACTED

#: The User-Agent of every request whose policy row sets none (a `fixed` value or `api.headers`):
#: product/version as RFC 9110 §10.1.5 gives it.
USER_AGENT = f"toolgen/{__version__}"


def transport_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers handed to the HTTP client: `headers` plus ``User-Agent: USER_AGENT`` when they
    hold no User-Agent. RFC 9110 §10.1.5: a user agent SHOULD send one, and some APIs require it (a
    required header parameter); an ``httpx.Request`` built outside a client carries none. Like Host
    and Content-Length it is the client's header: not previewed, not part of the fingerprint (it
    names the runtime's version, which must not change what an approval covers)."""
    out = list(headers)
    if not any(k.lower() == "user-agent" for k, _ in out):
        out.append(("User-Agent", USER_AGENT))
    return out


def _members_sorted(value: Any, depth: int = 0) -> Any:
    """`value` with the members of every object in key order (arrays keep theirs): two orders of
    one map are one request, one fingerprint, one preview_id. Arguments nest at most 64 levels."""
    if depth > 64:
        return value
    if isinstance(value, dict):
        return {k: _members_sorted(value[k], depth + 1) for k in sorted(value)}
    if isinstance(value, list):
        return [_members_sorted(v, depth + 1) for v in value]
    return value


# --------------------------------------------------------------------------------------------------
# the request

#: Path segment values that HTTP clients and servers remove or collapse (RFC 3986 §5.2.4): a
#: request built with one of them is not the request that was previewed and approved.
_DOT_SEGMENTS = ("", ".", "..")
_HEADER_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\t"}
#: RFC 6265 cookie-octet: no CTLs, whitespace, DQUOTE, comma, semicolon or backslash.
_COOKIE_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F)) - set('",;\\')


@dataclass
class BuiltRequest:
    """An HTTP request ready to send.

    `url` is absolute and includes the encoded query string; `headers` are (name, value) pairs
    (with the ``Cookie`` header); `content` is the encoded body (or ``None``); `body_view` is what
    previews show as the body (the JSON value, the form pairs as an object, multipart field names, or
    a byte count); `redact_*` record which header/query names carry credentials, for redaction.

    `canonical` is the request a preview shows and an approval covers: method, URL, headers,
    cookies and a SHA-256 of the body, *without* the credentials and without the idempotency key
    (a preview has neither). It is computed once, from the same serialisation as the wire request;
    `with_credentials` only appends credentials, so the wire request is the canonical one plus
    the key and the credentials, byte for byte.
    """

    method: str
    url: str
    headers: list[tuple[str, str]]
    content: bytes | None
    body_view: Any = None
    redact_headers: set[str] = field(default_factory=set)
    redact_query: set[str] = field(default_factory=set)
    canonical: dict[str, Any] = field(default_factory=dict)
    cookies: list[tuple[str, str]] = field(default_factory=list)

    def with_credentials(self, credentials: Injected | None) -> BuiltRequest:
        """A copy with `credentials` appended: headers, query pairs (after the arguments' query) and
        cookies. The canonical request is unchanged."""
        if credentials is None:
            return self
        headers = [(k, v) for k, v in self.headers if k.lower() != "cookie"]
        redact_headers = set(self.redact_headers)
        for k, v in credentials.headers.items():
            headers.append((k, v))
            redact_headers.add(k.lower())
        url = self.url
        redact_query = set(self.redact_query)
        if credentials.query:
            url += ("&" if "?" in url else "?") + urlencode(list(credentials.query.items()), quote_via=quote)
            redact_query.update(k.lower() for k in credentials.query)
        cookies = list(self.cookies) + list(credentials.cookies.items())
        if credentials.cookies:  # a credential among the cookies: the whole header is redacted
            redact_headers.add("cookie")
        if cookies:
            headers.append(("Cookie", "; ".join(f"{k}={v}" for k, v in cookies)))
        return BuiltRequest(
            self.method,
            url,
            headers,
            self.content,
            self.body_view,
            redact_headers,
            redact_query,
            self.canonical,
            cookies,
        )

    def display(self) -> dict[str, Any]:
        """The request as previews and audit show it: credential headers/query values (and a Cookie
        header holding a credential cookie) replaced by ``"[redacted]"``. Shape: ``{"method", "url", "headers": {name: value}, "body"}``."""
        headers: dict[str, str] = {}
        for name, value in self.headers:
            lower = name.lower()
            # a Cookie header of argument cookies only is shown: it is what the approver approves
            if lower in self.redact_headers or lower in ("authorization", "proxy-authorization"):
                value = REDACTED
            headers[name] = value
        url = self.url
        if self.redact_query and "?" in url:
            base, _, query = url.partition("?")
            parts = []
            for piece in query.split("&"):
                key = piece.split("=", 1)[0]
                parts.append(f"{key}={REDACTED}" if key.lower() in self.redact_query else piece)
            url = base + "?" + "&".join(parts)
        return {"method": self.method, "url": url, "headers": headers, "body": self.body_view}


#: Headers a binding may never set: the policy's `RESERVED_HEADERS` (the build drops such parameters with
#: ``header-reserved``) and the two the HTTP client writes itself, Content-Length and Host.
_NOT_ARGUMENT_HEADERS = RESERVED_HEADERS | {"content-length", "host"}


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def bytes_view(data: bytes) -> dict[str, Any]:
    """What a preview shows of bytes sent as they are (a binary body or part): their count, their
    SHA-256 and, when they are UTF-8 text, that text, so the human approving the request reads
    what will be sent. Shape: ``{"bytes": int, "sha256": hex, "text"?: str}``."""
    view: dict[str, Any] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    with contextlib.suppress(UnicodeDecodeError):
        view["text"] = data.decode("utf-8")
    return view


def _multipart(fields: list[tuple[str, Any, str | None]]) -> tuple[bytes, str, list[dict[str, Any]]]:
    """Encode multipart/form-data (RFC 7578) with a deterministic boundary derived from the
    content. `fields` are (name, value, part content type); strings are text parts unless a
    non-text content type is given, objects/arrays are JSON parts. Also returns what a preview
    shows of each part: ``{"name", "content_type"?, "value"}`` (the JSON value or the text sent)
    or, for bytes, ``{"name", "content_type", **bytes_view}``."""
    parts: list[tuple[bytes, bytes]] = []
    shown: list[dict[str, Any]] = []
    for name, value, ctype in fields:
        safe_name = name.replace('"', "%22").replace("\r", "").replace("\n", "")
        part: dict[str, Any] = {"name": safe_name}
        if isinstance(value, (dict, list)):
            data = _json_bytes(value)
            head = f'Content-Disposition: form-data; name="{safe_name}"\r\nContent-Type: {ctype or "application/json"}\r\n'
        elif isinstance(value, (bytes, bytearray)):
            data = bytes(value)
            head = (
                f'Content-Disposition: form-data; name="{safe_name}"; filename="{safe_name}"\r\n'
                f"Content-Type: {ctype or 'application/octet-stream'}\r\n"
            )
        elif ctype and not ctype.startswith("text/") and ctype != "application/json":
            data = scalar(value).encode("utf-8")
            head = (
                f'Content-Disposition: form-data; name="{safe_name}"; filename="{safe_name}"\r\n'
                f"Content-Type: {ctype}\r\n"
            )
        else:
            data = scalar(value).encode("utf-8")
            head = f'Content-Disposition: form-data; name="{safe_name}"\r\n'
            if ctype:
                head += f"Content-Type: {ctype}\r\n"
        content_type = head.partition("Content-Type: ")[2].partition("\r\n")[0]
        if content_type:
            part["content_type"] = content_type
        if isinstance(value, (bytes, bytearray)):
            part.update(bytes_view(data))
        else:
            part["value"] = value if isinstance(value, (dict, list)) else data.decode("utf-8")
        parts.append((head.encode("utf-8"), data))
        shown.append(part)
    digest = hashlib.sha256(b"".join(h + d for h, d in parts)).hexdigest()[:32]
    boundary = f"toolgen-{digest}"
    out = bytearray()
    for head_bytes, data in parts:
        out += f"--{boundary}\r\n".encode() + head_bytes + b"\r\n" + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}", shown


def _header_value(value: str, path: tuple[str | int, ...]) -> str:
    """A header value exactly as sent. Refuses CR, LF, NUL, other control characters and non-ASCII
    text, which would split the header, be rejected by the HTTP client after a receipt exists, or
    reach the API re-encoded; and surrounding blanks, which HTTP strips (RFC 9110 §5.5), so the API
    would see another value than the one previewed, keyed and approved."""
    bad = next((ch for ch in value if ch not in _HEADER_CHARS), None)
    if bad is not None:
        raise invalid_argument(path, f"a header value may hold printable ASCII only, not {bad!r}")
    if value != value.strip(" \t"):
        raise invalid_argument(
            path, "a header value may not start or end with a space or tab (HTTP drops them)"
        )
    return value


def taken_names(row: PolicyRow, where: str, binding: ArgBinding) -> frozenset[str]:
    """The names (as `param_key`s) the request of `row` may carry in `where` (``query``, ``cookie`` or
    ``body``) from anything but `binding`: other bindings, fixed values, the idempotency key, the
    paging parameters, credentials, the names the build recorded on `binding` (``reserved``:
    every other parameter the operation declares there, hidden ones included) and, in a query or
    form body, ``_method`` (a method override Laravel, Symfony and Rack honour on a POST). An object argument
    sent exploded (one parameter per member) may not name one of them: it would send a hidden
    parameter, a second value next to a fixed one or the runtime's page size, or a credential."""
    names = {b.wire_name for b in row.bindings if b.location == where and b is not binding}
    names |= {f.wire_name for f in row.fixed if f.location == where}
    names |= {a.wire_name for a in row.auth if a.location == where}
    idem = row.idempotency
    if idem is not None and idem.send_in == where:
        names.add(idem.wire_name or "")
    paging = row.pagination
    if where == "query" and paging is not None:
        names |= {paging.cursor_param or "", paging.limit_param or ""}
    names |= set(binding.reserved)
    if where in ("query", "body"):
        names.add("_method")  # Symfony/Laravel and Rack run the method a POST's _method names
    names.discard("")
    names.discard(binding.wire_name)
    return frozenset(param_key(n) for n in names)


#: RFC 6265 §4.1.1 cookie-name: an RFC 2616 token (no CTLs, blanks or separators).
_TOKEN_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F)) - set('()<>@,;:\\"/[]?={}')


def _cookie_name(name: str, path: tuple[str | int, ...]) -> str:
    if not name or any(ch not in _TOKEN_CHARS for ch in name):
        raise invalid_argument(
            path,
            f"{name[:40]!r} cannot be a cookie name (RFC 6265: a token, without "
            "blanks, separators such as ';' '=' ',' or non-ASCII text)",
        )
    return name


def _parameter_value(binding: ArgBinding, value: Any) -> Any:
    """`value` as its binding sends it: a parameter with `content` (OpenAPI 3 "Parameter Object":
    one value in that media type) takes an object or array as its JSON text, never spread into
    style-serialised pairs; anything else as it is."""
    if binding.location != "body" and binding.content_type and isinstance(value, (dict, list)):
        return _json_bytes(value).decode("utf-8")
    return value


def _header_binding(binding: ArgBinding, value: Any, at: tuple[str | int, ...]) -> str:
    """The header value of a header binding (simple style), checked as `_header_value` does. Raises
    `ValueError` for a header a policy built before the build refused it may still bind: hop-by-hop,
    framing, Cookie, or (for an argument) a method override."""
    name = binding.wire_name
    if name.lower() in _NOT_ARGUMENT_HEADERS:
        raise ValueError(f"header {name!r} is hop-by-hop, framing or Cookie: never a tool argument")
    if binding.arg and name.lower() in METHOD_OVERRIDE_HEADERS:
        raise ValueError(f"header {name!r} overrides the HTTP method: never a tool argument")
    return _header_value(serialise_header(value, binding.explode), at)


def _cookie_pairs(
    row: PolicyRow, binding: ArgBinding, value: Any, at: tuple[str | int, ...]
) -> list[tuple[str, str]]:
    """The cookies of a cookie binding (form style): names RFC 6265 tokens that take no other name
    of the request (`taken_names`), values cookie-octets; raises `ToolError` ``invalid_arguments``
    at the argument, or at the member of an exploded object."""
    explode = binding.explode
    spread = isinstance(value, dict) and explode is not False
    pairs = serialise_query(
        binding.wire_name,
        value,
        binding.style,
        explode,
        at,
        taken_names(row, "cookie", binding) if spread else frozenset(),
    )
    return [(_cookie_name(k, (*at, k) if spread else at), _cookie_value(v, at)) for k, v in pairs]


def _cookie_value(value: str, path: tuple[str | int, ...]) -> str:
    bad = next((ch for ch in value if ch not in _COOKIE_CHARS), None)
    if bad is not None:
        raise invalid_argument(path, f"a cookie value may not contain {bad!r} (RFC 6265 cookie-octet)")
    return value


@dataclass
class _Body:
    """The body parts of one request, collected from the bindings; `key` marks the idempotency key."""

    encoding: str
    value: Any = None
    value_set: bool = False
    #: something besides the idempotency key set the value (a body holding the key alone is, without
    #: it, no body: what the preview of that request sent)
    others_set: bool = False
    key_field: str | None = None
    form_pairs: list[tuple[str, str, bool]] = field(default_factory=list)
    multipart: list[tuple[str, Any, str | None, bool]] = field(default_factory=list)

    def put(self, name: str, value: Any, *, is_key: bool) -> None:
        """Set member `name` of a JSON, text or binary body to `value` (`name` empty: the whole body)."""
        if name:
            if not isinstance(self.value, dict):
                self.value = {}
            self.value[name] = value
            if is_key:
                self.key_field = name
        else:
            self.value = value
        self.value_set = True
        self.others_set = self.others_set or not is_key

    def encode(self, content_type: str | None, *, with_key: bool) -> tuple[bytes | None, Any, str | None]:
        """(content, body view, Content-Type) with or without the idempotency key."""
        encoding = self.encoding
        if encoding == "form":
            pairs = [(k, v) for k, v, is_key in self.form_pairs if with_key or not is_key]
            if not pairs and self.value_set and isinstance(self.value, str):
                # a string body (the spec's schema is a string): the encoded form as the caller wrote it
                return (
                    self.value.encode("utf-8"),
                    self.value,
                    content_type or "application/x-www-form-urlencoded",
                )
            if not pairs:
                return None, None, None
            view: Any = dict(pairs) if len({k for k, _ in pairs}) == len(pairs) else pairs
            return (
                urlencode(pairs).encode("ascii"),
                view,
                content_type or "application/x-www-form-urlencoded",
            )
        if encoding == "multipart":
            fields = [(n, v, c) for n, v, c, is_key in self.multipart if with_key or not is_key]
            if not fields and not self.value_set:
                return None, None, None
            content, ctype, parts = _multipart(fields)
            return content, {"multipart": parts}, ctype
        if not self.value_set or (not with_key and not self.others_set):
            return None, None, None
        body = self.value
        if not with_key and self.key_field is not None and isinstance(body, dict):
            body = {k: v for k, v in body.items() if k != self.key_field}
        if encoding in ("binary", "text"):
            if isinstance(body, (bytes, bytearray)):
                content = bytes(body)
            elif isinstance(body, str):
                content = body.encode("utf-8")
            else:
                content = _json_bytes(body)
            return (
                content,
                body
                if encoding == "text" and not isinstance(body, (bytes, bytearray))
                else bytes_view(content),
                content_type
                or ("text/plain; charset=utf-8" if encoding == "text" else "application/octet-stream"),
            )
        if encoding == "json":
            return _json_bytes(body), body, content_type or "application/json"
        return None, None, None


def _form_member(
    body: _Body,
    row: PolicyRow,
    binding: ArgBinding,
    value: Any,
    how: tuple[str | None, bool | None, tuple[str | int, ...], bool],
) -> None:
    """Add one body binding's value to a form-urlencoded `body`: a named member as its pairs (an
    object nested as ``deepObject``), the whole body as one pair per member, or, when the spec
    declares the body a plain string, that string as the body itself. `how`: (style, explode, the
    argument's path, whether it is the idempotency key)."""
    style, explode, at, is_key = how
    name = binding.wire_name
    if name:
        form_style = style
        if form_style is None and isinstance(value, dict):
            form_style = "deepObject"  # nested objects keep their prefix: a[b][c]=v
        body.form_pairs.extend(
            (k, v, is_key)
            for k, v in serialise_query(
                name,
                value,
                form_style,
                explode,
                at,
                taken_names(row, "body", binding) if isinstance(value, dict) else frozenset(),
            )
        )
    elif isinstance(value, str):  # a body declared as a plain string: sent as it is
        body.value, body.value_set = value, True
    elif isinstance(value, dict):
        for k, v in value.items():
            check_bracket_key(str(k), (*at, k), nested=False)
            body.form_pairs.extend(
                (fk, fv, False)
                for fk, fv in serialise_query(
                    k, v, "deepObject" if isinstance(v, (dict, list)) else None, None, (*at, k)
                )
            )


def _with_query(root: str, pairs: list[tuple[str, str]]) -> str:
    """`root` with the query `pairs`, percent-encoded; a spec path may carry its own query string
    (``/orders?mode=fast``), which the pairs then join with ``&`` (never a second ``?``, which
    would glue them onto its last value)."""
    if not pairs:
        return root
    return root + ("&" if "?" in root else "?") + urlencode(pairs, quote_via=quote)


def _sources(row: PolicyRow, args: Mapping[str, Any], key_arg: str | None) -> list[tuple[ArgBinding, Any]]:
    """(binding, value) of everything `row` sends for `args`, in binding order: the fixed values (a
    binding of no argument, `arg` ""), then each argument given, the forwarded idempotency key
    included (bound where its `send_as` says when no binding names it). Null on an optional argument
    means "leave it out"; on a required one (validation admitted null, so the schema is nullable) or
    with ``"null": "send"`` it is sent as JSON null."""
    bindings = list(row.bindings)
    idem = row.idempotency
    if key_arg and idem is not None and idem.wire_name and not any(b.arg == key_arg for b in bindings):
        bindings.append(ArgBinding(key_arg, cast(ArgLocation, idem.send_in), idem.wire_name, True))
    sources: list[tuple[ArgBinding, Any]] = [
        (ArgBinding("", f.location, f.wire_name, True, "send"), f.value) for f in row.fixed
    ]
    for binding in bindings:
        if binding.arg not in args:
            continue
        value = args[binding.arg]
        if value is None and binding.null_means != "send" and not binding.required:
            continue
        sources.append((binding, value))
    return sources


class _Parts:
    """The parts of one request, filled binding by binding (`place`): query pairs and headers as
    (name, value, is_key) in binding order, cookies, the body, and each path parameter's
    (argument, serialised segment)."""

    def __init__(self, row: PolicyRow, key_arg: str | None) -> None:
        self.row = row
        self.key_arg = key_arg
        self.query: list[tuple[str, str, bool]] = []
        self.headers: list[tuple[str, str, bool]] = []
        self.cookies: list[tuple[str, str]] = []
        self.body = _Body(row.body_encoding)
        self.path_values: dict[str, tuple[str, str]] = {}

    def place(self, binding: ArgBinding, value: Any) -> None:
        """Put `value` where `binding` sends it, serialised by its style."""
        where, name, style, explode, arg = (
            binding.location,
            binding.wire_name,
            binding.style,
            binding.explode,
            binding.arg,
        )
        at: tuple[str | int, ...] = (arg,) if arg else ()
        is_key = bool(arg) and arg == self.key_arg
        if where == "path":
            self.path_values[name] = (str(arg or name), serialise_path(name, value, style, explode))
        elif where == "query":
            taken = taken_names(self.row, "query", binding) if isinstance(value, dict) else frozenset()
            self.query.extend(
                (k, v, is_key) for k, v in serialise_query(name, value, style, explode, at, taken)
            )
        elif where == "header":
            self.headers.append((name, _header_binding(binding, value, at), is_key))
        elif where == "cookie":
            self.cookies.extend(_cookie_pairs(self.row, binding, value, at))
        elif where == "body":
            self._place_in_body(binding, value, (style, explode, at, is_key))

    def _place_in_body(
        self,
        binding: ArgBinding,
        value: Any,
        how: tuple[str | None, bool | None, tuple[str | int, ...], bool],
    ) -> None:
        body, name, is_key = self.body, binding.wire_name, how[3]
        if body.encoding == "form":
            _form_member(body, self.row, binding, value, how)
        elif body.encoding != "multipart":
            body.put(name, value, is_key=is_key)
        elif name:
            body.multipart.append((name, value, binding.content_type, is_key))
        elif isinstance(value, dict):
            body.value_set = True  # the whole body: sent even as no part at all (a required body)
            for k, v in value.items():
                body.multipart.append((k, v, None, False))
        else:
            body.multipart.append(("file", value, binding.content_type, is_key))


def _fill_path(template_path: str, path_values: dict[str, tuple[str, str]]) -> str:
    """`template_path` with each ``{name}`` filled in, segment by segment: a segment a value fills
    in must stay a real segment (`invalid_argument` on ``.``/``..``); ValueError when a parameter
    is left without a value."""
    segments: list[str] = []
    for template in template_path.split("/"):
        segment = template
        filled: list[str] = []
        for name, (arg_name, text) in path_values.items():
            if "{" + name + "}" in segment:
                segment = segment.replace("{" + name + "}", text)
                filled.append(arg_name)
        if filled and segment in _DOT_SEGMENTS:
            raise invalid_argument(
                (filled[0],),
                f"the value would make the path segment {segment!r}, which "
                "HTTP collapses into another resource; send the real identifier",
            )
        segments.append(segment)
    path = "/".join(segments)
    if "{" in path:
        missing = path[path.index("{") + 1 : path.index("}")] if "}" in path else path
        raise ValueError(f"path parameter {missing!r} has no value")
    return path


def build_request(
    row: PolicyRow,
    args: Mapping[str, Any],
    *,
    base_url: str,
    credentials: Injected | None = None,
    extra_query: Iterable[tuple[str, str]] = (),
) -> BuiltRequest:
    """Build the HTTP request of `row` for validated, null-normalised `args`.

    Only arguments named in the binding table reach the wire (an argument the schema does not
    declare, e.g. a readOnly ``id`` smuggled past validation, is never forwarded). `extra_query`
    carries pagination parameters set by the runtime; `credentials` are appended last
    (`BuiltRequest.with_credentials`).

    Raises `ToolError` ``invalid_arguments`` (``details.pointer`` names the argument) when a value
    cannot be sent as previewed: a path segment that would be empty or a dot segment (``.``/``..``,
    which clients and servers collapse: ``/customers/.`` becomes ``/customers``); a header value
    with control characters or non-ASCII text; a cookie value outside RFC 6265's cookie-octet;
    an object key with ``[``/``]`` in bracketed (deepObject) encoding. Raises `ValueError` if a
    required path parameter is missing (validation normally prevents that).
    """
    idem = row.idempotency
    key_arg = idem.arg if idem is not None and idem.forwarded else None
    parts = _Parts(row, key_arg)
    for binding, value in _sources(row, args, key_arg):
        parts.place(binding, _parameter_value(binding, _members_sorted(value)))  # a map's order means nothing
    query, headers, cookies, body = parts.query, parts.headers, parts.cookies, parts.body
    path = _fill_path(row.path, parts.path_values)

    extra = list(extra_query)
    wire_query = [(k, v) for k, v, _ in query] + extra
    canonical_query = [(k, v) for k, v, is_key in query if not is_key] + extra
    content, body_view, content_type = body.encode(row.body_content_type, with_key=True)
    canonical_content, canonical_type = content, content_type
    if key_arg and (
        body.key_field is not None
        or any(k for *_, k in body.form_pairs)
        or any(k for *_, k in body.multipart)
    ):
        canonical_content, _, canonical_type = body.encode(row.body_content_type, with_key=False)
    wire_headers = [(k, v) for k, v, _ in headers]
    accept = row.output.accept
    if accept and not any(k.lower() == "accept" for k, _ in wire_headers):
        # the response offers JSON next to other media types: ask for the one the output schema describes
        wire_headers.append(("Accept", accept))
    if content_type is not None:
        wire_headers.append(("Content-Type", content_type))
    if cookies:
        wire_headers.append(("Cookie", "; ".join(f"{k}={v}" for k, v in cookies)))

    root = base_url.rstrip("/") + path
    url = _with_query(root, wire_query)
    canonical = {
        "method": row.method.upper(),
        "url": _with_query(root, canonical_query),
        "headers": sorted([k.lower(), v] for k, v, is_key in headers if not is_key)
        + ([["content-type", canonical_type]] if canonical_type is not None else []),
        "cookies": [[k, v] for k, v in cookies],
        "body_sha256": None if canonical_content is None else hashlib.sha256(canonical_content).hexdigest(),
    }
    built = BuiltRequest(
        method=row.method.upper(),
        url=url,
        headers=wire_headers,
        content=content,
        body_view=body_view,
        canonical=canonical,
        cookies=cookies,
    )
    return built.with_credentials(credentials)
