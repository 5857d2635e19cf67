"""What every dialect shares: the result of a view transform (`DialectSchema`), the descriptor a
dialect module exports (`Dialect`), and the helpers that move keywords a dialect cannot carry into
the node's description as ``(keyword: value; ...)``.

Input: canonical schema nodes and the keywords a transform decided to move. Output: description
text, reviewer notes, and nodes with OpenAPI's ``nullable`` turned into a JSON Schema null type.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..compile.ir import Tool
from ..search.dense_index import DenseModel
from ._check import Violation
from ._limits import Limit
from ._walk import DEFS_KEYS, types_of

JSON = Any

#: Keywords dropped without a note: identifiers, comments, OpenAPI-only decorations.
SILENT_DROP: frozenset[str] = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "discriminator",
        "xml",
        "externalDocs",
    }
)
#: Keywords that annotate a `$ref` and may be overridden by the referrer when inlining.
ANNOTATIONS: frozenset[str] = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "example",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)
#: Fixed order in which moved keywords are summarised (others follow alphabetically).
_NOTE_ORDER: tuple[str, ...] = (
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
)
_RAW_STRING_NOTES: frozenset[str] = frozenset({"format", "pattern", "contentMediaType", "contentEncoding"})
_NOTE_VALUE_MAX = 160


@dataclass(frozen=True)
class DialectSchema:
    """One dialect's view of a canonical schema.

    `schema`: the transformed schema. `notes`: what moved into descriptions, as
    ``"<property path>: <keyword> <value>"`` (e.g. ``"title: maxLength 200"``). `strict`: whether the
    tool can be marked strict in this dialect (always False for MCP, which has no such flag).
    `warnings`: why strict is off, or other problems (each names a JSON pointer of the canonical schema).
    `rewrites`: how the view reshaped arguments (`rewrite`), so the runtime can turn what a model sent
    in this dialect back into canonical arguments.

    `schema` is read-only: the light views (MCP, Anthropic, Gemini's ``parametersJsonSchema``, loose
    OpenAI) are copy on write and share every subtree they leave unchanged with the canonical schema
    (the IR's), so mutating one in place would change the IR and every other view; build a new
    container instead (``{**schema, key: value}``).
    """

    schema: dict[str, JSON]
    notes: tuple[str, ...]
    strict: bool
    warnings: tuple[str, ...]
    rewrites: tuple[dict[str, JSON], ...] = ()


#: Path steps of a rewrite record that are not property names: every array item, every value of a
#: map, branch i of an ``anyOf``. A property name that starts with one of ``[{|~`` is written with a
#: leading ``~`` (the runtime reads it back the same way, `toolgen.runtime.call.dialect_args`).
ITEMS_STEP = "[]"
MAP_VALUES_STEP = "{}"


def prop_step(name: str) -> str:
    """The path step of property `name`."""
    return "~" + name if name[:1] in ("[", "{", "|", "~") else name


def branch_step(index: int) -> str:
    return f"|{index}"


def rewrite(path: tuple[str, ...], kind: str, reason: str, **extra: JSON) -> dict[str, JSON]:
    """One rewrite record: the argument `path` (steps, see `prop_step`) in the canonical arguments,
    the `kind` (``json_string``, ``map_entries``, ``enum_strings``, ``rename``, ``ref``) and why."""
    return {"path": list(path), "kind": kind, "reason": reason, **extra}


GeminiParameters = Literal["schema", "json_schema"]


@dataclass(frozen=True)
class RegistryListing:
    """toolgen.yaml ``registry:`` of one API: what its ``server.json`` for the MCP registry says
    (`toolgen.emit.server_json`). `name`: the reverse-DNS server name (``io.github.acme/tickets``; the
    registry checks that the publisher owns its namespace); `version`: default the spec's
    ``info.version``; `description`: at most 100 characters (default: counts the tools); `url`: where
    ``toolgen serve --http`` answers (a ``streamable-http`` remote; none: no remote); `repository`,
    `website`: URLs of the source and of the documentation."""

    name: str
    version: str | None = None
    description: str | None = None
    url: str | None = None
    repository: str | None = None
    website: str | None = None


@dataclass(frozen=True)
class DialectOptions:
    """A project's choices of how catalogs are shaped (toolgen.yaml ``dialects:``).

    `gemini_parameters`: ``schema`` (default) sends Gemini declarations with ``parameters`` in the
    conservative OpenAPI-3.0 subset (C.2, F.3; arguments reshaped where the subset cannot say them);
    ``json_schema`` sends ``parametersJsonSchema`` (C.3: JSON Schema, no reshaped arguments, so the
    runtime receives canonical values).

    `anthropic_input_examples`: whether Anthropic tools carry ``input_examples`` (B.1; default yes; the
    examples are each tool's `Tool.input_examples`).

    `anthropic_search_limit`: tools per Anthropic request with tool search, the search tool included
    (F.2: 10,000; lowered by tests, or by a host that adds tools of its own, through `build_api`'s
    `dialect_options`); a deferred catalog over it is written as parts (`toolgen.dialects._parts`).
    `responses_limit`: top-level entries of one OpenAI Responses request (A.1 / F.1: 128, a
    namespace counting as one); a Responses catalog over it is written as parts of whole namespaces.

    `semantic_search`: toolgen.yaml ``search.semantic``, what ``search.json`` holds besides the lexical
    documents: None (default) nothing; ``"lsa"`` the vectors of `toolgen.search.vector_index` (format 3).
    It rides here so that the build cache's key and every build path carry it with the other
    project choices, as does `registry` (toolgen.yaml ``registry:`` of the API: None writes no
    ``server.json``). `dense`: the pinned model of ``search: {semantic: onnx}``
    (`toolgen.search.dense_index.DenseModel`; its hashes key the cache).
    """

    gemini_parameters: GeminiParameters = "schema"
    anthropic_input_examples: bool = True
    anthropic_search_limit: int = 10_000
    responses_limit: int = 128
    semantic_search: str | None = None
    registry: RegistryListing | None = None
    dense: DenseModel | None = None


@dataclass(frozen=True)
class Dialect:
    """One provider dialect as the rest of toolgen sees it. A module of `toolgen.dialects` that
    defines ``DIALECT = Dialect(...)`` is a dialect: `toolgen.dialects.registry()` finds it, the build
    emits its catalog and checks it on every build.

    `name` keys the catalog (``<name>.json``); `rank` orders the dialects (catalogs, reports);
    `catalog_entry(tool)` is the tool object, the warnings and the argument rewrites of the view
    transform; `tool_name(entry)`
    reads a tool object's name back; `check(tools, max_tools)` re-checks a whole catalog against the
    provider's rules; `max_tools` is the provider's cap on tools per request (None: none);
    `limits` its per-request limits table (`toolgen.dialects.limits`); `select(tools, entries, facts)`,
    if set, makes per-request choices over the whole catalog (e.g. which tools are strict within a
    budget) and returns the new entries and a ``(tool, decision)`` line per tool; `facts` is None or
    ``select_facts(entry)`` of each entry (what the choice reads of one entry alone, a pure function of
    it, so a caller may remember it per entry; None: `select` computes them). `configure(options)`,
    if set, returns the dialect as a project's `DialectOptions` shape it (e.g. Gemini's
    ``parametersJsonSchema``); without it the options do not concern this dialect.

    What it emits: `file` (``<name>.json``, its catalog) and `extra_files` (other files its view
    may write, e.g. ``openai.responses.json``); `reshapes_arguments` says whether its view may
    reshape arguments (``dialect_rewrites`` in policy.json, undone by the runtime). `title` is the
    provider's name in reports and help. `checks_per_tool` says that `check` (with no `max_tools`)
    finds nothing exactly when it finds nothing in each tool alone and no name is used twice (no
    other rule spans tools): the build cache then remembers each tool's verdict
    (`toolgen.builder.incremental.conformance_problems`). A dialect with rules that span tools says so with
    `check_across(tools)` (those rules alone, names aside) and `check_tool(tool)` (one tool's own
    rules; None: `check` of the tool alone): `check` then finds nothing exactly when each tool's
    `check_tool` finds nothing, no name is used twice and `check_across` finds nothing.
    """

    name: str
    rank: int
    catalog_entry: Callable[[Tool], tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]]
    tool_name: Callable[[dict[str, JSON]], str]
    check: Callable[[list[dict[str, JSON]], int | None], list[Violation]]
    max_tools: int | None = None
    limits: tuple[Limit, ...] = ()
    select: (
        Callable[
            [list[Tool], list[dict[str, JSON]], list[Any] | None],
            tuple[list[dict[str, JSON]], list[tuple[str, str]]],
        ]
        | None
    ) = None
    select_facts: Callable[[dict[str, JSON]], Any] | None = None
    configure: Callable[[DialectOptions], Dialect] | None = None
    title: str = ""
    extra_files: tuple[str, ...] = ()
    reshapes_arguments: bool = False
    checks_per_tool: bool = False
    check_tool: Callable[[dict[str, JSON]], list[Violation]] | None = None
    check_across: Callable[[list[dict[str, JSON]]], list[Violation]] | None = None

    @property
    def file(self) -> str:
        """The catalog's file name in a generated folder: ``<name>.json``."""
        return f"{self.name}.json"

    @property
    def files(self) -> tuple[str, ...]:
        """Every file this dialect may write into a generated folder: its catalog, then `extra_files`."""
        return (self.file, *self.extra_files)


def allows_code_callers(tool: Tool) -> bool:
    """Whether model-written code may call `tool` (Anthropic ``allowed_callers`` with code execution, OpenAI
    Responses ``allowed_callers: ["direct", "programmatic"]``): only a read or preview tool without approval
    whose intent asks for it (`Tool.programmatic`); never a record tool (it writes) nor an approval-gated
    one, whatever the IR says."""
    return tool.programmatic and tool.policy.mode in ("read", "preview") and tool.policy.approval == "never"


def render_note_value(key: str, value: JSON) -> str:
    if key in _RAW_STRING_NOTES and isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if len(text) > _NOTE_VALUE_MAX:
        text = text[: _NOTE_VALUE_MAX - 1] + "\u2026"
    return text


def order_moved(moved: list[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    rank = {k: i for i, k in enumerate(_NOTE_ORDER)}
    return sorted(moved, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def describe(description: JSON, moved: list[tuple[str, JSON]]) -> str | None:
    """`description` + ``" (k: v; k2: v2)"`` for the moved keywords (A.4, E point 3)."""
    base = description if isinstance(description, str) else None
    if not moved:
        return base
    suffix = "(" + "; ".join(f"{k}: {render_note_value(k, v)}" for k, v in order_moved(moved)) + ")"
    return f"{base.rstrip()} {suffix}" if base else suffix


def label_child(label: str, key: str, name: str | int | None = None) -> str:
    """Human path of a subschema for notes: ``options.timeoutMs``, ``tags[]``, ``urls|1``."""
    if key == "properties":
        return f"{label}.{name}" if label else str(name)
    if key == "items":
        return f"{label or '(root)'}[]"
    if key in ("anyOf", "oneOf", "allOf"):
        return f"{label or '(root)'}|{name}"
    if key in DEFS_KEYS:
        return f"$defs.{name}"
    if key == "additionalProperties":
        return f"{label}.*" if label else "*"
    return f"{label or '(root)'}.{key}" + (f".{name}" if name is not None else "")


def apply_nullable(schema: dict[str, JSON]) -> dict[str, JSON]:
    """OpenAPI 3.0 ``nullable: true`` -> a JSON Schema null type (case 08; never left in any dialect)."""
    if "nullable" not in schema:
        return schema
    s = dict(schema)
    flag = s.pop("nullable")
    if flag is not True:
        return s
    types = types_of(s)
    if types is not None:
        if "null" not in types:
            s["type"] = [*types, "null"]
        if isinstance(s.get("enum"), list) and None not in s["enum"]:
            s["enum"] = [*s["enum"], None]
        return s
    if isinstance(s.get("enum"), list):
        if None not in s["enum"]:
            s["enum"] = [*s["enum"], None]
        return s
    if any(k in s for k in ("$ref", "anyOf", "oneOf", "allOf")):
        return or_null(s)
    return s


def or_null(schema: dict[str, JSON]) -> dict[str, JSON]:
    """``{"anyOf": [schema, {"type": "null"}]}``, with `schema`'s description moved to the wrapper
    (where a model reads it). `schema` is a fresh copy the caller owns: its description is popped."""
    desc = schema.pop("description", None)
    wrapped: dict[str, JSON] = {}
    if desc is not None:
        wrapped["description"] = desc
    wrapped["anyOf"] = [schema, {"type": "null"}]
    return wrapped


def copy_json(value: JSON) -> JSON:
    """Deep copy of a JSON value (scalars are returned as they are)."""
    kind = type(value)
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if kind is list:
        return [copy_json(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)
