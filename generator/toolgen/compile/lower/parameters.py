"""Parameters: an operation's path, query, header and cookie parameters -> tool arguments and the
values the runtime sends on its own.

Input: the path item's and the operation's parameter objects (the operation's win on the same name
and location; ``$ref``s followed) and the intent (`hide`, `fixed`, the idempotency key's wire name).
Output: `ParameterArgs`: one argument per parameter the model passes (a valid argument name, the
parameter's converted schema and description, a binding that keeps the wire name, style and explode),
the fixed values, and the credentials the runtime injects instead of the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ...naming import arg_name
from ...pointer import join_pointer
from ...policy.format import METHOD_OVERRIDE_HEADERS, RESERVED_HEADERS
from ..ir import ArgBinding, AuthBinding, FixedValue
from ..load import SpecDocument
from ..operations import Operation
from ..schema import SchemaConverter
from .constants import single_value
from .context import Arg, Ctx, Locate, Skip
from .resolve import ResolvedIntent
from .security import secret_name, signed_parameters
from .text import cap_text

MANAGED_HEADERS = {"authorization", "content-type", "accept", "content-length", "user-agent", "host"}
#: Managed headers a `fixed:` entry may set (the runtime sends its own User-Agent and the Accept the
#: output needs otherwise); Authorization, Content-Type, Content-Length and Host stay the runtime's.
FIXABLE_MANAGED = frozenset({"user-agent", "accept"})
#: Headers that make a server run another method than the operation's (Rails, Google APIs and Amadeus
#: honour them): never a model's argument, or a read tool could send ``DELETE``. A required one is
#: sent as the spec states it (Amadeus: ``GET`` on a POST search), else as the operation's own method;
#: an optional one is not sent; `fixed:` may set it.
CREDENTIAL_NAME = re.compile(
    r"(^|[-_.])(api[-_]?key|apikey|access[-_]?token|token|secret|auth)$", re.IGNORECASE
)
LOCATION_ORDER: dict[str, int] = {"path": 0, "query": 1, "header": 2, "cookie": 3, "body": 4}


def merged_parameters(ctx: Ctx, op: Operation) -> list[tuple[dict[str, Any], str]]:
    """Path-item parameters overridden by operation parameters (same name + in), refs resolved."""
    merged: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
    for owner, owner_ptr in ((op.path_item, op.path_item_pointer), (op.node, op.pointer)):
        params = owner.get("parameters")
        if not isinstance(params, list):
            continue
        for i, raw in enumerate(params):
            ptr = join_pointer(owner_ptr, "parameters", i)
            node, target_ptr = ctx.converter.resolve(raw, ptr)
            if not isinstance(node, dict) or "name" not in node or "in" not in node:
                raise Skip(
                    "parameter-invalid",
                    f"parameter at #{ctx.doc.source_pointer(ptr)} has no `name`/`in`",
                    ctx.doc.locate(ptr),
                    "fix the parameter object",
                )
            merged[(str(node["name"]), str(node["in"]))] = (node, target_ptr)
    return list(merged.values())


@dataclass
class ParameterArgs:
    """What an operation's parameters become: the arguments the model sees, the values the runtime
    always sends (`api.headers`, `fixed`), the credentials found among them, and the `hide` entries no
    parameter matched (the request body may still have them)."""

    args: list[Arg]
    fixed: list[FixedValue]
    auth: tuple[AuthBinding, ...]
    hidden: set[str]


def parameter_args(
    ctx: Ctx,
    op: Operation,
    intent: ResolvedIntent,
    params: list[tuple[dict[str, Any], str]],
    *,
    auth: tuple[AuthBinding, ...],
    key_params: set[tuple[str, str]],
    paging: set[str],
    iloc: Locate,
) -> ParameterArgs:
    """The parameters in argument order (path, query, header, cookie; path ones as the path names
    them), minus what the model must not pass: the paging parameters (`paging`), apiKey credentials
    (`key_params`), hidden ones, headers the runtime manages or sends from `api.headers`, hop-by-hop,
    framing and Cookie headers (`RESERVED_HEADERS`, with a ``header-reserved`` warning), the
    idempotency key's wire parameter, `fixed` values (checked against the parameter's schema) and
    parameters that look like credentials (sent from a secret, with a ``param-credential`` note).
    A parameter a security scheme's request signature computes (`signed_parameters`, AWS SigV4's
    ``X-Amz-Date`` and the like) that the intent does not hide stays an argument, with a
    ``param-signed-visible`` warning located at the intent. A required ``Accept`` header, or a required ``Content-Type`` of a request without a body, is
    a fixed value (`_header_default`): a validating server refuses the request without it. So is a
    required parameter whose schema admits one value only (`single_value`: an ``enum`` of one, a
    ``const``), with the schema's pointer as its `FixedValue.source`; a `fixed` entry for it wins
    and is checked against that schema like any other. A ``User-Agent`` is never an argument: it is
    sent as a `fixed:` entry or the spec's own value says (`_spec_value`), else the runtime sends its
    own; `fixed:` may also set ``Accept``. A method-override header (`METHOD_OVERRIDE_HEADERS`) is
    never an argument either: a fixed value as the spec states it when required (else the
    operation's method), or not sent.
    Raises `Skip` for a hidden required parameter, an invalid fixed value or a `fixed` key that
    names no parameter."""
    lowering = _ParameterLowering(ctx, op, intent, auth=auth, key_params=key_params, paging=paging, iloc=iloc)
    for param, ptr in sorted(
        params, key=lambda pp: (LOCATION_ORDER.get(str(pp[0].get("in")), 9), _path_order(op.path, pp[0]))
    ):
        lowering.take(param, ptr)
    if lowering.fixed_specs:
        first = min(lowering.fixed_specs)
        raise Skip(
            "fixed-unknown",
            f"`fixed` names {first!r}, which is not a parameter of {op.key}",
            iloc("fixed", first),
            "use a parameter's wire name, or `in:name`",
        )
    _reserve_names(lowering.args, params, key_params)
    return ParameterArgs(lowering.args, lowering.fixed, lowering.auth, lowering.hidden)


class _ParameterLowering:
    """`parameter_args` for one operation, parameter by parameter (`take`): what is gathered so far
    (arguments, fixed values, credentials) and the intent's entries not used yet (`hide`, `fixed`)."""

    def __init__(
        self,
        ctx: Ctx,
        op: Operation,
        intent: ResolvedIntent,
        *,
        auth: tuple[AuthBinding, ...],
        key_params: set[tuple[str, str]],
        paging: set[str],
        iloc: Locate,
    ) -> None:
        model = ctx.intents.model
        self.ctx, self.op, self.iloc = ctx, op, iloc
        self.key_params, self.paging = key_params, paging
        self.desc_limit = model.defaults.argument_description_max_chars
        self.hidden = set(intent.hide)
        self.fixed_specs = dict(intent.fixed)
        self.fixed = [FixedValue("header", k, v) for k, v in sorted(model.api.headers.items())]
        self.api_headers = {k.lower() for k in model.api.headers}
        self.auth = auth
        self.args: list[Arg] = []
        self.idem_wire: tuple[str, str] | None = None
        idem = intent.idempotency
        if idem is not None and idem.send_in != "none" and idem.wire_name is not None:
            loc_, wire_ = idem.send_in, idem.wire_name
            self.idem_wire = (loc_, wire_.lower())
        self.signed = signed_parameters(ctx.doc, op)

    def take(self, param: dict[str, Any], ptr: str) -> None:
        """Lower one parameter: left out, sent by the runtime (a managed header, the idempotency key,
        a fixed value or constant, a credential), or an argument."""
        where_in, wire = str(param.get("in")), str(param.get("name"))
        if where_in not in ("path", "query", "header", "cookie"):
            raise Skip(
                "parameter-invalid",
                f"parameter {wire!r} has unknown location {where_in!r}",
                self.ctx.doc.locate(ptr),
                "use path, query, header or cookie",
            )
        if self._left_out(param, where_in, wire):
            return
        if where_in in ("header", "query") and wire.lower() in self.signed:
            self._warn_signed(param, ptr, where_in, wire)
        if where_in == "header" and wire.lower() in RESERVED_HEADERS | METHOD_OVERRIDE_HEADERS:
            self.fixed.extend(
                _header_not_argument(
                    self.ctx, self.op, param, ptr, self.fixed_specs, self.iloc, self.api_headers
                )
            )
            return
        if where_in == "header" and wire.lower() in self.api_headers:
            return  # sent by the runtime from api.headers
        if where_in == "header" and wire.lower() in MANAGED_HEADERS:
            self._managed_header(param, ptr, wire)
            return
        if self.idem_wire is not None and (where_in, wire.lower()) == self.idem_wire:
            return  # replaced by the idempotency key argument
        if self._fixed(param, ptr, where_in, wire) or self._credential(param, ptr, where_in, wire):
            return
        self.args.append(self._argument(param, ptr, where_in, wire))

    def _left_out(self, param: dict[str, Any], where_in: str, wire: str) -> bool:
        """A paging parameter, an apiKey credential (injected by the runtime) or a hidden parameter;
        `Skip` ``hide-required`` when `hide` names a required one."""
        if (where_in == "query" and wire in self.paging) or (where_in, wire.lower()) in self.key_params:
            return True
        if wire not in self.hidden:
            return False
        if param.get("required") or where_in == "path":
            raise Skip(
                "hide-required",
                f"`hide` names {wire!r}, a required parameter of {self.op.key}",
                self.iloc("hide"),
                "only optional parameters can be hidden; use `fixed` to set a value",
            )
        self.hidden.discard(wire)
        return True

    def _warn_signed(self, param: dict[str, Any], ptr: str, where_in: str, wire: str) -> None:
        scheme, scheme_ptr = self.signed[wire.lower()]
        self.ctx.sink.warning(
            "param-signed-visible",
            f"{self.op.key}: the {where_in} parameter {wire!r} (#{ptr}) is computed by the request signature "
            f"of security scheme {scheme!r} (#{scheme_ptr}); as a tool argument a model would be asked "
            "to fill it in",
            self.iloc(),
            f"add {wire!r} to the intent's `hide:` (`toolgen init` drafts it): signing belongs to the "
            "transport, not to the model"
            if not param.get("required")
            else "the parameter is required, so it cannot be hidden, and the runtime does not sign "
            "requests: leave the operation out",
        )

    def _managed_header(self, param: dict[str, Any], ptr: str, wire: str) -> None:
        """A header the runtime manages (`MANAGED_HEADERS`): a `fixed:` value where allowed, the spec's
        User-Agent, a bearer credential for Authorization, or a required Accept (or a Content-Type
        without a body) as the spec states it; otherwise the runtime's own."""
        ctx, op, lower = self.ctx, self.op, wire.lower()
        fixed_key = next((k for k in (f"header:{wire}", wire) if k in self.fixed_specs), None)
        if lower in FIXABLE_MANAGED and fixed_key is not None:
            value = self.fixed_specs.pop(fixed_key)
            problem = _value_problem(param_schema(ctx, param, ptr), value) or _header_text_problem(value)
            if problem:
                raise Skip(
                    "fixed-invalid",
                    f"`fixed` value {value!r} for header {wire!r} of {op.key} is invalid: {problem}",
                    self.iloc("fixed", fixed_key),
                    "use a value the parameter's schema allows",
                )
            self.fixed.append(FixedValue("header", wire, value))
        elif lower == "user-agent":
            # a User-Agent is never a model argument: the spec's own value when it states one, else
            # the runtime sends its own on every request (runtime.request.USER_AGENT)
            value = _spec_value(param_schema(ctx, param, ptr), param)
            if value is not None and _header_text_problem(value) is None:
                self.fixed.append(FixedValue("header", wire, value))
        elif lower == "authorization" and not self.auth:
            self.auth = (
                *self.auth,
                AuthBinding(
                    "header:Authorization", "bearer", "header", "Authorization", secret_name(ctx.api, "", 1)
                ),
            )
        elif param.get("required") and (
            lower == "accept" or (lower == "content-type" and "requestBody" not in op.node)
        ):
            # a required Accept, or a Content-Type on a request without a body (the body's
            # encoding sets it otherwise), is sent as the spec states it
            schema = param_schema(ctx, param, ptr)
            value = _header_default(schema, param)
            if lower == "accept":
                value = _accept_offered(ctx, op, schema, value)
            self.fixed.append(FixedValue("header", wire, value))

    def _fixed(self, param: dict[str, Any], ptr: str, where_in: str, wire: str) -> bool:
        """Whether the parameter is a fixed value: the intent's `fixed:` entry (checked against its
        schema: `Skip` ``fixed-invalid``), or the one value the schema of a required one admits."""
        fixed_key = next((k for k in (f"{where_in}:{wire}", wire) if k in self.fixed_specs), None)
        if fixed_key is not None:
            value = self.fixed_specs.pop(fixed_key)
            problem = _value_problem(param_schema(self.ctx, param, ptr), value)
            if problem:
                raise Skip(
                    "fixed-invalid",
                    f"`fixed` value {value!r} for parameter {wire!r} of {self.op.key} is invalid: {problem}",
                    self.iloc("fixed", fixed_key),
                    "use a value the parameter's schema allows",
                )
            self.fixed.append(FixedValue(where_in, wire, value))  # type: ignore[arg-type]
            return True
        if param.get("required") or where_in == "path":
            only = single_value(param_schema(self.ctx, param, ptr))
            if only is not None:  # the spec admits one value: a constant of the operation, not an argument
                source = join_pointer(ptr, "schema") if "schema" in param else ptr
                self.fixed.append(FixedValue(where_in, wire, only[0], "#" + source))  # type: ignore[arg-type]
                return True
        return False

    def _credential(self, param: dict[str, Any], ptr: str, where_in: str, wire: str) -> bool:
        """Whether the parameter looks like a credential (`CREDENTIAL_NAME`; a required one, or a
        header): then the runtime sends it from a secret, with a ``param-credential`` note."""
        if not (
            where_in in ("header", "query", "cookie")
            and CREDENTIAL_NAME.search(wire)
            and (param.get("required") or where_in == "header")
        ):
            return False
        secret = re.sub(r"[^A-Za-z0-9]+", "_", f"{self.ctx.api}_{wire}").upper().strip("_")
        binding = AuthBinding(
            f"{where_in}:{wire}",
            "apiKey",
            where_in,  # type: ignore[arg-type]
            wire,
            secret,
        )
        self.auth = (*self.auth, binding)
        self.ctx.sink.info(
            "param-credential",
            f"{self.op.key}: {where_in} parameter {wire!r} looks like "
            f"a credential; the runtime sends it from secret {secret} instead of a tool "
            "argument",
            self.ctx.doc.locate(ptr),
        )
        return True

    def _argument(self, param: dict[str, Any], ptr: str, where_in: str, wire: str) -> Arg:
        """The parameter as a tool argument: its converted schema and description, and a binding that
        keeps its wire name, style, explode and content type."""
        schema = param_schema(self.ctx, param, ptr)
        text = param.get("description")
        if isinstance(text, str) and text.strip() and "description" not in schema:
            schema["description"] = cap_text(text, self.desc_limit)
        if param.get("deprecated") is True:
            schema["deprecated"] = True
        required = bool(param.get("required")) or where_in == "path"
        if required:
            _require_a_value(schema, where_in)
        style = param.get("style") if isinstance(param.get("style"), str) else None
        explode = param.get("explode") if isinstance(param.get("explode"), bool) else None
        content_type = None
        if isinstance(param.get("content"), dict) and param["content"]:
            content_type = min(param["content"])
        binding = ArgBinding("", where_in, wire, required, "omit", style, explode, content_type)  # type: ignore[arg-type]
        return Arg(arg_name(wire), schema, binding, required)


def _require_a_value(schema: dict[str, Any], where_in: str) -> None:
    """Make a required parameter's `schema` refuse values that put nothing on the wire: an empty array
    in the query (the parameter would be missing) or an empty string header (to many servers and
    proxies no header at all; Prism: "must have required property")."""
    if where_in == "query" and schema.get("type") == "array" and "minItems" not in schema:
        schema["minItems"] = 1
    if (
        where_in == "header"
        and schema.get("type") == "string"
        and "minLength" not in schema
        and "enum" not in schema
        and "const" not in schema
    ):
        schema["minLength"] = 1
        if schema.get("default") == "":
            del schema["default"]


def key_parameter_schema(
    ctx: Ctx, intent: ResolvedIntent, params: list[tuple[dict[str, Any], str]]
) -> dict[str, Any] | None:
    """The schema of the header or query parameter the intent's idempotency key is sent in
    (``send_as``; a header's name in any case), or None when the operation declares none."""
    idem = intent.idempotency
    if idem is None or idem.wire_name is None:
        return None
    where, name = idem.send_in, idem.wire_name
    for param, ptr in params:
        if (
            param.get("in") == where
            and where in ("header", "query")
            and (
                str(param.get("name")) == name
                or (where == "header" and str(param.get("name")).lower() == name.lower())
            )
        ):
            return param_schema(ctx, param, ptr)
    return None


def _header_not_argument(
    ctx: Ctx,
    op: Operation,
    param: dict[str, Any],
    ptr: str,
    fixed_specs: dict[str, Any],
    iloc: Locate,
    api_headers: set[str],
) -> list[FixedValue]:
    """What the runtime sends for a header parameter that is never an argument. A hop-by-hop,
    framing or Cookie header (`RESERVED_HEADERS`): nothing, not even a `fixed` value, with a
    ``header-reserved`` warning. A method-override header (`METHOD_OVERRIDE_HEADERS`): the intent's
    `fixed:` value, else for a required one the value the spec states or the operation's method;
    none for an optional one or one `api.headers` sends. Raises `Skip` ``fixed-invalid`` for a value
    its schema refuses."""
    wire = str(param.get("name"))
    if wire.lower() in RESERVED_HEADERS:
        for key in (f"header:{wire}", wire):
            fixed_specs.pop(key, None)  # a `fixed` value for it is not sent either
        ctx.sink.warning(
            "header-reserved",
            f"{op.key}: the {'required ' if param.get('required') else ''}header parameter {wire!r} "
            "is not a tool argument and is not sent: "
            + (
                "the runtime builds the Cookie header from `in: cookie` parameters and credentials"
                if wire.lower() == "cookie"
                else "hop-by-hop and message-framing headers belong to the HTTP client"
            ),
            ctx.doc.locate(ptr),
            "nothing to do unless the API needs it; declare cookies as `in: cookie` parameters"
            if wire.lower() == "cookie"
            else "nothing to do: the HTTP client sets it when needed",
        )
        return []
    if wire.lower() in api_headers:
        return []  # sent by the runtime from api.headers
    fixed_key = next((k for k in (f"header:{wire}", wire) if k in fixed_specs), None)
    schema = param_schema(ctx, param, ptr)
    value = (
        fixed_specs.pop(fixed_key)
        if fixed_key is not None
        else ((_spec_value(schema, param) or op.method.upper()) if param.get("required") else None)
    )
    if value is None:
        return []
    problem = _value_problem(schema, value) or _header_text_problem(value)
    if problem:
        raise Skip(
            "fixed-invalid",
            f"the value {value!r} of header {wire!r} of {op.key} is invalid: {problem}",
            iloc("fixed", fixed_key) if fixed_key else ctx.doc.locate(ptr),
            "set a valid `fixed:` value for it",
        )
    return [FixedValue("header", wire, value)]


def _reserve_names(
    args: list[Arg], params: list[tuple[dict[str, Any], str]], key_params: set[tuple[str, str]]
) -> None:
    """Record on each argument that may be an exploded object (`exploded_object`) the other names
    its operation declares in its location and its credentials' names there (`ArgBinding.reserved`)."""
    for arg in args:
        bound = arg.binding
        if bound is not None and exploded_object(bound, arg.schema):
            names = {str(p.get("name")) for p, _ in params if p.get("in") == bound.location} | {
                wire for loc, wire in key_params if loc == bound.location
            }
            names.discard(bound.wire_name)
            arg.binding = replace(bound, reserved=tuple(sorted(names)))


def exploded_object(binding: ArgBinding, schema: dict[str, Any]) -> bool:
    """Whether a query or cookie argument may be an object sent exploded (OpenAPI ``form`` style,
    the default, with ``explode``, its default): each member then becomes a parameter of its own,
    named by the caller, so its binding records the names it may not take (`ArgBinding.reserved`).
    A schema that admits an object: ``type`` object (or no ``type``), or such a branch."""
    if binding.location not in ("query", "cookie") or binding.explode is False or binding.content_type:
        return False  # a `content` parameter is one value in its media type, never exploded
    if binding.style not in (None, "form", "spaceDelimited", "pipeDelimited"):
        return False
    return _admits_object(schema, 0)


def _admits_object(schema: Any, depth: int) -> bool:
    if not isinstance(schema, dict) or depth > 16:
        return True  # `true`, a reference or a deep union: assume it may
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        if isinstance(values, list) and not any(isinstance(v, dict) for v in values):
            return False
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "object":
        return False
    if isinstance(kind, list) and "object" not in kind:
        return False
    branches = [b for key in ("anyOf", "oneOf") for b in (schema.get(key) or [])]
    if branches and not any(_admits_object(b, depth + 1) for b in branches):
        return False
    return all(_admits_object(m, depth + 1) for m in (schema.get("allOf") or []))


def param_schema(ctx: Ctx, param: dict[str, Any], ptr: str) -> dict[str, Any]:
    """The parameter's schema (from `schema`, else the first media type of `content`, else a
    string), converted to the canonical input form."""
    if "schema" in param:
        return ctx.converter.convert(param["schema"], join_pointer(ptr, "schema"), "input")
    content = param.get("content")
    if isinstance(content, dict) and content:
        media = min(content)
        node = content[media]
        if isinstance(node, dict) and "schema" in node:
            return ctx.converter.convert(
                node["schema"], join_pointer(ptr, "content", media, "schema"), "input"
            )
    return {"type": "string"}


def _header_default(schema: dict[str, Any], param: dict[str, Any]) -> str:
    """The value of a required Accept/Content-Type header: `_spec_value`, else ``application/json``."""
    return _spec_value(schema, param) or "application/json"


def _accept_offered(ctx: Ctx, op: Operation, schema: dict[str, Any], value: str) -> str:
    """A required Accept whose stated `value` names no media type the success responses offer (VTEX:
    ``application/vnd.vtex.ds.v10+json`` for an ``application/json`` answer) is sent as the list
    ``value, <offered>`` (RFC 9110 §12.5.1), the first JSON type offered or else the first one, when
    the parameter's schema admits that string: the API still reads its own type first, and a server
    that negotiates (a validating mock does) finds one it has. `value` as it is otherwise."""
    offered: list[str] = []
    raw_responses = op.node.get("responses")
    responses: dict[Any, Any] = raw_responses if isinstance(raw_responses, dict) else {}
    for code in sorted(map(str, responses)):
        if not code.startswith("2"):
            continue
        raw = responses.get(code, responses.get(int(code)) if code.isdigit() else None)
        node, _ = ctx.converter.resolve(raw, join_pointer(op.pointer, "responses", code))
        content = node.get("content") if isinstance(node, dict) else None
        if isinstance(content, dict):
            offered.extend(str(m) for m in content if str(m) not in offered)
    if not offered or any(_media_matches(rng, media) for rng in value.split(",") for media in offered):
        return value
    extra = next((m for m in offered if "json" in m.lower()), offered[0])
    combined = f"{value}, {extra}"
    return combined if _value_problem(schema, combined) is None else value


def _media_matches(media_range: str, media: str) -> bool:
    """Whether an Accept media range and an offered media type can meet (``*`` on either side)."""
    a, b = (m.split(";")[0].strip().lower() for m in (media_range, media))
    (at, _, asub), (bt, _, bsub) = a.partition("/"), b.partition("/")
    return (at in ("*", bt) and asub in ("*", bsub)) or bt == "*" or (bt == at and bsub == "*")


def _spec_value(schema: dict[str, Any], param: dict[str, Any]) -> str | None:
    """The string value the spec states for a header parameter: the converted `schema`'s `default` or
    first `enum` value, the parameter's own (inline) schema's `example` or first `examples` value (the
    conversion drops both), the parameter's `example` or first `examples` entry; None when it states none."""
    raw_schema, raw_examples = param.get("schema"), param.get("examples")
    raw: dict[str, Any] = raw_schema if isinstance(raw_schema, dict) else {}
    named: dict[str, Any] = raw_examples if isinstance(raw_examples, dict) else {}
    first_named = next(iter(named.values()), None)
    candidates = (
        schema.get("default"),
        _first(schema.get("enum")),
        raw.get("example"),
        _first(raw.get("examples")),
        param.get("example"),
        first_named.get("value") if isinstance(first_named, dict) else None,
    )
    return next((value for value in candidates if isinstance(value, str) and value), None)


def _first(values: Any) -> Any:
    return values[0] if isinstance(values, list) and values else None


def _header_text_problem(value: Any) -> str | None:
    """Why `value` cannot be a header field value as given (RFC 9110 §5.5: visible ASCII, spaces and
    tabs inside; the runtime refuses anything else), or None."""
    if not isinstance(value, str) or not value:
        return "a header value is a non-empty string"
    if value != value.strip(" \t") or any(not (" " <= ch <= "~" or ch == "\t") for ch in value):
        return "a header value is visible ASCII text, with no leading or trailing space"
    return None


def _value_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why `value` does not validate against `schema` (JSON Schema 2020-12), or None."""
    import jsonschema  # imported when a value is checked: a build that reuses its lowering needs none

    from ..schema.bounded import bounded_validator  # spec patterns in bounded time

    error = jsonschema.exceptions.best_match(bounded_validator()(schema).iter_errors(value))
    return None if error is None else error.message


def _path_order(path: str, param: dict[str, Any]) -> int:
    if param.get("in") != "path":
        return 0
    pos = path.find("{" + str(param.get("name")) + "}")
    return pos if pos >= 0 else 10_000


def operation_parameters(
    doc: SpecDocument, converter: SchemaConverter, op: Operation
) -> list[tuple[dict[str, Any], str]]:
    """The operation's parameters (path-item ones overridden by the operation's), `$ref`s resolved,
    as (parameter object, pointer). Raises `DiagnosticError` for a broken `$ref`; [] for an invalid
    parameter list."""
    try:
        return merged_parameters(Ctx(doc, None, converter.sink, "", converter), op)  # type: ignore[arg-type]
    except Skip:
        return []
