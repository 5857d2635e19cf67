"""Stage `swagger2`: a Swagger 2.0 document -> the equivalent OpenAPI 3.0.3 document + a pointer map.

Input: the data of a document whose top level says ``swagger: "2.0"`` (plain JSON values, as
`toolgen.compile.load` reads them) and the file's display path. Output: `Converted`, holding the
OpenAPI 3.0.3 data every later stage reads, a `PointerMap` from each pointer of the converted
document to the pointer of the 2.0 text it came from (so every diagnostic about the converted
document is located in the 2.0 file), and warnings for what the conversion had to drop. Pure: no
I/O, the input is not changed.

The rules follow the Swagger 2.0 specification and its OpenAPI 3.0 counterparts (OpenAPI 3.0.3,
sections 4.7.5 Server, 4.7.10 Operation, 4.7.12 Parameter, 4.7.13 Request Body, 4.7.17 Response,
4.7.27 Security Scheme):

- ``host`` + ``basePath`` + ``schemes`` -> ``servers`` (one per HTTP scheme, matched without case,
  ``https`` first, ``ws``/``wss`` left out; without ``schemes`` https is assumed; without ``host``
  the server is the relative ``basePath``).
  An operation's own ``schemes`` -> that operation's ``servers``.
- ``consumes`` / ``produces`` (global, overridden per operation) -> the media types of request
  bodies and responses; ``application/json`` when none is declared (``application/octet-stream``
  for a ``type: file`` response).
- ``in: body`` -> ``requestBody`` (its description, ``required`` flag and schema, one media type
  per ``consumes`` entry); ``in: formData`` (``type: file`` included) -> an object schema under
  ``application/x-www-form-urlencoded`` or ``multipart/form-data`` (multipart when a file is sent
  or ``consumes`` says so), with ``encoding`` for array fields.
- other parameters: the 2.0 validation keywords move into ``schema``; ``collectionFormat`` becomes
  ``style``/``explode`` (query ``csv`` -> form, no explode; ``ssv`` -> spaceDelimited; ``pipes`` ->
  pipeDelimited; ``multi`` -> form, explode; path and header ``csv`` -> simple); ``allowEmptyValue``
  stays on query parameters; ``x-example`` -> ``example``.
- ``definitions`` / ``parameters`` / ``responses`` / ``securityDefinitions`` -> ``components``
  (``schemas`` / ``parameters`` / ``responses`` / ``securitySchemes``), with every ``$ref`` rewritten
  (``#/definitions/X`` -> ``#/components/schemas/X``, ``#/parameters/X`` -> ``#/components/parameters/X``,
  ``#/responses/X`` -> ``#/components/responses/X``). Global body and formData parameters have no
  3.0 component: each operation that references one gets its request body inline.
- security: ``basic`` -> http/basic, ``apiKey`` stays, ``oauth2`` flows implicit / password /
  application / accessCode -> implicit / password / clientCredentials / authorizationCode.
- schemas: ``x-nullable`` -> ``nullable`` (a nullable ``$ref`` becomes ``allOf: [$ref]`` +
  ``nullable``, since 3.0 ignores a reference's siblings), ``type: file`` -> string/binary, a
  ``discriminator`` string -> ``{propertyName: ...}``.
- response ``examples`` (per media type) -> ``content[media type].example``; response headers get a
  ``schema``; vendor extensions (``x-*``) are kept where they stand.

Errors (`DiagnosticError`, each located at the 2.0 pointer): ``spec-version-unsupported`` (a
``swagger`` version other than 2.0), ``swagger2-unsupported`` (2.0 constructs OpenAPI 3.0 cannot say:
``collectionFormat: tsv``, ``ssv``/``pipes`` outside query and form fields), ``swagger2-invalid``
(what breaks the 2.0 rules in a way that leaves no conversion: a body and form fields in one
operation, two bodies, ``type: file`` outside form fields, an unknown security type, an apiKey
without a ``name`` or not ``in`` query or header, a parameter ``$ref`` that names nothing or another
file, ``consumes``/``produces`` that are not lists of strings, a top-level key that is not a 2.0
field (``servers``, ``components``, ``openapi`` would take their OpenAPI 3 meaning), a ``host`` that
is more than a host name and port, a ``basePath`` with a query or fragment); ``schemes`` that name
no HTTP scheme are ``swagger2-unsupported``.
Everything else is copied as it stands, so the OpenAPI 3.0 validation that follows reports it at
the 2.0 location through the pointer map. The schemas and ``$ref`` s are converted by
`toolgen.compile.swagger2_schemas`, the responses by `swagger2_responses`, the security schemes by
`swagger2_security`; this module converts the document, its servers, paths, operations and
parameters.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation
from ..pointer import escape_token, join_pointer, ref_to_pointer, resolve_pointer
from .swagger2_responses import convert_response, convert_responses
from .swagger2_schemas import SCHEMA_KEYWORDS, convert_schema, rewrite_ref, value_schema
from .swagger2_security import security_scheme

#: the OpenAPI version a converted document declares
CONVERTED_VERSION = "3.0.3"

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
#: collectionFormat -> (style, explode) for query parameters and form fields
_QUERY_STYLES = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}
#: the fields of a Swagger 2.0 Swagger Object (section "Swagger Object"); any other key but ``x-*`` is
#: not 2.0, and copied into the converted document it could take an OpenAPI 3 meaning (``servers``,
#: ``components``, ``openapi``)
_TOP_FIELDS = (
    "swagger",
    "info",
    "host",
    "basePath",
    "schemes",
    "consumes",
    "produces",
    "paths",
    "definitions",
    "parameters",
    "responses",
    "securityDefinitions",
    "security",
    "tags",
    "externalDocs",
)
#: a 2.0 ``host``: a name or IP address (IPv6 in brackets) and an optional port, nothing else
_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[\w-]+(?:\.[\w-]+)*\.?)(?::[0-9]{1,5})?$")
#: the schemes of a 2.0 ``schemes`` list that an HTTP client speaks, in the order a client prefers them
_HTTP_SCHEMES = ("https", "http")


@dataclass(frozen=True)
class PointerMap:
    """Converted pointer -> 2.0 source pointer.

    `entries` holds one pair per node the conversion created or moved; a node copied as it stood
    is found through its nearest recorded ancestor, with the rest of the pointer appended.
    """

    entries: Mapping[str, str]

    def source(self, pointer: str) -> str:
        """The 2.0 pointer that `pointer` (a pointer of the converted document) came from."""
        head, tail = pointer, ""
        while head not in self.entries:
            cut = head.rfind("/")
            if cut < 0:
                return pointer
            head, tail = head[:cut], head[cut:] + tail
        return self.entries[head] + tail


@dataclass(frozen=True)
class Converted:
    """The result of `convert_swagger2`: OpenAPI 3.0.3 `data`, its `pointers` back into the 2.0
    document, and `warnings` (located in the 2.0 document, line/column not yet filled in)."""

    data: dict[str, Any]
    pointers: PointerMap
    warnings: tuple[Diagnostic, ...] = ()


def is_swagger2(data: Mapping[str, Any]) -> bool:
    """Whether a loaded document is Swagger (it has a top-level ``swagger`` key)."""
    return "swagger" in data


def convert_swagger2(data: Mapping[str, Any], display: str) -> Converted:
    """Convert a Swagger 2.0 document (see the module docstring for the rules).

    Raises `DiagnosticError` with every construct that cannot be converted, each located at its
    2.0 pointer in `display` (line and column are filled in by the caller, which holds the text).
    """
    conv = _Converter(data, display)
    out = conv.document()
    if conv.errors:
        raise DiagnosticError(_unique(conv.errors))
    return Converted(out, PointerMap(conv.map), tuple(_unique(conv.warnings)))


def _unique(items: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per (code, pointer): a form field converted once per media type reports once."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for d in items:
        key = (d.code, d.location.pointer if d.location else None)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


@dataclass
class _Param:
    """A parameter as one operation sees it: the 2.0 object (a `$ref` followed), where that object
    is (`src`), where the operation names it (`site`), and the component it came from, if any."""

    node: Any
    src: str
    site: str
    component: str | None = None

    @property
    def where(self) -> str:
        return str(self.node.get("in")) if isinstance(self.node, dict) else ""

    @property
    def key(self) -> tuple[str, str]:
        if isinstance(self.node, dict):
            return str(self.node.get("name")), self.where
        return self.site, ""


@dataclass
class _Converter:
    src: Mapping[str, Any]
    display: str
    map: dict[str, str] = field(default_factory=lambda: {"": ""})
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    #: the document's own ``consumes`` / ``produces``: (media type, its pointer)
    consumes: list[tuple[str, str]] = field(default_factory=list)
    produces: list[tuple[str, str]] = field(default_factory=list)

    # -- bookkeeping --------------------------------------------------------------------------

    def at(self, dst: str, src: str) -> None:
        self.map[dst] = src

    def error(self, code: str, message: str, src: str, hint: str) -> None:
        self.errors.append(
            Diagnostic(code, "error", message, SourceLocation(self.display, None, None, src), hint)
        )

    def warn(self, code: str, message: str, src: str, hint: str) -> None:
        self.warnings.append(
            Diagnostic(code, "warning", message, SourceLocation(self.display, None, None, src), hint)
        )

    def media_types(self, node: Any, key: str, src: str) -> list[tuple[str, str]] | None:
        """``consumes``/``produces`` of `node` at `src` as (media type, its pointer); None when absent."""
        if not isinstance(node, dict) or key not in node:
            return None
        value = node[key]
        where = join_pointer(src, key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.error(
                "swagger2-invalid",
                f"`{key}` must be a list of media type strings",
                where,
                f"write `{key}: [application/json]` (or the media types the API uses)",
            )
            return None
        seen: dict[str, str] = {}
        for i, v in enumerate(value):
            seen.setdefault(v, join_pointer(where, i))
        return list(seen.items())

    # -- the document -------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        src = self.src
        version = src.get("swagger")
        if str(version) != "2.0":
            self.error(
                "spec-version-unsupported",
                f"Swagger version {version!r} is not supported",
                "/swagger",
                "toolgen reads Swagger 2.0 and OpenAPI 3.0.x / 3.1.x",
            )
            return {}
        self.consumes = self.media_types(src, "consumes", "") or []
        self.produces = self.media_types(src, "produces", "") or []
        out: dict[str, Any] = {"openapi": CONVERTED_VERSION}
        self.at("/openapi", "/swagger")
        components: dict[str, Any] = {}
        for key, value in src.items():
            if key in ("swagger", "consumes", "produces"):
                continue
            if key not in _TOP_FIELDS and not key.startswith("x-"):
                self.error(
                    "swagger2-invalid",
                    f"`{key}` is not a field of a Swagger 2.0 document",
                    "/" + escape_token(key),
                    "remove it, or rename it `x-...` to keep it as an extension"
                    + (
                        " (a document is either Swagger 2.0 or OpenAPI 3, never both)"
                        if key in ("openapi", "servers", "components", "webhooks")
                        else ""
                    ),
                )
                continue
            if key in ("definitions", "parameters", "responses", "securityDefinitions") and not isinstance(
                value, dict
            ):
                self.error(
                    "swagger2-invalid",
                    f"`{key}` must be a mapping of names to objects",
                    "/" + escape_token(key),
                    f"write `{key}:` followed by `Name: {{...}}` entries",
                )
                continue
            if key in ("host", "basePath", "schemes"):
                if "servers" not in out:
                    servers = self.servers(
                        src.get("schemes"), "/schemes" if "schemes" in src else None, "/servers"
                    )
                    if servers is not None:
                        out["servers"] = servers
                continue
            if key == "paths" and isinstance(value, dict):
                out["paths"] = self.paths(value)
                self.at("/paths", "/paths")
            elif key in ("definitions", "parameters", "responses", "securityDefinitions") and isinstance(
                value, dict
            ):
                if "components" not in out:
                    out["components"] = components
                    self.at("/components", "/" + escape_token(key))
                self.component_group(key, value, components)
            else:
                out[key] = copy.deepcopy(value)
                self.at("/" + escape_token(key), "/" + escape_token(key))
        return out

    def servers(self, schemes: Any, schemes_src: str | None, dst: str) -> list[dict[str, Any]] | None:
        """``servers`` from the document's host and basePath and the given schemes."""
        host, base = self.src.get("host"), self.src.get("basePath")
        for name, value in (("host", host), ("basePath", base)):
            if value is not None and not isinstance(value, str):
                self.error(
                    "swagger2-invalid",
                    f"`{name}` must be a string",
                    "/" + name,
                    "write the host as `api.example.com` and the base path as `/v1`",
                )
                return None
        if schemes is not None and (
            not isinstance(schemes, list) or not all(isinstance(s, str) for s in schemes)
        ):
            self.error(
                "swagger2-invalid",
                "`schemes` must be a list of strings",
                schemes_src or "/schemes",
                "write `schemes: [https]`",
            )
            return None
        if host is not None and not _HOST.match(host):
            self.error(
                "swagger2-invalid",
                f"`host` {host!r} is not a host name with an optional port",
                "/host",
                "write only the host (`api.example.com` or `api.example.com:8443`): the scheme "
                "goes in `schemes`, a path in `basePath`",
            )
            return None
        if base is not None and ("?" in base or "#" in base):
            self.error(
                "swagger2-invalid",
                f"`basePath` {base!r} holds a query or fragment",
                "/basePath",
                "write only the path the operations' paths are appended to, e.g. `/v1`",
            )
            return None
        base_path = (base or "").rstrip("/")
        if base and not base.startswith("/"):
            base_path = "/" + base_path
        anchor = "/host" if host is not None else "/basePath" if base is not None else (schemes_src or "")
        if host is None:
            if base is None:
                return None
            self.at(dst, anchor)
            self.at(join_pointer(dst, 0), anchor)
            self.at(join_pointer(dst, 0, "url"), anchor)
            return [{"url": base_path or "/"}]
        # URL schemes are case-insensitive (RFC 3986 section 3.1); only HTTP ones reach an HTTP API, and
        # the first server is the one a client uses: https first
        named = {s.lower(): i for i, s in reversed(list(enumerate(schemes or [])))}
        order = [s for s in _HTTP_SCHEMES if s in named] if schemes else ["https"]
        if schemes and not order:
            self.error(
                "swagger2-unsupported",
                f"`schemes` {schemes!r} names no HTTP scheme",
                schemes_src or "/schemes",
                "toolgen calls APIs over HTTP: list `https` (or `http`) in `schemes`",
            )
            return None
        out = []
        self.at(dst, anchor)
        for i, scheme in enumerate(order):
            where = join_pointer(schemes_src, named[scheme]) if schemes and schemes_src else anchor
            self.at(join_pointer(dst, i), where)
            self.at(join_pointer(dst, i, "url"), anchor)
            out.append({"url": f"{scheme}://{host}{base_path}"})
        return out

    def component_group(self, key: str, value: dict[str, Any], components: dict[str, Any]) -> None:
        src = "/" + key
        if key == "definitions":
            group = components.setdefault("schemas", {})
            self.at("/components/schemas", src)
            for name, schema in value.items():
                dst = join_pointer("/components/schemas", name)
                group[name] = convert_schema(self, schema, join_pointer(src, name), dst)
        elif key == "responses":
            group = components.setdefault("responses", {})
            self.at("/components/responses", src)
            for name, resp in value.items():
                dst = join_pointer("/components/responses", name)
                group[name] = convert_response(self, resp, join_pointer(src, name), dst, self.produces)
        elif key == "parameters":
            kept: dict[str, Any] = {}
            for name, param in value.items():
                p_src = join_pointer(src, name)
                final, _ = self.follow(param, p_src)
                if isinstance(final, dict) and final.get("in") in ("body", "formData"):
                    continue  # no 3.0 component: inlined into each operation that references it
                kept[name] = self.parameter(
                    _Param(param, p_src, p_src), join_pointer("/components/parameters", name)
                )
            if kept:
                components["parameters"] = kept
                self.at("/components/parameters", src)
        else:
            group = components.setdefault("securitySchemes", {})
            self.at("/components/securitySchemes", src)
            for name, scheme in value.items():
                group[name] = security_scheme(
                    scheme,
                    join_pointer(src, name),
                    join_pointer("/components/securitySchemes", name),
                    self.at,
                    self.error,
                )

    # -- paths and operations -----------------------------------------------------------------

    def paths(self, paths: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for path, item in paths.items():
            src = join_pointer("/paths", path)
            self.at(src, src)
            if not isinstance(item, dict):
                out[path] = copy.deepcopy(item)
                continue
            shared = self.parameter_list(item.get("parameters"), join_pointer(src, "parameters"))
            new: dict[str, Any] = {}
            for key, value in item.items():
                where = join_pointer(src, key)
                if key == "parameters" and not isinstance(value, list):
                    new[key] = copy.deepcopy(value)
                    self.at(where, where)
                elif key == "parameters":
                    plain = [p for p in shared if p.where not in ("body", "formData")]
                    if plain:
                        new["parameters"] = [
                            self.parameter_or_ref(p, join_pointer(where, i)) for i, p in enumerate(plain)
                        ]
                        self.at(where, where)
                elif key in _METHODS and isinstance(value, dict):
                    new[key] = self.operation(value, where, shared)
                    self.at(where, where)
                else:
                    new[key] = copy.deepcopy(value)
                    self.at(where, where)
            out[path] = new
        return out

    def parameter_list(self, params: Any, src: str) -> list[_Param]:
        """The entries of a ``parameters`` list, each `$ref` to a parameter followed."""
        if not isinstance(params, list):
            return []
        out = []
        for i, node in enumerate(params):
            site = join_pointer(src, i)
            ref = node.get("$ref") if isinstance(node, dict) else None
            if not isinstance(ref, str):
                out.append(_Param(node, site, site))
                continue
            target = ref_to_pointer(ref)
            if target is None:
                self.error(
                    "swagger2-invalid",
                    f"parameter $ref {ref!r} names another file",
                    join_pointer(site, "$ref"),
                    "a 2.0 parameter must be read to convert it: bundle the document into one file first",
                )
                continue
            try:
                resolved = resolve_pointer(self.src, target)
            except LookupError:
                self.error(
                    "swagger2-invalid",
                    f"parameter $ref {ref!r} names nothing in the document",
                    join_pointer(site, "$ref"),
                    "point it at an entry of the top-level `parameters`",
                )
                continue
            component = None
            if target.startswith("/parameters/") and target.count("/") == 2:
                component = rewrite_ref(ref)
            resolved, target = self.follow(resolved, target)
            out.append(_Param(resolved, target, site, component))
        return out

    def follow(self, node: Any, src: str) -> tuple[Any, str]:
        """The parameter a chain of local ``$ref`` s starting at `node` (at `src`) ends at, and where it
        is: a reference to a body parameter must become a request body however many references lead
        to it. A chain that loops or leaves the document stops at its last reference, which the
        reference checks of the converted document report."""
        seen = {src}
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target = ref_to_pointer(node["$ref"])
            if target is None or target in seen:
                break
            try:
                node = resolve_pointer(self.src, target)
            except LookupError:
                break
            seen.add(target)
            src = target
        return node, src

    def operation(self, op: dict[str, Any], src: str, shared: list[_Param]) -> dict[str, Any]:
        own = self.parameter_list(op.get("parameters"), join_pointer(src, "parameters"))
        own_keys = {p.key for p in own}
        inherited = [p for p in shared if p.key not in own_keys]
        bodies = [p for p in inherited + own if p.where == "body"]
        form = [p for p in inherited + own if p.where == "formData"]
        consumes = self.media_types(op, "consumes", src)
        produces = self.media_types(op, "produces", src)
        consumes = self.consumes if consumes is None else consumes
        produces = self.produces if produces is None else produces
        for extra in bodies[1:]:
            self.error(
                "swagger2-invalid",
                "an operation has at most one `in: body` parameter",
                extra.site,
                "describe the whole request body with one body parameter and its schema",
            )
        if bodies and form:
            self.error(
                "swagger2-invalid",
                "an operation cannot have both `in: body` and `in: formData` parameters",
                form[0].site,
                "send the fields in the body schema, or drop the body parameter",
            )
        out: dict[str, Any] = {}
        body_written = False
        for key, value in op.items():
            where = join_pointer(src, key)
            if key in ("consumes", "produces"):
                continue
            if key == "parameters" and not isinstance(value, list):
                out[key] = copy.deepcopy(value)
                self.at(where, where)
            elif key == "parameters":
                plain = [p for p in own if p.where not in ("body", "formData")]
                if plain:
                    out["parameters"] = [
                        self.parameter_or_ref(p, join_pointer(where, i)) for i, p in enumerate(plain)
                    ]
                    self.at(where, where)
                body_written = self.request_body(out, bodies, form, consumes, src)
            elif key == "responses" and isinstance(value, dict):
                out["responses"] = convert_responses(self, value, where, produces)
                self.at(where, where)
            elif key == "schemes":
                servers = self.servers(value, where, where.rsplit("/", 1)[0] + "/servers")
                if servers is not None:
                    out["servers"] = servers
            else:
                out[key] = copy.deepcopy(value)
                self.at(where, where)
        if not body_written:
            self.request_body(out, bodies, form, consumes, src)
        return out

    def request_body(
        self,
        out: dict[str, Any],
        bodies: list[_Param],
        form: list[_Param],
        consumes: list[tuple[str, str]],
        op_src: str,
    ) -> bool:
        dst = op_src + "/requestBody"
        if bodies:
            out["requestBody"] = self.body(bodies[0], dst, consumes)
            return True
        if form:
            out["requestBody"] = self.form_body(form, dst, consumes)
            return True
        return False

    def body(self, param: _Param, dst: str, consumes: list[tuple[str, str]]) -> dict[str, Any]:
        node = param.node
        self.at(dst, param.site)
        out: dict[str, Any] = {}
        if "description" in node:
            out["description"] = copy.deepcopy(node["description"])
            self.at(dst + "/description", param.src + "/description")
        types = consumes or [("application/json", param.src)]
        content: dict[str, Any] = {}
        self.at(dst + "/content", param.src)
        examples = node.get("x-examples") if isinstance(node.get("x-examples"), dict) else {}
        for mt, mt_src in types:
            mt_dst = join_pointer(dst + "/content", mt)
            self.at(mt_dst, mt_src)
            entry: dict[str, Any] = {}
            if "schema" in node:
                schema_src = param.src + "/schema"
                entry["schema"] = convert_schema(self, node["schema"], schema_src, mt_dst + "/schema")
            if mt in examples:
                entry["example"] = copy.deepcopy(examples[mt])
                self.at(mt_dst + "/example", join_pointer(param.src + "/x-examples", mt))
            content[mt] = entry
        out["content"] = content
        if node.get("required") is True:
            out["required"] = True
            self.at(dst + "/required", param.src + "/required")
        for key, value in node.items():
            if key.startswith("x-") and key != "x-examples":
                out[key] = copy.deepcopy(value)
                self.at(join_pointer(dst, key), join_pointer(param.src, key))
        return out

    def form_body(self, fields: list[_Param], dst: str, consumes: list[tuple[str, str]]) -> dict[str, Any]:
        anchor = fields[0].site.rsplit("/", 1)[0]  # the parameters list that holds the first field
        self.at(dst, anchor)
        self.at(dst + "/content", anchor)
        has_file = any(f.node.get("type") == "file" for f in fields)
        types = [(mt, at) for mt, at in consumes if mt.split(";")[0].strip().lower() in _FORM_TYPES]
        if has_file:  # a file travels only in multipart/form-data
            types = [(mt, at) for mt, at in types if "multipart" in mt.lower()]
        if not types:
            types = [("multipart/form-data" if has_file else "application/x-www-form-urlencoded", anchor)]
        required = [f for f in fields if f.node.get("required") is True]
        styles = {str(f.node.get("name")): (f, self.collection_style(f, "formData")) for f in fields}
        content: dict[str, Any] = {}
        for mt, mt_src in types:
            mt_dst = join_pointer(dst + "/content", mt)
            schema_dst = mt_dst + "/schema"
            self.at(mt_dst, mt_src)
            for tail in ("/schema", "/schema/type", "/schema/properties"):
                self.at(mt_dst + tail, anchor)
            properties: dict[str, Any] = {}
            for f in fields:
                name = str(f.node.get("name"))
                prop_dst = join_pointer(schema_dst + "/properties", name)
                prop = value_schema(self, f.node, f.src, prop_dst, allow_file=True)
                if "description" in f.node:
                    prop["description"] = copy.deepcopy(f.node["description"])
                properties[name] = prop
            schema: dict[str, Any] = {"type": "object", "properties": properties}
            if required:
                schema["required"] = [str(f.node.get("name")) for f in required]
                self.at(schema_dst + "/required", anchor)
                for i, f in enumerate(required):
                    self.at(join_pointer(schema_dst + "/required", i), f.src + "/required")
            entry: dict[str, Any] = {"schema": schema}
            encoding = {name: (f, style) for name, (f, style) in styles.items() if style is not None}
            if encoding:
                entry["encoding"] = {}
                self.at(mt_dst + "/encoding", anchor)
                for name, (f, style) in encoding.items():
                    entry["encoding"][name] = {"style": style[0], "explode": style[1]}
                    where = f.src + ("/collectionFormat" if "collectionFormat" in f.node else "/type")
                    for tail in ("", "/style", "/explode"):
                        self.at(join_pointer(mt_dst + "/encoding", name) + tail, where)
            content[mt] = entry
        out: dict[str, Any] = {"content": content}
        if required:
            out["required"] = True
            self.at(dst + "/required", required[0].src + "/required")
        return out

    # -- parameters ---------------------------------------------------------------------------

    def parameter_or_ref(self, p: _Param, dst: str) -> Any:
        if p.component is not None:
            self.at(dst, p.site)
            return {"$ref": p.component}
        return self.parameter(p, dst)

    def parameter(self, p: _Param, dst: str) -> Any:
        """A 2.0 non-body parameter -> a 3.0 Parameter Object at `dst`."""
        node = p.node
        self.at(dst, p.src)
        if not isinstance(node, dict):
            return copy.deepcopy(node)
        if "$ref" in node or "schema" in node:  # not a 2.0 non-body parameter: copied as it is
            return {
                k: (rewrite_ref(v) if k == "$ref" and isinstance(v, str) else copy.deepcopy(v))
                for k, v in node.items()
            }
        where = node.get("in")
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in SCHEMA_KEYWORDS or key in ("collectionFormat", "x-nullable", "x-example"):
                continue
            if key == "allowEmptyValue" and where != "query":
                self.warn(
                    "swagger2-dropped",
                    f"`allowEmptyValue` on a {where} parameter has no OpenAPI 3 equivalent and is dropped",
                    join_pointer(p.src, key),
                    "remove it (OpenAPI 3 allows it on query parameters only)",
                )
                continue
            out[key] = copy.deepcopy(value)
            self.at(join_pointer(dst, key), join_pointer(p.src, key))
        out["schema"] = value_schema(self, node, p.src, dst + "/schema", allow_file=False)
        style = self.collection_style(p, str(where))
        if style is not None and (where == "query" or style[0] != "simple"):
            out["style"], out["explode"] = style
            where_cf = p.src + ("/collectionFormat" if "collectionFormat" in node else "/type")
            self.at(dst + "/style", where_cf)
            self.at(dst + "/explode", where_cf)
        if "x-example" in node:
            out["example"] = copy.deepcopy(node["x-example"])
            self.at(dst + "/example", p.src + "/x-example")
        return out

    def collection_style(self, p: _Param, where: str) -> tuple[str, bool] | None:
        """(style, explode) of an array parameter or form field; None for a non-array."""
        node = p.node
        if not isinstance(node, dict) or node.get("type") != "array":
            return None
        fmt = node.get("collectionFormat", "csv")
        at = p.src + "/collectionFormat"
        if not isinstance(fmt, str):
            self.error(
                "swagger2-invalid",
                f"collectionFormat must be a string, not {fmt!r}",
                at,
                "use one of csv, ssv, tsv, pipes, multi",
            )
            return None
        if where in ("query", "formData"):
            if fmt in _QUERY_STYLES:
                return _QUERY_STYLES[fmt]
        elif where in ("path", "header") and fmt == "csv":
            return ("simple", False)
        if fmt == "tsv" or fmt in _QUERY_STYLES:
            self.error(
                "swagger2-unsupported",
                f"`collectionFormat: {fmt}` on a {where} parameter has no OpenAPI 3 equivalent",
                at,
                "use csv (or, in a query, ssv, pipes or multi)",
            )
        else:
            self.error(
                "swagger2-invalid",
                f"unknown collectionFormat {fmt!r}",
                at,
                "use one of csv, ssv, tsv, pipes, multi",
            )
        return None


__all__ = ["CONVERTED_VERSION", "Converted", "PointerMap", "convert_swagger2", "is_swagger2"]
