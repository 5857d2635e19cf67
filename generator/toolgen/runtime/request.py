"""Request building: validated tool arguments + a policy row's binding table → one HTTP request.

Input: a policy row (``docs/generated-format.md``), the validated arguments, a base URL and the
injected credentials. Output: a `BuiltRequest` (method, URL, headers, encoded body) that the registry
sends with httpx, and a redacted `display()` view that preview tools return.

Serialisation follows OpenAPI 3.1 "Style Values"
(https://spec.openapis.org/oas/v3.1.0#style-values): path ``simple``/``label``/``matrix``; query
``form`` (explode: repeated keys / comma lists), ``spaceDelimited``, ``pipeDelimited``,
``deepObject`` (``a[b]=v``, recursively ``a[b][c]=v``, arrays indexed ``a[0]=v`` as Stripe expects);
header ``simple``; cookie ``form``. Bodies: JSON, ``application/x-www-form-urlencoded`` (per-property
encoding style, ``deepObject`` nesting for Stripe), ``multipart/form-data``, binary and text.

Null handling: `normalise_nulls` removes a null from every *optional* property before validation,
recursively through body objects (null means "omit"); a required property, or a top-level binding
with ``"null": "send"``, keeps its null and is sent as JSON ``null``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from ..pointer import PointerError, ref_to_pointer, resolve_pointer
from .credentials import Injected
from .shaping import REDACTED

# --------------------------------------------------------------------------------------------------
# null normalisation


def resolve_local_ref(node: Any, root: Mapping[str, Any]) -> Any:
    """Follow local ``$ref``s (``#/$defs/...``) of `node` inside the schema `root` (at most 32 hops);
    an unresolvable reference gives ``{}`` (accept anything)."""
    hops = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and hops < 32:
        pointer = ref_to_pointer(node["$ref"])
        if pointer is None:
            return {}
        try:
            node = resolve_pointer(root, pointer)
        except PointerError:
            return {}
        hops += 1
    return node


def _object_view(node: Any, root: Mapping[str, Any]) -> tuple[set[str], dict[str, Any], Any]:
    """(required names, property schemas, additionalProperties schema) of an object schema, merging
    ``allOf`` members and the first object-typed ``anyOf``/``oneOf`` branch."""
    node = resolve_local_ref(node, root)
    required: set[str] = set()
    props: dict[str, Any] = {}
    extra: Any = None
    if not isinstance(node, dict):
        return required, props, extra
    required.update(r for r in node.get("required", []) if isinstance(r, str))
    if isinstance(node.get("properties"), dict):
        props.update(node["properties"])
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
    for member in node.get("allOf", []) or []:
        r, p, e = _object_view(member, root)
        required |= r
        for k, v in p.items():
            props.setdefault(k, v)
        extra = extra if extra is not None else e
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, []) or []:
            b = resolve_local_ref(branch, root)
            if isinstance(b, dict) and (b.get("type") == "object" or "properties" in b):
                r, p, e = _object_view(b, root)
                required |= r
                for k, v in p.items():
                    props.setdefault(k, v)
                break
    return required, props, extra


def _items_schema(node: Any, root: Mapping[str, Any]) -> Any:
    node = resolve_local_ref(node, root)
    if not isinstance(node, dict):
        return None
    if "items" in node:
        return node["items"]
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, []) or []:
            b = resolve_local_ref(branch, root)
            if isinstance(b, dict) and (b.get("type") == "array" or "items" in b):
                return b.get("items")
    return None


def _strip(value: Any, schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if depth > 64:
        return value
    if isinstance(value, dict):
        required, props, extra = _object_view(schema, root)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key not in required:
                continue
            child = props.get(key, extra if isinstance(extra, dict) else None)
            out[key] = _strip(item, child, root, depth + 1)
        return out
    if isinstance(value, list):
        items = _items_schema(schema, root)
        return [_strip(v, items, root, depth + 1) for v in value]
    return value


def normalise_nulls(args: Mapping[str, Any], input_schema: Mapping[str, Any],
                    send_null: Iterable[str] = ()) -> dict[str, Any]:
    """Remove nulls that mean "omit" from the arguments (a new dict; the input is not modified).

    A null member is dropped when its property is not listed in ``required`` of the (resolved)
    object schema it belongs to, at every depth. Top-level arguments named in `send_null` (bindings
    with ``"null": "send"``) keep their null. Required nulls are kept for the validator to judge
    (a required nullable property accepts it; a required non-nullable one is rejected).
    """
    keep = set(send_null)
    required, props, extra = _object_view(input_schema, input_schema)
    out: dict[str, Any] = {}
    for key, item in args.items():
        if item is None and key not in required and key not in keep:
            continue
        child = props.get(key, extra if isinstance(extra, dict) else None)
        out[key] = _strip(item, child, input_schema, 1)
    return out


# --------------------------------------------------------------------------------------------------
# scalar and style serialisation


def scalar(value: Any) -> str:
    """A primitive as it appears in a URL, header or form field: booleans ``true``/``false``,
    numbers in JSON form, ``None`` as empty, objects and arrays as compact JSON."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _enc(value: str) -> str:
    return quote(value, safe="")


def serialise_path(name: str, value: Any, style: str | None, explode: bool | None) -> str:
    """One path parameter (already percent-encoded), OpenAPI ``simple`` (default), ``label`` or
    ``matrix`` style. A ``/`` inside a value is encoded as ``%2F``."""
    style = style or "simple"
    explode = bool(explode)
    if isinstance(value, list):
        parts = [_enc(scalar(v)) for v in value]
        if style == "label":
            return "." + (".".join(parts) if explode else ",".join(parts))
        if style == "matrix":
            if explode:
                return "".join(f";{name}={p}" for p in parts)
            return f";{name}=" + ",".join(parts)
        return ",".join(parts)
    if isinstance(value, dict):
        if explode:
            pairs = [f"{_enc(k)}={_enc(scalar(v))}" for k, v in value.items()]
        else:
            pairs = [f"{_enc(k)},{_enc(scalar(v))}" for k, v in value.items()]
        if style == "label":
            return "." + (".".join(pairs) if explode else ",".join(pairs))
        if style == "matrix":
            if explode:
                return "".join(f";{p}" for p in pairs)
            return f";{name}=" + ",".join(pairs)
        return ",".join(pairs)
    text = _enc(scalar(value))
    if style == "label":
        return "." + text
    if style == "matrix":
        return f";{name}={text}"
    return text


def deep_object_pairs(prefix: str, value: Any) -> list[tuple[str, str]]:
    """Flatten `value` into bracketed pairs: ``{"a": {"b": 1}}`` under ``p`` → ``p[a][b]=1``;
    arrays are indexed (``p[0]=x``), as Stripe's form encoding expects. Nulls are dropped; an empty
    string value is sent as is (Stripe uses it to unset a field)."""
    out: list[tuple[str, str]] = []
    if value is None:
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(deep_object_pairs(f"{prefix}[{key}]", item))
        return out
    if isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(deep_object_pairs(f"{prefix}[{index}]", item))
        return out
    out.append((prefix, scalar(value)))
    return out


def serialise_query(name: str, value: Any, style: str | None, explode: bool | None) -> list[tuple[str, str]]:
    """One query parameter (or form-body field) as (name, value) pairs, not yet percent-encoded.

    ``form`` (default, explode defaults to true): arrays → repeated names or ``a,b``; objects →
    one pair per property or ``name=k,v,...``. ``spaceDelimited``/``pipeDelimited``: arrays joined
    by space or ``|``. ``deepObject``: ``name[k]=v`` recursively.
    """
    style = style or "form"
    explode = True if explode is None else explode
    if value is None:
        return []
    if style == "deepObject":
        if isinstance(value, (dict, list)):
            return deep_object_pairs(name, value)
        return [(name, scalar(value))]
    if isinstance(value, list):
        items = [scalar(v) for v in value if v is not None]
        if style == "spaceDelimited" and not explode:
            return [(name, " ".join(items))]
        if style == "pipeDelimited" and not explode:
            return [(name, "|".join(items))]
        if explode:
            return [(name, v) for v in items]
        return [(name, ",".join(items))]
    if isinstance(value, dict):
        if explode:
            return [(str(k), scalar(v)) for k, v in value.items() if v is not None]
        flat: list[str] = []
        for k, v in value.items():
            if v is not None:
                flat.extend([str(k), scalar(v)])
        return [(name, ",".join(flat))]
    return [(name, scalar(value))]


def serialise_header(value: Any, explode: bool | None) -> str:
    """A header value, OpenAPI ``simple`` style."""
    if isinstance(value, list):
        return ",".join(scalar(v) for v in value)
    if isinstance(value, dict):
        if explode:
            return ",".join(f"{k}={scalar(v)}" for k, v in value.items())
        return ",".join(f"{k},{scalar(v)}" for k, v in value.items())
    return scalar(value)


# --------------------------------------------------------------------------------------------------
# the request


@dataclass
class BuiltRequest:
    """An HTTP request ready to send.

    `url` is absolute and includes the encoded query string; `headers` are (name, value) pairs;
    `content` is the encoded body (or ``None``); `body_view` is what previews show as the body (the
    JSON value, the form pairs as an object, multipart field names, or a byte count); `secret_*`
    record which header/query/cookie names carry credentials, for redaction.
    """

    method: str
    url: str
    headers: list[tuple[str, str]]
    content: bytes | None
    body_view: Any = None
    redact_headers: set[str] = field(default_factory=set)
    redact_query: set[str] = field(default_factory=set)

    def display(self) -> dict[str, Any]:
        """The request as previews and audit show it: credential headers/query values replaced by
        ``"[redacted]"``. Shape: ``{"method", "url", "headers": {name: value}, "body"}``."""
        headers: dict[str, str] = {}
        for name, value in self.headers:
            lower = name.lower()
            if lower in self.redact_headers or lower in ("authorization", "cookie", "proxy-authorization"):
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


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _multipart(fields: list[tuple[str, Any, str | None]]) -> tuple[bytes, str]:
    """Encode multipart/form-data (RFC 7578) with a deterministic boundary derived from the
    content. `fields` are (name, value, part content type); strings are text parts unless a
    non-text content type is given, objects/arrays are JSON parts."""
    parts: list[tuple[bytes, bytes]] = []
    for name, value, ctype in fields:
        safe_name = name.replace('"', "%22").replace("\r", "").replace("\n", "")
        if isinstance(value, (dict, list)):
            data = _json_bytes(value)
            head = f'Content-Disposition: form-data; name="{safe_name}"\r\nContent-Type: {ctype or "application/json"}\r\n'
        elif isinstance(value, (bytes, bytearray)):
            data = bytes(value)
            head = (f'Content-Disposition: form-data; name="{safe_name}"; filename="{safe_name}"\r\n'
                    f'Content-Type: {ctype or "application/octet-stream"}\r\n')
        elif ctype and not ctype.startswith("text/") and ctype != "application/json":
            data = scalar(value).encode("utf-8")
            head = (f'Content-Disposition: form-data; name="{safe_name}"; filename="{safe_name}"\r\n'
                    f"Content-Type: {ctype}\r\n")
        else:
            data = scalar(value).encode("utf-8")
            head = f'Content-Disposition: form-data; name="{safe_name}"\r\n'
            if ctype:
                head += f"Content-Type: {ctype}\r\n"
        parts.append((head.encode("utf-8"), data))
    digest = hashlib.sha256(b"".join(h + d for h, d in parts)).hexdigest()[:32]
    boundary = f"toolgen-{digest}"
    out = bytearray()
    for head_bytes, data in parts:
        out += f"--{boundary}\r\n".encode() + head_bytes + b"\r\n" + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def build_request(row: Mapping[str, Any], args: Mapping[str, Any], *, base_url: str,
                  credentials: Injected | None = None,
                  extra_query: Iterable[tuple[str, str]] = ()) -> BuiltRequest:
    """Build the HTTP request of `row` for validated, null-normalised `args`.

    Only arguments named in the binding table reach the wire (an argument the schema does not
    declare, e.g. a readOnly ``id`` smuggled past validation, is never forwarded). `extra_query`
    carries pagination parameters set by the runtime. Raises `ValueError` if a required path
    parameter is missing (validation normally prevents that).
    """
    op = row["operation"]
    req = row.get("request") or {}
    encoding = req.get("encoding") or "none"
    path: str = op["path"]
    query: list[tuple[str, str]] = []
    headers: list[tuple[str, str]] = []
    cookies: list[tuple[str, str]] = []
    body: Any = None
    body_set = False
    form_pairs: list[tuple[str, str]] = []
    multipart_fields: list[tuple[str, Any, str | None]] = []

    bindings: list[Mapping[str, Any]] = list(req.get("bindings") or [])
    idem = row.get("idempotency")
    if (idem and idem.get("in") in ("header", "query", "body") and idem.get("name")
            and not any(b.get("arg") == idem["arg"] for b in bindings)):
        bindings.append({"arg": idem["arg"], "in": idem["in"], "name": idem["name"], "required": True,
                         "null": "omit"})
    sources: list[tuple[Mapping[str, Any], Any]] = []
    for fixed in req.get("fixed") or []:
        sources.append(({"in": fixed["in"], "name": fixed["name"], "null": "send", "required": True},
                        fixed.get("value")))
    for binding in bindings:
        arg = binding["arg"]
        if arg not in args:
            continue
        value = args[arg]
        # null on an optional argument means "leave it out"; on a required one (validation admitted
        # null, so the schema is nullable) or with "null": "send" it is sent as JSON null
        if value is None and binding.get("null", "omit") != "send" and not binding.get("required"):
            continue
        sources.append((binding, value))

    for binding, value in sources:
        where = binding["in"]
        name = binding.get("name") or ""
        style = binding.get("style")
        explode = binding.get("explode")
        if where == "path":
            path = path.replace("{" + name + "}", serialise_path(name, value, style, explode))
        elif where == "query":
            query.extend(serialise_query(name, value, style, explode))
        elif where == "header":
            headers.append((name, serialise_header(value, explode)))
        elif where == "cookie":
            for k, v in serialise_query(name, value, style, explode):
                cookies.append((k, v))
        elif where == "body":
            if encoding == "form":
                if name:
                    form_style = style
                    if form_style is None and isinstance(value, dict):
                        form_style = "deepObject"  # nested objects keep their prefix: a[b][c]=v
                    form_pairs.extend(serialise_query(name, value, form_style, explode))
                elif isinstance(value, dict):
                    for k, v in value.items():
                        form_pairs.extend(serialise_query(k, v, "deepObject" if isinstance(v, (dict, list)) else None, None))
            elif encoding == "multipart":
                if name:
                    multipart_fields.append((name, value, binding.get("content_type")))
                elif isinstance(value, dict):
                    for k, v in value.items():
                        multipart_fields.append((k, v, None))
                else:
                    multipart_fields.append(("file", value, binding.get("content_type")))
            else:
                if name:
                    if not isinstance(body, dict):
                        body = {}
                    body[name] = value
                else:
                    body = value
                body_set = True
    if "{" in path:
        missing = path[path.index("{") + 1: path.index("}")] if "}" in path else path
        raise ValueError(f"path parameter {missing!r} has no value")

    redact_headers: set[str] = set()
    redact_query: set[str] = set()
    if credentials is not None:
        for k, v in credentials.headers.items():
            headers.append((k, v))
            redact_headers.add(k.lower())
        for k, v in credentials.query.items():
            query.append((k, v))
            redact_query.add(k.lower())
        for k, v in credentials.cookies.items():
            cookies.append((k, v))
    query.extend(extra_query)
    if cookies:
        headers.append(("Cookie", "; ".join(f"{k}={v}" for k, v in cookies)))

    content: bytes | None = None
    body_view: Any = None
    content_type = req.get("content_type")
    if encoding == "form" and form_pairs:
        content = urlencode(form_pairs).encode("ascii")
        body_view = {k: v for k, v in form_pairs} if len({k for k, _ in form_pairs}) == len(form_pairs) else form_pairs
        headers.append(("Content-Type", content_type or "application/x-www-form-urlencoded"))
    elif encoding == "multipart" and multipart_fields:
        content, ctype = _multipart(multipart_fields)
        body_view = {"multipart_fields": [n for n, _, _ in multipart_fields]}
        headers.append(("Content-Type", ctype))
    elif encoding in ("binary", "text") and body_set:
        if isinstance(body, (bytes, bytearray)):
            content = bytes(body)
        elif isinstance(body, str):
            content = body.encode("utf-8")
        else:
            content = _json_bytes(body)
        body_view = body if encoding == "text" else {"bytes": len(content)}
        headers.append(("Content-Type", content_type or
                        ("text/plain; charset=utf-8" if encoding == "text" else "application/octet-stream")))
    elif encoding == "json" and body_set:
        content = _json_bytes(body)
        body_view = body
        headers.append(("Content-Type", content_type or "application/json"))

    url = base_url.rstrip("/") + path
    if query:
        url += "?" + urlencode(query, quote_via=quote)
    return BuiltRequest(method=op["method"].upper(), url=url, headers=headers, content=content,
                        body_view=body_view, redact_headers=redact_headers, redact_query=redact_query)
