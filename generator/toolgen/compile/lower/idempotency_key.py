"""Where an operation takes an idempotency key: a header, a query parameter or a top-level member
of its request body.

Input: an operation of a `SpecDocument` and the build's `SchemaConverter`. Output: the `KeyPlace`
(``header``, ``query`` or ``body``, the wire name, its schema) or None. Shared by `toolgen init`
(which drafts ``idempotency.send_as`` to it), `toolgen lint` (``idempotency-key-unsent``: a key the
map does not send) and the include groups' inferred intents, so all three read an operation alike.

A place is taken when its name says idempotency or deduplication, in any spelling
(``Idempotency-Key``, ``X-Idempotency-Key``, ``idempotency_key``, ``idempotencyKey``,
``IdempotencyToken``, ``deduplicationId``: the name, lower-cased, without separators, contains
``idempoten`` or ``dedup``). A name of the request-id kind
(``client_request_id``, ``ClientToken``, ``request_id``, ``dedupe_key``: `_REQUEST_ID`) counts only
where the spec's own text (its description) says the value deduplicates or is an idempotency token
(`_SAYS_DEDUPLICATES`): many APIs take a ``request_id`` that only traces. A header or query
parameter wins over a body member (the IETF Idempotency-Key draft's place), a name that says
idempotency over one whose description does. A description that says the value is not an
idempotency key ("Not an idempotency key: a reference printed on the receipt", `_SAYS_NOT_A_KEY`)
makes it no place, whatever its name: the member carries data the model sets. The value must be a
string (a schema of another type is not a key the runtime can fill). `KeyPlace.honoured` is False where the description says the API
does not (yet) deduplicate by the key. Never raises: a broken ``$ref`` is no place (the build reports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ...diagnostics import DiagnosticError
from ...pointer import join_pointer
from ..load import SpecDocument
from ..operations import Operation
from ..schema import SchemaConverter, object_view
from .body import pick_request_media
from .parameters import operation_parameters

__all__ = ["KeyPlace", "idempotency_place", "key_constraints", "key_places"]

#: the name says idempotency or deduplication (lower case, letters and digits only): idempotency,
#: idempotent, deduplicationid (SQS's MessageDeduplicationId, Graph's deDuplicationId)
_SAYS_IDEMPOTENCY = re.compile(r"idempoten|dedup")
#: names that carry a key only where the description says so (lower case, letters and digits only)
_REQUEST_ID = re.compile(
    r"^(x)?(amzn?)?(client(request)?(token|id|key)|clientrequesttoken|request(id|token|key)|"
    r"dedup(e|lication)?(key|id|token)?|operationid|uniquerequestid)$"
)
#: the description says the API does not (yet, or no longer) deduplicate by the key it declares
_NOT_HONOURED = re.compile(
    r"idempotency (is ?n['o]t|is not|not) (currently |yet )?supported|"
    r"(is ?n['o]t|is not|not) (currently |yet )?(supported|honou?red|enforced)|"
    r"no longer (supported|honou?red|enforced)",
    re.IGNORECASE,
)
#: the description says the value is no idempotency key, whatever its name ("Not an idempotency key:
#: a reference printed on the receipt", "not used for deduplication")
_SAYS_NOT_A_KEY = re.compile(
    r"\bnot (an? |the |used (for|as) (an? )?)?(idempoten|de-?duplicat|dedup)", re.IGNORECASE
)
#: the description says the value makes a repeated request harmless
_SAYS_DEDUPLICATES = re.compile(
    r"idempoten|de-?duplicat|dedup|duplicate (request|submission|operation|charge|payment|call)s?|"
    r"(same|repeat(ed)?|retried) requests?.{0,60}(only once|not (be )?(processed|performed|executed) (twice|again))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KeyPlace:
    """Where an operation takes its idempotency key: `location` (``header``, ``query``, ``body``),
    the wire `name`, its `schema` (the parameter's or the member's, ``$ref``s resolved; may be
    empty), the JSON `pointer` of the parameter or body schema, and whether the spec `required` it."""

    location: Literal["header", "query", "body"]
    name: str
    schema: dict[str, Any]
    pointer: str
    required: bool
    #: False when the spec's own text says the API does not (yet) deduplicate by the key (AWS
    #: Billing Conductor: "Idempotency isn't currently supported"): sent, never re-sent on its word
    honoured: bool = True

    @property
    def send_as(self) -> str:
        """The intent map's ``idempotency.send_as``: ``header:NAME``, ``query:NAME``, ``body:NAME``."""
        return f"{self.location}:{self.name}"


def _flat(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _rank(name: str, schema: Any, description: Any) -> int | None:
    """0: the name says idempotency; 1: a request-id name whose description says it deduplicates;
    None: not a key (or not a string)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind is not None and "string" not in (kind if isinstance(kind, list) else [kind]):
        return None  # a nullable string (`[string, null]`) is a key; a number or an object is not
    texts = [
        t
        for t in (description, schema.get("description") if isinstance(schema, dict) else None)
        if isinstance(t, str)
    ]
    if any(_SAYS_NOT_A_KEY.search(t) for t in texts):
        return None  # the spec's own word: a member of that name that carries data, not a key
    flat = _flat(name)
    if _SAYS_IDEMPOTENCY.search(flat):
        return 0
    if _REQUEST_ID.match(flat) and any(_SAYS_DEDUPLICATES.search(t) for t in texts):
        return 1
    return None


def _honoured(description: Any, schema: Any) -> bool:
    """False when the parameter's or member's description says the key is not (yet) honoured."""
    texts = [description, schema.get("description") if isinstance(schema, dict) else None]
    return not any(isinstance(t, str) and _NOT_HONOURED.search(t) for t in texts)


def _parameter_places(
    doc: SpecDocument, converter: SchemaConverter, op: Operation
) -> list[tuple[int, KeyPlace]]:
    places: list[tuple[int, KeyPlace]] = []
    for param, ptr in operation_parameters(doc, converter, op):
        where = param.get("in")
        if where not in ("header", "query"):
            continue
        schema: Any = param.get("schema")
        if isinstance(schema, dict) and "$ref" in schema:
            schema, _ = converter.resolve(schema, join_pointer(ptr, "schema"))
        rank = _rank(
            str(param.get("name", "")), schema if isinstance(schema, dict) else {}, param.get("description")
        )
        if rank is not None:
            places.append(
                (
                    rank,
                    KeyPlace(
                        where,
                        str(param["name"]),
                        schema if isinstance(schema, dict) else {},
                        ptr,
                        bool(param.get("required")),
                        _honoured(param.get("description"), schema),
                    ),
                )
            )
    return places


def _body_places(converter: SchemaConverter, op: Operation) -> list[tuple[int, KeyPlace]]:
    raw = op.node.get("requestBody")
    if raw is None:
        return []
    body, body_ptr = converter.resolve(raw, join_pointer(op.pointer, "requestBody"))
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, dict) or not content:
        return []
    media, encoding, _ = pick_request_media(content)
    node = content[media]
    if encoding not in ("json", "form", "multipart") or not isinstance(node, dict) or "schema" not in node:
        return []
    schema_ptr = join_pointer(body_ptr, "content", media, "schema")
    schema = converter.convert(node["schema"], schema_ptr, "input", copy=False, check_nodes=False)
    view = object_view(schema)
    if view is None:
        return []
    props, required = view
    places: list[tuple[int, KeyPlace]] = []
    for name, member in props.items():
        rank = _rank(str(name), member if isinstance(member, dict) else {}, None)
        if rank is not None:
            places.append(
                (
                    rank,
                    KeyPlace(
                        "body",
                        str(name),
                        member if isinstance(member, dict) else {},
                        schema_ptr,
                        bool(body.get("required")) and name in required,
                        _honoured(None, member),
                    ),
                )
            )
    return places


_ORDER = {"header": 0, "query": 1, "body": 2}


def _ranked_places(
    doc: SpecDocument, converter: SchemaConverter, op: Operation
) -> list[tuple[int, KeyPlace]]:
    try:
        places = _parameter_places(doc, converter, op) + _body_places(converter, op)
    except DiagnosticError:
        return []
    return sorted(places, key=lambda rp: (rp[0], _ORDER[rp[1].location], rp[1].name))


def idempotency_place(doc: SpecDocument, converter: SchemaConverter, op: Operation) -> KeyPlace | None:
    """Where `op` takes its idempotency key (see the module docstring), or None."""
    places = _ranked_places(doc, converter, op)
    return places[0][1] if places else None


def key_places(doc: SpecDocument, converter: SchemaConverter, op: Operation) -> list[KeyPlace]:
    """Every place `op` takes an idempotency key in, the one `idempotency_place` picks first: an
    operation that declares a key header and a key member (or two spellings of one) has more than
    one, and the places the record does not fill must not be the model's to set."""
    return [place for _, place in _ranked_places(doc, converter, op)]


def key_constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """The API's own bounds on its key that the record's key argument takes over (``minLength`` and
    ``maxLength``, where they are non-negative integers): so the runtime refuses a key the API would
    refuse for its length, before anything is sent. A ``pattern`` is not taken over (a spec's regular
    expression may not be one the runtime's validator reads alike)."""
    out: dict[str, Any] = {}
    for word in ("minLength", "maxLength"):
        value = schema.get(word)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[word] = value
    return out
