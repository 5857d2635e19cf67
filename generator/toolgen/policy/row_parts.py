"""Kernel `policy.row_parts`: the parts of a policy row (``policy.json``, `toolgen.policy.format`), each
a frozen, typed value with its JSON writer (`to_json`) and reader (`read_...`).

Input: a part's `toolgen.policy.nodes.Node` in a ``policy.json`` being read (`from_json`). Output:
`ArgBinding` and `FixedValue` (the request's ``bindings[]`` and ``fixed[]``), `Idempotency`,
`Pagination`, `Retry`, `OutputPolicy` and `NarrowedArg`, and the closed sets of their values. A
reader fails closed as `from_json` does: an unknown or missing member, a value outside its values
or bounds (`toolgen.policy.members`) raises `PolicyFormatError` with the member's JSON pointer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..results import Redirect, ResponseBody, Shape
from .members import MAX_ATTEMPTS, MAX_BACKOFF_MS, MAX_DEADLINE_MS, MAX_PAGE_SIZE, MEMBERS
from .nodes import Node

ArgLocation = Literal["path", "query", "header", "cookie", "body"]
PaginationStyle = Literal["cursor", "offset", "page", "link"]
NullMeans = Literal["omit", "send"]
IdempotencyIn = Literal["header", "query", "body", "none"]
SchemaMode = Literal["strict", "warn", "off"]

JSON = Any  # a JSON value: dict/list/str/int/float/bool/None

#: Header parameters that are never tool arguments and never set by a binding: the hop-by-hop headers
#: (RFC 9110 §7.6.1: Connection and what it names, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade,
#: the proxy credentials) and the message-framing ones (Transfer-Encoding, Expect; RFC 9112 §6: a
#: request with Transfer-Encoding and Content-Length is a smuggling vector), which the HTTP client owns;
#: and Cookie, which the runtime assembles from ``in: cookie`` parameters and credentials (a free-form
#: Cookie argument could carry any cookie). The build drops such parameters (``header-reserved``); the
#: runtime refuses a binding that names one.
RESERVED_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-authenticate",
        "transfer-encoding",
        "expect",
        "cookie",
    }
)
#: Headers that make a server run another method: the build fixes or drops them, never an argument.
METHOD_OVERRIDE_HEADERS = frozenset({"x-http-method-override", "x-http-method", "x-method-override"})


@dataclass(frozen=True)
class ArgBinding:
    """How one tool argument reaches the HTTP request (``request.bindings[]``).

    `arg` is the top-level property name in the tool's input schema. `location` is where the value
    goes; `wire_name` is the parameter or body-property name on the wire (``""`` when the argument
    *is* the whole request body, e.g. an array or binary body). `style`/`explode` follow OpenAPI
    parameter serialisation (section "Style Values"); for form bodies they come from the encoding
    object. `null_means` says what a JSON null does: ``omit`` (leave the parameter/property out) or
    ``send`` (send JSON null; only for required nullable body properties). `reserved`: for a query
    or cookie parameter that may be an object sent exploded (one parameter per member, named by
    the caller), the other names the operation declares in that location, hidden ones included,
    and its credentials' there: the runtime refuses a member of one of these names.
    """

    arg: str
    location: ArgLocation
    wire_name: str
    required: bool
    null_means: NullMeans = "omit"
    style: str | None = None
    explode: bool | None = None
    content_type: str | None = None  # multipart part or parameter `content` media type
    reserved: tuple[str, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return {
            "arg": self.arg,
            "in": self.location,
            "name": self.wire_name,
            "required": self.required,
            "null": self.null_means,
            "style": self.style,
            "explode": self.explode,
            "content_type": self.content_type,
            "reserved": list(self.reserved),
        }


@dataclass(frozen=True)
class FixedValue:
    """A value the runtime always sends that the model never sees (``request.fixed[]``, e.g. an API
    version header).

    `source` says where a value the spec itself fixes came from: the JSON pointer (``#/...``) of the
    schema that admits this value only (a required parameter or body member with an ``enum`` of one
    or a ``const``); empty for a value from the intent map (`fixed`, `api.headers`) or a default."""

    location: ArgLocation
    wire_name: str
    value: JSON
    source: str = ""

    def to_json(self) -> dict[str, JSON]:
        return {"in": self.location, "name": self.wire_name, "value": self.value, "source": self.source}


@dataclass(frozen=True)
class Idempotency:
    """Where the idempotency key comes from (`arg`, a record-tool argument) and how it is sent.

    `send_in` is ``header``/``query``/``body`` or ``none`` (the key is used for receipts only).
    `honoured_by_api` is ``True`` when the intent map declares that the API deduplicates by the key,
    ``False`` when it declares it does not, ``None`` when it does not say (written, and treated, as
    ``False``).
    """

    arg: str
    send_in: IdempotencyIn
    wire_name: str | None
    honoured_by_api: bool | None = None

    @property
    def forwarded(self) -> bool:
        """The key goes to the API (``in`` header, query or body), not to the receipts alone."""
        return self.send_in != "none"

    def to_json(self) -> dict[str, JSON]:
        return {
            "arg": self.arg,
            "in": self.send_in,
            "name": self.wire_name,
            "honoured_by_api": bool(self.honoured_by_api),
        }


@dataclass(frozen=True)
class Pagination:
    """How a list operation pages, normalised by the runtime to `items` + opaque `next_cursor`.

    style cursor: `cursor_param` carries the API's cursor; `next_field` (dotted path in the response
    body, or ``header:NAME`` for the response header NAME) is where the next cursor is read, or for
    ``starting_after`` APIs the id field of the last item (`cursor_from_item`) with `has_more_field`.
    style offset: `cursor_param` is the offset parameter. style page: `cursor_param` is the page
    number parameter. style link: the next URL is at `next_field`, else in the `Link` header (RFC 8288).
    `limit_param` is the page-size parameter; the model's `page_size` is bounded by `min_page_size`
    and `max_page_size` (the intent's bound narrowed to the parameter's `minimum`/`maximum`).
    `first_position` is the first page number (page style) or offset (offset style): the cursor
    parameter's `default`, else its `minimum`, else 1 or 0; the runtime sends it on the first request
    when `first_required` (the parameter is required), and counts the next page from it.
    `items_field` is the dotted path of the item array in the response body (``""`` when the body
    itself is the array; JSON member ``items``).
    """

    style: PaginationStyle
    items_field: str
    cursor_param: str | None
    limit_param: str | None
    next_field: str | None = None
    has_more_field: str | None = None
    cursor_from_item: str | None = None
    default_page_size: int = 20
    max_page_size: int = 100
    min_page_size: int = 1
    first_position: int | None = None
    first_required: bool = False
    cursor_arg: str = "cursor"
    page_size_arg: str = "page_size"

    def to_json(self) -> dict[str, JSON]:
        return {
            "style": self.style,
            "cursor_arg": self.cursor_arg,
            "page_size_arg": self.page_size_arg,
            "items": self.items_field,
            "cursor_param": self.cursor_param,
            "limit_param": self.limit_param,
            "next_field": self.next_field,
            "has_more_field": self.has_more_field,
            "cursor_from_item": self.cursor_from_item,
            "default_page_size": self.default_page_size,
            "max_page_size": self.max_page_size,
            "min_page_size": self.min_page_size,
            "first_position": self.first_position,
            "first_required": self.first_required,
        }


@dataclass(frozen=True)
class Retry:
    """Bounded retry: at most `max_attempts` tries in total within `deadline_ms`, exponential
    backoff starting at `backoff_ms`, only for the listed retryable conditions (`on`: ``timeout``
    or an HTTP status as a string, e.g. ``("timeout", "429", "502", "503", "504")``)."""

    max_attempts: int
    backoff_ms: int
    deadline_ms: int
    on: tuple[str, ...]

    def to_json(self) -> dict[str, JSON]:
        return {
            "max_attempts": self.max_attempts,
            "backoff_ms": self.backoff_ms,
            "deadline_ms": self.deadline_ms,
            "on": list(self.on),
        }


@dataclass(frozen=True)
class OutputPolicy:
    """What of the response the model sees.

    `fields`: projection (dotted paths) applied to the object, or to each item of a paginated
    list; empty = no projection. `max_bytes`: size budget of the serialised result; beyond it the
    runtime truncates with an explicit marker. `redact`: dotted paths replaced by ``"[redacted]"``.
    `schema_mode`: output validation mode (strict/warn/off). `shape`: how the body becomes the
    result (`toolgen.results.shape_body`: ``object``, ``result`` or ``status``), decided with the
    output schema (`toolgen.results.result_shape`). `body`: how the runtime reads the answer
    (`toolgen.results.ResponseBody`). `accept`: the media type the runtime asks for (``Accept``)
    when the response offers JSON next to other media types, else None. `redirect`: for an operation
    whose only declared success is a redirect (3xx), ``follow`` (a read follows a same-origin
    redirect, at most `toolgen.runtime.pipeline.redirect.MAX_REDIRECTS` hops within its deadline) or
    ``location`` (a download link, or a write: the result is the redirect's ``Location``); None
    otherwise.
    """

    fields: tuple[str, ...] = ()
    max_bytes: int = 16_000
    redact: tuple[str, ...] = ()
    schema_mode: SchemaMode = "warn"
    shape: Shape = "object"
    body: ResponseBody = "json"
    accept: str | None = None
    redirect: Redirect | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "fields": list(self.fields),
            "max_bytes": self.max_bytes,
            "redact": list(self.redact),
            "schema_mode": self.schema_mode,
            "shape": self.shape,
            "body": self.body,
            "accept": self.accept,
            "redirect": self.redirect,
        }


@dataclass(frozen=True)
class NarrowedArg:
    """An argument the intent map narrowed (``tools.<key>.args.<name>``): `schema` is the narrowed
    schema the runtime validates against (None: the canonical one kept), `description` the override
    (None: kept), `hidden` whether the argument was removed (the runtime never sends it)."""

    arg: str
    schema: JSON | None = None
    description: str | None = None
    hidden: bool = False

    def to_json(self) -> dict[str, JSON]:
        return {
            "arg": self.arg,
            "schema": self.schema,
            "description": self.description,
            "hidden": self.hidden,
        }


def read_binding(n: Node) -> ArgBinding:
    n.exactly(MEMBERS["binding"])
    return ArgBinding(
        arg=n.get("arg").text(),
        location=n.get("in").choice(ArgLocation),
        wire_name=n.get("name").text(),
        required=n.get("required").flag(),
        null_means=n.get("null").choice(NullMeans),
        style=n.get("style").opt_text(),
        explode=n.get("explode").opt_flag(),
        content_type=n.get("content_type").opt_text(),
        reserved=n.get("reserved").tuple_of(Node.text),
    )


def read_fixed(n: Node) -> FixedValue:
    n.exactly(MEMBERS["fixed"])
    return FixedValue(
        location=n.get("in").choice(ArgLocation),
        wire_name=n.get("name").text(),
        value=n.get("value").value,
        source=n.get("source").text(),
    )


def read_idempotency(n: Node) -> Idempotency | None:
    if n.value is None:
        return None
    n.exactly(MEMBERS["idempotency"])
    return Idempotency(
        arg=n.get("arg").text(),
        send_in=n.get("in").choice(IdempotencyIn),
        wire_name=n.get("name").opt_text(),
        honoured_by_api=n.get("honoured_by_api").flag(),
    )


def read_pagination(n: Node) -> Pagination | None:
    if n.value is None:
        return None
    n.exactly(MEMBERS["pagination"])
    largest = n.get("max_page_size").between(1, MAX_PAGE_SIZE)
    least = n.get("min_page_size").between(1, largest)
    return Pagination(
        style=n.get("style").choice(PaginationStyle),
        items_field=n.get("items").text(),
        cursor_param=n.get("cursor_param").opt_text(),
        limit_param=n.get("limit_param").opt_text(),
        next_field=n.get("next_field").opt_text(),
        has_more_field=n.get("has_more_field").opt_text(),
        cursor_from_item=n.get("cursor_from_item").opt_text(),
        default_page_size=n.get("default_page_size").between(least, largest),
        max_page_size=largest,
        min_page_size=least,
        first_position=n.get("first_position").opt_integer(),
        first_required=n.get("first_required").flag(),
        cursor_arg=n.get("cursor_arg").text(),
        page_size_arg=n.get("page_size_arg").text(),
    )


def read_retry(n: Node) -> Retry:
    n.exactly(MEMBERS["retry"])
    return Retry(
        max_attempts=n.get("max_attempts").between(1, MAX_ATTEMPTS),
        backoff_ms=n.get("backoff_ms").between(0, MAX_BACKOFF_MS),
        deadline_ms=n.get("deadline_ms").between(1, MAX_DEADLINE_MS),
        on=n.get("on").tuple_of(_read_retry_on),
    )


def _read_retry_on(n: Node) -> str:
    on = n.text()
    if on != "timeout" and not (len(on) == 3 and on.isascii() and on.isdigit()):
        raise n.fail(f"{on!r} is not a retry condition (timeout, or an HTTP status such as 503)")
    return on


def read_output(n: Node) -> OutputPolicy:
    n.exactly(MEMBERS["output"])
    return OutputPolicy(
        fields=n.get("fields").tuple_of(Node.text),
        max_bytes=n.get("max_bytes").at_least(1),
        redact=n.get("redact").tuple_of(Node.text),
        schema_mode=n.get("schema_mode").choice(SchemaMode),
        shape=n.get("shape").choice(Shape),
        body=n.get("body").choice(ResponseBody),
        accept=n.get("accept").opt_text(),
        redirect=None if n.get("redirect").value is None else n.get("redirect").choice(Redirect),
    )


def read_narrowed(n: Node) -> NarrowedArg:
    n.exactly(MEMBERS["narrowed"])
    schema = n.get("schema")
    _ = None if schema.value is None else schema.obj()
    return NarrowedArg(
        arg=n.get("arg").text(),
        schema=schema.value,
        description=n.get("description").opt_text(),
        hidden=n.get("hidden").flag(),
    )
