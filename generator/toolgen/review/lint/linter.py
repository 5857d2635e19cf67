"""Stage `lint`: IR + intent map + spec -> findings (`Diagnostic`s with a rule code of `rules`).

Input: `LintInput`: the `SpecDocument`, the `LoadedIntentMap`, the `ApiIR` that `lower` built from
them, the diagnostics the build itself reported and the `LintSettings`. Output: a list of
`Diagnostic`s, one per finding, located in the intent map (``file:line:col``) or, for what only the
spec knows, at the spec's JSON pointer; severities are the rules' defaults.

The build's diagnostics are lint findings too (`operation-not-found`, `tool-name-invalid`, ...):
lint reuses them rather than checking the same thing twice. `lint_api` is pure (no IO): the build
runs it for REPORT.md, `toolgen lint` through `toolgen.review.lint.targets`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from ...codes.table import DESCRIPTION_LIMIT
from ...compile.intent import LoadedIntentMap, ToolIntent
from ...compile.ir import ApiIR, Tool
from ...compile.load import SpecDocument
from ...compile.lower import operation_parameters, operation_response
from ...compile.lower.idempotency_key import KeyPlace, idempotency_place
from ...compile.lower.reuse import OperationKeys
from ...compile.operations import (
    Operation,
    OperationIndex,
    declared_oauth_scopes,
    find_operation,
    list_operations,
    operation_matches,
    operation_requirements,
    used_scopes,
)
from ...compile.pagination import find_items_field, paging_signals
from ...compile.schema import SchemaBudget, SchemaConverter
from ...compile.verbs import changes_named
from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation
from ...dialects import DialectOptions, catalog_request_problems, registry
from ...dialects.openai import openai_parameters
from ...emit import compact_json, piece_key
from ...emit.build_report import ToolSize, measure
from ...emit.dialect_catalogs import Catalogs, build_catalogs
from ...naming import has_word
from ...pointer import PointerError, ref_to_pointer, resolve_pointer
from ...remember import Remember, computed
from ...tokens import count_tokens
from .examples import example_findings
from .preflight import ALL_DIALECTS, preflight_findings
from .rules import (
    CATALOG_REQUEST_LIMITS,
    CATALOG_TOO_MANY_TOKENS,
    CATALOG_TOO_MANY_TOOLS,
    DESCRIPTION_MISSING,
    DESCRIPTION_NO_WHEN_NOT,
    DESCRIPTION_TOO_LONG,
    DESTRUCTIVE_WITHOUT_APPROVAL,
    EFFECT_CONTRADICTS_METHOD,
    EFFECT_DELETE_NOT_DESTRUCTIVE,
    EFFECT_READ_NAMES_CHANGE,
    EFFECT_WRITE_ON_SAFE_METHOD,
    IDEMPOTENCY_HEADER_UNUSED,
    IDEMPOTENCY_HONOUR_UNDECLARED,
    IDEMPOTENCY_KEY_MISSING,
    IDEMPOTENCY_KEY_UNSENT,
    OPERATION_MAPPED_TWICE,
    OPERATIONS_UNCOVERED,
    OUTPUT_UNPROJECTED_LARGE,
    PAGINATION_MISSING,
    PERMISSION_MISSING,
    PREVIEW_ADDS_NOTHING,
    SCOPE_UNKNOWN,
    STRICT_DISABLED,
    SYNONYM_VERBS,
    TOOL_NAME_DUPLICATE,
    TOOL_NAME_NEAR_SYNONYM,
    TOOL_TOO_LARGE,
    TOOLSET_NEAR_SYNONYM,
    LintSettings,
    Rule,
)
from .shared_credentials import shared_credentials
from .toolset_rules import Member, near_synonyms

T = TypeVar("T")


@dataclass
class LintInput:
    """Everything `lint_api` reads. `build_diagnostics` are the diagnostics of load + lower."""

    doc: SpecDocument
    intents: LoadedIntentMap
    ir: ApiIR
    build_diagnostics: list[Diagnostic]
    settings: LintSettings = field(default_factory=LintSettings)
    #: the build's catalogs and their per-tool sizes, when it has them already (built and tokenised
    #: once per build); the linter builds and measures them itself otherwise
    catalogs: Catalogs | None = None
    sizes: list[ToolSize] | None = None
    #: the dialects the build emits (the provider limits of the others do not apply)
    dialects: tuple[str, ...] = ALL_DIALECTS
    #: the project's dialect choices (toolgen.yaml ``dialects:``: shapes and the tool-search limit)
    options: DialectOptions = field(default_factory=DialectOptions)
    #: what each operation's response, parameters and words tell the rules, remembered between builds
    #: (`toolgen.builder.incremental.BuildPieces`) under the operation's `OperationKeys.reads` (its part of
    #: the document) and `OperationKeys.base` (without `keys`, computed), and each toolset's
    #: near-synonym pairs by its members' keys, tools and descriptions
    remember: Remember = computed
    keys: OperationKeys | None = None
    #: `preflight_findings` of this IR, intent map, settings, dialects and options, when the build
    #: computed them already (before it built the catalogs); the linter computes them otherwise
    preflight: list[Diagnostic] | None = None


@dataclass
class _IntentView:
    """The tools of one intent (explicit, or one operation of an include group)."""

    key: str
    explicit: bool
    intent: ToolIntent | None
    group: int | None
    op: Operation
    main: Tool  # the read tool, or the record tool of a write
    preview: Tool | None


class _Linter:
    def __init__(self, data: LintInput):
        self.data = data
        self.doc = data.doc
        self.intents = data.intents
        self.model = data.intents.model
        self.ir = data.ir
        self.settings = data.settings
        self.sink = DiagnosticSink()
        self.operations = list_operations(self.doc)
        self.op_by_pointer = {op.pointer: op for op in self.operations}
        self.op_index = OperationIndex(self.operations)
        budget = SchemaBudget(max_nodes=self.model.budgets.max_schema_nodes,
                              max_depth=self.model.budgets.max_schema_depth)
        self.converter = SchemaConverter(self.doc, DiagnosticSink(), budget)
        self._params = operation_parameters
        self._response = operation_response
        self._param_cache: dict[str, list[dict[str, Any]]] = {}
        self._response_cache: dict[str, tuple[Any, bool] | None] = {}
        self._refs_cache: dict[str, tuple[list[str], str | None]] = {}
        self._size_cache: dict[tuple[str, tuple[str, ...], int], tuple[int, int]] = {}
        self._closures: dict[str, tuple[str, ...]] = {}  # a response schema's compact JSON -> its $ref closure
        self.views = list(self._views())
        self._catalogs: Catalogs | None = data.catalogs

    # --- helpers ----------------------------------------------------------------------------

    def _views(self) -> Iterator[_IntentView]:
        by_intent: dict[str, list[Tool]] = {}
        for tool in self.ir.tools:
            by_intent.setdefault(tool.policy.intent or tool.name, []).append(tool)
        for key, tools in by_intent.items():
            main = next((t for t in tools if t.policy.mode in ("read", "record")), tools[0])
            preview = next((t for t in tools if t.policy.mode == "preview"), None)
            op = self.op_by_pointer.get(main.source_pointer)
            if op is None:
                continue
            intent = self.model.tools.get(key)
            explicit = intent is not None and self._same_op(intent, op)
            group = None if explicit else self._group_of(op)
            yield _IntentView(key, explicit, intent if explicit else None, group, op, main, preview)

    def _same_op(self, intent: ToolIntent, op: Operation) -> bool:
        found = find_operation(self.op_index, intent.operation)
        return found is not None and found.pointer == op.pointer

    def _group_of(self, op: Operation) -> int | None:
        for i, group in enumerate(self.model.include):
            if operation_matches(op, group.match) and not any(operation_matches(op, p) for p in group.exclude):
                return i
        return None

    def where(self, view: _IntentView, *keys: str) -> SourceLocation:
        """The intent's key (or its first present sub-key), else its include group, else the spec."""
        if view.explicit:
            node = self.intents.root.get("tools", {}).get(view.key) if self.intents.root is not None else None
            for k in keys:
                if isinstance(node, dict) and k in node:
                    return self.intents.locate("tools", view.key, k)
            return self.intents.locate("tools", view.key)
        if view.group is not None:
            node = self.intents.root.get("include", [])[view.group] if self.intents.root is not None else None
            for k in keys:
                if isinstance(node, dict) and k in node:
                    return self.intents.locate("include", view.group, k)
            return self.intents.locate("include", view.group)
        return self.doc.locate(view.op.pointer)

    def catalogs(self) -> Catalogs:
        """The build's catalogs, or (for `toolgen lint` on its own) catalogs built once per lint run."""
        if self._catalogs is None:
            self._catalogs = build_catalogs(self.ir, options=self.data.options)
        return self._catalogs

    def params(self, op: Operation) -> list[dict[str, Any]]:
        if op.pointer not in self._param_cache:
            try:
                self._param_cache[op.pointer] = [p for p, _ in self._params(self.doc, self.converter, op)]
            except DiagnosticError:
                self._param_cache[op.pointer] = []
        return self._param_cache[op.pointer]

    def response(self, op: Operation) -> tuple[Any, bool] | None:
        if op.pointer not in self._response_cache:
            try:
                # read only: the schemas share the converter's memo instead of one copy per operation
                self._response_cache[op.pointer] = self._response(self.doc, self.converter, op, copy=False)
            except DiagnosticError:
                self._response_cache[op.pointer] = None
        return self._response_cache[op.pointer]

    def add(self, rule: Rule, message: str, location: SourceLocation | None, hint: str | None = None,
            tool: str | None = None) -> None:
        self.sink.add(Diagnostic(rule.id, rule.severity, message, location, hint or rule.help, tool))

    # --- rules ------------------------------------------------------------------------------

    def run(self) -> list[Diagnostic]:
        # known before any catalog is built; a hard provider limit means no catalog is worth building
        preflight = self.data.preflight
        if preflight is None:
            preflight = preflight_findings(self.ir, self.intents, self.settings, self.data.dialects,
                                           self.data.options)
        self.sink.extend(preflight)
        blocked = any(d.severity == "error" for d in preflight)
        for check in (self.check_mapping, self.check_effects, self.check_policy, self.check_scopes,
                      self.check_pagination, self.check_outputs, self.check_descriptions):
            check()
        self.sink.extend(shared_credentials([v.main.policy for v in self.views], self.intents, self.doc))
        if not blocked:
            self.check_catalog()
            self.check_tool_sizes()
        self.check_coverage()
        if not blocked:
            self.check_toolsets()
            self.check_strict()
            self.check_examples()
        return self.sink.items

    def check_examples(self) -> None:
        """`examples-duplicate`, `examples-length`, `example-ranks-other` (`toolgen.review.lint.examples`)."""
        if not self.model.examples and not any(
                s.examples for group in (self.model.tools, self.model.composites, self.model.toolsets)
                for s in group.values()):
            return
        mcp = self.catalogs().tools.get("mcp") or []
        for rule, message, where, tool in example_findings(self.model, self.ir, mcp, self.intents.locate,
                                                           self.op_index):
            self.add(rule, message, where, tool=tool)

    def check_tool_sizes(self) -> None:
        """`tool-too-large`: a tool over `lint.max_tool_tokens` o200k tokens in some dialect, located at
        its intent (or include group), with a drafted remedy: the optional body members to hide, largest
        first, until the rest fits."""
        budget = self.settings.max_tool_tokens
        over: dict[str, tuple[str, int]] = {}  # tool -> (dialect, tokens) of its largest view
        if self.data.sizes is not None:
            for size in self.data.sizes:
                dialect, tokens = max(size.tokens.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
                if tokens > budget:
                    over[size.tool] = (dialect, tokens)
        else:  # a tool whose compact JSON is shorter than the budget cannot exceed it (a token is >= 1 char)
            for dialect, tools in self.catalogs().by_dialect().items():
                name_of = registry()[dialect].tool_name
                for entry in tools:
                    text = compact_json(entry)
                    if len(text) > budget:
                        tokens = count_tokens(text)
                        name = name_of(entry)
                        if tokens > budget and tokens > over.get(name, ("", 0))[1]:
                            over[name] = (dialect, tokens)
        if not over:
            return
        views = {t.name: v for v in self.views for t in (v.main, v.preview) if t is not None}
        by_name = {t.name: t for t in self.ir.tools}
        for name in sorted(over):
            dialect, tokens = over[name]
            tool = by_name.get(name)
            view = views.get(name)
            where = self.where(view, "hide", "args") if view is not None else self.intents.locate()
            hint = _hide_remedy(tool, tokens, budget) if tool is not None else None
            self.add(TOOL_TOO_LARGE, f"tool `{name}` is {tokens:,} o200k tokens in {dialect} "
                     f"(lint.max_tool_tokens {budget:,})", where, hint, tool=name)

    def check_strict(self) -> None:
        """`strict-disabled`: an intent that sets `strict: false`, located at that key; the hint says
        whether OpenAI strict mode could carry its tools (then: remove it)."""
        for view in self.views:
            if view.intent is None or view.intent.strict:
                continue
            tools = [t for t in (view.preview, view.main) if t is not None]
            names = ", ".join(f"`{t.name}`" for t in tools)
            could = [t.name for t in tools if openai_parameters(t.input_schema).strict]
            hint = (f"remove `strict: false`: OpenAI strict mode can carry {', '.join(f'`{n}`' for n in could)} "
                    "(arguments it cannot express are reshaped and undone by the runtime)" if could else
                    "nothing to do: no dialect can send these tools strict")
            self.add(STRICT_DISABLED, f"intent `{view.key}` sets `strict: false`: {names} "
                     f"{'is' if len(tools) == 1 else 'are'} sent non-strict", self.where(view, "strict"), hint,
                     tool=view.main.name)

    def check_mapping(self) -> None:
        seen: dict[str, str] = {}
        for key, intent in self.model.tools.items():
            op = find_operation(self.op_index, intent.operation)
            if op is None:
                continue
            other = seen.get(op.pointer)
            if other is not None:
                first = self.model.tools[other]
                if (first.fixed, first.hide, first.output, first.args) == (intent.fixed, intent.hide, intent.output,
                                                                           intent.args):
                    self.add(OPERATION_MAPPED_TWICE,
                             f"intent `{key}` maps {op.key}, which intent `{other}` already maps, with the same "
                             "fixed values, hidden and narrowed arguments and output", self.intents.locate("tools", key, "operation"),
                             tool=key)
            else:
                seen[op.pointer] = key
        names: dict[str, Tool] = {}
        for tool in self.ir.tools:
            if tool.name in names:
                key = tool.policy.intent
                loc = (self.intents.locate("tools", key) if key in self.model.tools else
                       self.doc.locate(tool.source_pointer))
                self.add(TOOL_NAME_DUPLICATE, f"tool name `{tool.name}` is produced twice (intents "
                         f"`{names[tool.name].policy.intent}` and `{key}`)", loc, tool=tool.name)
            else:
                names[tool.name] = tool

    def check_effects(self) -> None:
        """The effect against the method and against what the operation's words say it does
        (`toolgen.compile.verbs.changes_named`): a read that names a change is flagged whatever the
        method; a write on GET is confirmed by its words, else flagged."""
        for view in self.views:
            method, effect = view.op.method, view.main.policy.effect
            loc = self.where(view, "effect")
            changes = self._remembered(view.op, "changes-named", partial(changes_named, view.op))
            if effect == "read" and method in ("DELETE", "PUT", "PATCH"):
                self.add(EFFECT_CONTRADICTS_METHOD, f"`{view.key}` is marked read but {view.op.key} is a {method}",
                         loc, tool=view.main.name)
            elif effect == "read" and changes:
                strongest = "destructive" if any(e.effect == "destructive" for e in changes) else "write"
                self.add(EFFECT_READ_NAMES_CHANGE, f"`{view.key}` is marked read, but {view.op.key}: "
                         f"{'; '.join(e.says() for e in changes[:2])}",
                         loc, f"if it changes something, set `effect: {strongest}` and `approval: required` (a read "
                         "is never previewed or approved, and its MCP tool says readOnlyHint); if it only reads, set "
                         "`effect-read-names-change` to `off` in toolgen.yaml `lint.severity`", tool=view.main.name)
            elif effect != "read" and method in ("GET", "HEAD", "OPTIONS") and not changes:
                self.add(EFFECT_WRITE_ON_SAFE_METHOD, f"`{view.key}` is marked {effect} but {view.op.key} is a "
                         f"{method}; confirm that this API mutates on {method}", loc, tool=view.main.name)
            elif effect == "write" and method == "DELETE":
                self.add(EFFECT_DELETE_NOT_DESTRUCTIVE, f"`{view.key}` is marked write but {view.op.key} deletes",
                         loc, tool=view.main.name)

    def _idempotency_place(self, op: Operation) -> KeyPlace | None:
        return idempotency_place(self.doc, self.converter, op)

    def _check_key_sent(self, view: Any, row: Any) -> None:
        """``idempotency-header-unused`` / ``idempotency-key-unsent``: the operation takes an
        idempotency key (`idempotency_place`) that the record does not send there."""
        place = self._idempotency_place(view.op)
        idem = row.idempotency
        if place is None:
            if idem is None:
                self.add(IDEMPOTENCY_KEY_MISSING, f"`{row.tool}` ({row.effect}) has no idempotency key",
                         self.where(view), tool=row.tool)
            return
        sent = idem is not None and idem.send_in == place.location and (
            (idem.wire_name or "").lower() == place.name.lower() if place.location == "header"
            else idem.wire_name == place.name)
        if sent:
            return
        if place.location == "header":
            self.add(IDEMPOTENCY_HEADER_UNUSED, f"{view.op.key} declares the `{place.name}` header but "
                     f"`{row.tool}` does not send its idempotency key there", self.where(view, "idempotency"),
                     f"set `idempotency: {{key: action_id, send_as: \"header:{place.name}\"}}`", tool=row.tool)
            return
        what = "query parameter" if place.location == "query" else "request-body member"
        self.add(IDEMPOTENCY_KEY_UNSENT, f"{view.op.key} takes an idempotency key as the {what} `{place.name}` "
                 f"(#{place.pointer}) but `{row.tool}` does not send its key there"
                 + (" (`send_as: none`)" if idem is not None and idem.send_in == "none" else ""),
                 self.where(view, "idempotency"),
                 f"set `idempotency: {{key: action_id, send_as: \"{place.send_as}\", honoured_by_api: true}}`: the "
                 "runtime fills it from the record's key and hides it from the model", tool=row.tool)

    def check_policy(self) -> None:
        for view in self.views:
            row = view.main.policy
            if not row.permission:
                self.add(PERMISSION_MISSING, f"`{view.main.name}` requires no permission", self.where(view),
                         tool=view.main.name)
            if row.mode != "record":
                continue
            if (row.effect == "write" and row.approval != "required" and view.preview is not None
                    and row.record_arguments != "preview"):
                self.add(PREVIEW_ADDS_NOTHING, f"`{view.preview.name}` previews a write that needs no approval "
                         f"and `{row.tool}` takes the full arguments: the preview gates nothing",
                         self.where(view, "approval", "effect"), "set `preview: false` to drop "
                         f"`{view.preview.name}`, or `approval: required` if a human should see the request first",
                         tool=view.preview.name)
            if row.effect == "destructive" and row.approval != "required":
                self.add(DESTRUCTIVE_WITHOUT_APPROVAL, f"`{row.tool}` is destructive ({view.op.key}) but needs "
                         "no approval", self.where(view, "approval", "effect"), tool=row.tool)
            self._check_key_sent(view, row)
            idem = row.idempotency
            if idem is not None and idem.send_in != "none" and idem.honoured_by_api is None:
                self.add(IDEMPOTENCY_HONOUR_UNDECLARED, f"`{row.tool}` sends its idempotency key to the API as "
                         f"{idem.send_in} `{idem.wire_name}` but does not say whether the API deduplicates by it",
                         self.where(view, "idempotency"), tool=row.tool)

    def spec_scopes(self) -> tuple[dict[str, set[str]], set[str]]:
        return declared_oauth_scopes(self.doc), used_scopes(self.doc, self.operations)

    def check_scopes(self) -> None:
        declared, used = self.spec_scopes()
        if not any(declared.values()):
            return  # the spec declares no OAuth scopes: permissions are the API's own names
        known = set().union(*declared.values()) | used
        for view in self.views:
            reqs = operation_requirements(self.doc, view.op)
            if not any(name in declared and declared[name] for r in reqs for name in r):
                continue  # the operation is not protected by an OAuth scheme with scopes
            if not any(name in declared and isinstance(scopes, list) and scopes for r in reqs
                       for name, scopes in r.items()):
                continue  # the spec asks for no scope here: the permission is the map's own name
            for scope in view.main.policy.permission:
                if scope not in known:
                    close = difflib.get_close_matches(scope, sorted(known), n=1)
                    self.add(SCOPE_UNKNOWN, f"`{view.main.name}` requires scope {scope!r}, which the spec's OAuth "
                             "schemes do not declare", self.where(view, "permission"),
                             f"did you mean {close[0]!r}?" if close else None, tool=view.main.name)

    def _remembered(self, op: Operation, what: str, compute: Callable[[], T]) -> T:
        """`compute()`, a pure function of `op`'s part of the document (its response and parameters)
        and of `what`, through `LintInput.remember` when the operation's reads can be known."""
        keys = self.data.keys
        reads = keys.reads(op) if keys is not None else None
        if keys is None or reads is None:
            return compute()
        found: T = self.data.remember(piece_key("lint-operation 1", keys.base, reads, what), compute)
        return found

    def _paging_facts(self, op: Operation) -> tuple[bool, list[str], bool]:
        """What `check_pagination` reads of `op`: whether its response is an array, what it carries
        that looks like paging (`paging_signals`: parameters, answer fields, a Link header), whether
        its response has an item array."""
        response = self.response(op)
        schema, link = response if response is not None else (None, False)
        is_array = isinstance(schema, dict) and (schema.get("type") == "array" or (
            isinstance(schema.get("type"), list) and "array" in schema["type"]))
        query = [str(p.get("name")) for p in self.params(op) if p.get("in") == "query"]
        return is_array, paging_signals(query, schema, bool(link)), find_items_field(schema) is not None

    def check_pagination(self) -> None:
        for view in self.views:
            row = view.main.policy
            if row.mode != "read" or row.pagination is not None:
                continue
            is_array, signals, has_items = self._remembered(view.op, "paging 2", partial(self._paging_facts, view.op))
            bounded = bool(view.intent and view.intent.output and view.intent.output.max_bytes)
            if is_array and not signals and bounded:
                continue  # nothing to page with; the intent bounds the list explicitly
            if is_array or (signals and has_items):
                why = "returns an array" if is_array else "has an item array"
                also = f"; it {'; '.join(signals)}" if signals else ""
                self.add(PAGINATION_MISSING, f"`{row.tool}` lists ({view.op.key} {why}{also}) but has no "
                         "pagination", self.where(view),
                         "declare `pagination:` with the style these name (cursor, link, page or offset; docs/"
                         "review.md, 'Pagination styles')" if signals else
                         "the operation declares no paging parameter, answer field or Link header: set "
                         "`output.max_bytes` (and `output.fields`) to bound the list, or turn this rule off for it",
                         tool=row.tool)

    def check_outputs(self) -> None:
        budget = self.settings.large_output_tokens
        for view in self.views:
            row = view.main.policy
            if row.output.fields:
                continue
            measured = self._remembered(view.op, f"response-size {budget}",
                                        partial(self.response_size, view.op, budget))
            if measured is None:
                continue
            length, tokens = measured
            if tokens <= budget:
                continue
            more = "" if length <= budget * 16 else "more than "
            self.add(OUTPUT_UNPROJECTED_LARGE, f"`{row.tool}` returns the whole response of {view.op.key} "
                     f"({more}{tokens:,} tokens of schema; budget {budget:,}) without `output.fields`",
                     self.where(view, "output"), tool=row.tool)

    def response_size(self, op: Operation, budget: int) -> tuple[int, int] | None:
        """(characters, tokens) of the success response's schema as the spec writes it, with every
        schema it references (transitively, each once), as compact JSON joined by commas: the
        measure of "how large is this output"; None without a response schema. Tokens are counted on
        the first ``16 * budget`` characters only, and only when the text is longer than `budget`
        characters (a token is at least one character; 0 is returned then).

        Measured on the spec rather than the converted schema so that a 450-operation spec whose
        responses share a recursive group of 65 schemas (Stripe's) is measured in milliseconds. Each
        referenced schema is walked and serialised once per lint run (`_ref_graph`), the text is
        never joined beyond the prefix that is counted, and operations with the same response
        schema and closure share one measurement."""
        node = _success_schema(op, self.doc.data)
        if node is None:
            return None
        head = compact_json(node)
        closure = self._closures.get(head)
        if closure is None:  # operations answering with the same schema (a `$ref`) share its closure
            seen: set[str] = set()
            stack = list(_direct_refs(node))
            while stack:
                target = stack.pop()
                if target in seen:
                    continue
                seen.add(target)
                stack.extend(self._ref_graph(target)[0])
            closure = self._closures[head] = tuple(sorted(seen))
        key = (head, closure, budget)
        hit = self._size_cache.get(key)
        if hit is not None:
            return hit
        texts = [head, *(text for text in (self._ref_graph(t)[1] for t in closure) if text is not None)]
        length = sum(len(text) for text in texts) + len(texts) - 1
        tokens = 0
        if length > budget:
            limit, taken, size = budget * 16, [], -1
            for text in texts:
                taken.append(text)
                size += len(text) + 1
                if size >= limit:
                    break
            tokens = count_tokens(",".join(taken)[:limit])
        self._size_cache[key] = (length, tokens)
        return length, tokens

    def _ref_graph(self, target: str) -> tuple[list[str], str | None]:
        """The `$ref` targets a referenced schema names directly, and its compact JSON (None when
        the pointer does not resolve), computed once per lint run."""
        cached = self._refs_cache.get(target)
        if cached is None:
            try:
                value = resolve_pointer(self.doc.data, target)
            except PointerError:
                cached = ([], None)
            else:
                cached = (_direct_refs(value), compact_json(value))
            self._refs_cache[target] = cached
        return cached

    def _synonyms(self) -> dict[str, list[_IntentView]]:
        groups: dict[str, dict[str, list[_IntentView]]] = {}
        for view in self.views:
            parts = view.key.lower().split("_")
            verb = parts[0]
            if verb == "look" and len(parts) > 2 and parts[1] == "up":
                verb, parts = "lookup", ["lookup", *parts[2:]]
            if verb not in SYNONYM_VERBS or len(parts) < 2:
                continue
            noun = "_".join([*parts[1:-1], _singular(parts[-1])])
            groups.setdefault(noun, {}).setdefault(verb, []).append(view)
        return {noun: [v for vs in verbs.values() for v in vs] for noun, verbs in groups.items() if len(verbs) > 1}

    def check_descriptions(self) -> None:
        for view in self.views:
            has_own = bool(view.intent and view.intent.description)
            summary = view.op.node.get("summary")
            description = view.op.node.get("description")
            if not has_own and not (isinstance(summary, str) and summary.strip()) and not (
                    isinstance(description, str) and description.strip()):
                self.add(DESCRIPTION_MISSING, f"`{view.key}` has no description ({view.op.key} has no summary or "
                         "description either)", self.where(view), tool=view.main.name)
        owners: dict[int, _IntentView] = {}  # a tool's intent, by identity: one pass, not one per long description
        for view in reversed(self.views):
            owners.update((id(t), view) for t in (view.main, view.preview) if t is not None)
        for tool in self.ir.tools:
            if len(tool.description) > DESCRIPTION_LIMIT:
                owner = owners.get(id(tool))
                loc = self.where(owner, "description") if owner else self.doc.locate(tool.source_pointer)
                self.add(DESCRIPTION_TOO_LONG, f"the description of `{tool.name}` is {len(tool.description):,} "
                         f"characters (limit {DESCRIPTION_LIMIT:,}, generated text included)", loc, tool=tool.name)
        for noun, views in sorted(self._synonyms().items()):
            names = sorted(v.key for v in views)
            first = min(views, key=lambda v: v.key)
            self.add(TOOL_NAME_NEAR_SYNONYM, f"tool names {', '.join(f'`{n}`' for n in names)} are near-synonyms "
                     f"(same noun {noun!r})", self.where(first), tool=first.key)
            for view in views:
                others = [v for v in views if v is not view]
                text = view.intent.description if view.intent and view.intent.description else view.main.description
                if _says_when_not(text, [o.main.name for o in others] + [o.key for o in others]
                                  + [o.preview.name for o in others if o.preview]):
                    continue
                self.add(DESCRIPTION_NO_WHEN_NOT, f"`{view.key}` has near-synonym(s) "
                         f"{', '.join(f'`{o.key}`' for o in others)} but its description does not say when not to "
                         "use it", self.where(view, "description"), tool=view.main.name)

    def check_catalog(self) -> None:
        where = self.intents.locate("tools") if self.model.tools else self.intents.locate()
        n = len(self.ir.tools)
        if n > self.settings.max_tools:
            self.add(CATALOG_TOO_MANY_TOOLS, f"the catalog has {n:,} tools (max_tools {self.settings.max_tools:,})",
                     where)
        if not self.ir.tools:
            return
        catalogs = self.catalogs()
        prefix = self.settings.client_prefix
        for name, tools in catalogs.by_dialect().items():
            problems = catalog_request_problems(name, tools, client_prefix=prefix)
            sent = catalogs.deferred.request_view(name, tools)
            if sent is not tools:
                # a client-run search (Chat Completions, Gemini) sends the eager entries and
                # `search_tools`, then adds the found ones from the file: the tools per request are
                # counted on that up-front view, every other limit on the file
                problems = [p for p in problems if p.limit.name != "max_tools"] + [
                    p for p in catalog_request_problems(name, sent, client_prefix=prefix)
                    if p.limit.name == "max_tools"]
            for problem in problems:
                shown = f" (e.g. {', '.join(problem.tools[:3])})" if problem.tools else ""
                self.add(CATALOG_REQUEST_LIMITS, f"{problem.message}{shown}: {problem.fix}", where)
        budget = self.settings.max_catalog_tokens
        # a catalog's tokens are the sum of its tools' tokens (what REPORT.md shows); a catalog whose
        # compact JSON is shorter than the budget cannot exceed it (a token is at least one character)
        sizes = {dialect: 0 for dialect in catalogs.by_dialect()}
        measured = self.data.sizes
        if measured is None and any(len(compact_json(tools)) > budget for tools in catalogs.by_dialect().values()):
            measured = measure(catalogs)
        for size in measured or []:
            for dialect, tokens in size.tokens.items():
                sizes[dialect] = sizes.get(dialect, 0) + tokens
        dialect, tokens = max(sizes.items(), key=lambda kv: kv[1])
        if tokens > budget:
            self.add(CATALOG_TOO_MANY_TOKENS, f"the {dialect} catalog is {tokens:,} o200k tokens "
                     f"(max_catalog_tokens {budget:,})", where)

    def check_coverage(self) -> None:
        covered = set(self.ir.covered)
        rest = [op for op in self.operations if op.pointer not in covered]
        if rest:
            shown = ", ".join(op.operation_id or op.key for op in rest[:5])
            more = f" and {len(rest) - 5:,} more" if len(rest) > 5 else ""
            self.add(OPERATIONS_UNCOVERED, f"{len(rest):,} of {len(self.operations):,} operations of "
                     f"{self.doc.display} are not covered by any tool: {shown}{more}", self.intents.locate(),
                     "add intents (or an `include` group) for the ones agents need; REPORT.md lists them all")


    def check_toolsets(self) -> None:
        """`toolset-near-synonym`: within each toolset, intents a model could confuse
        (`toolgen.review.lint.toolset_rules.near_synonyms`), located at the second intent."""
        by_toolset: dict[str, list[tuple[Member, _IntentView]]] = {}
        for view in sorted(self.views, key=lambda v: v.key):
            toolset = view.main.policy.toolset
            if toolset is None:
                continue
            text = view.intent.description if view.intent and view.intent.description else view.main.description
            tools = (view.main.name, *((view.preview.name,) if view.preview else ()))
            by_toolset.setdefault(toolset, []).append((Member(view.key, tools, text), view))
        # a split Responses catalog (more namespaces than one request carries) is checked part by part
        sent = self.catalogs().deferred.catalogs_of("openai.responses") if self.ir.tools else {}
        largest = max((len(catalog) for catalog in sent.values()), default=0)
        if largest > self.settings.max_tools:
            shown = f" (its largest part, of {len(sent)})" if len(sent) > 1 else ""
            self.add(CATALOG_REQUEST_LIMITS, f"the OpenAI Responses catalog{shown} has {largest:,} top-level tools "
                     f"(functions of no toolset, namespaces, tool_search; {self.settings.max_tools} per request)",
                     self.intents.locate("toolsets") if self.model.toolsets else self.intents.locate(),
                     "put the tools of no toolset into toolsets (`toolset:`, or `toolset: from_tag` on an include "
                     "group): a namespace is one top-level entry; namespaces of deferred tools are spread over "
                     "several parts, the rest is in every part")
        for toolset, members in sorted(by_toolset.items()):
            views = {m.key: v for m, v in members}
            group = [m for m, _ in members]  # a pure function of the members' keys, tools and texts: remembered
            pairs = self.data.remember(piece_key("near-synonyms 1", [(m.key, m.tools, m.description) for m in group]),
                                       partial(near_synonyms, group))
            for first, second, why in pairs:
                self.add(TOOLSET_NEAR_SYNONYM, f"toolset `{toolset}`: `{first.key}` and `{second.key}` are "
                         f"near-synonyms ({why}) and neither description names the other",
                         self.where(views[second.key], "description"), tool=views[second.key].main.name)


_WHEN_NOT = re.compile(r"\b(do not|don't|never|not for|instead|rather than|only for|only when|not to)\b|"
                       r"\buse \w+ (for|to|when|instead)\b", re.IGNORECASE)


def _success_schema(op: Operation, data: dict[str, Any]) -> Any:
    """The raw schema of the first 2xx response with a JSON body (refs of the response and media
    objects followed), or None."""
    def follow(node: Any) -> Any:
        for _ in range(16):
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                return node
            target = ref_to_pointer(node["$ref"])
            if target is None:
                return None
            try:
                node = resolve_pointer(data, target)
            except PointerError:
                return None
        return None

    responses = op.node.get("responses")
    if not isinstance(responses, dict):
        return None
    for _, key in sorted((str(c), c) for c in responses if str(c).startswith("2")):
        response = follow(responses[key])
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict):
            continue
        media = next((m for m in content if m.split(";")[0].strip().lower() == "application/json"), None) or \
            next((m for m in content if "json" in m.lower()), None)
        if media is not None and isinstance(content[media], dict) and "schema" in content[media]:
            return content[media]["schema"]
    return None


def _hide_remedy(tool: Tool, tokens: int, budget: int) -> str | None:
    """A drafted `hide:` for `tool`: its optional body members, largest first, until the rest of its
    input schema (scaled from bytes to the tool's measured tokens) fits `budget`; None when hiding
    optional body members cannot bring it under."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    raw = schema.get("properties")
    props: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required = set(schema.get("required") or [])
    wire = {b.arg: b.wire_name for b in tool.policy.bindings if b.location == "body" and b.wire_name}
    total = len(compact_json(schema)) + len(compact_json(tool.output_schema))
    per_byte = tokens / max(total, 1)
    sizes = sorted(((len(compact_json(v)), k) for k, v in props.items() if k in wire and k not in required),
                   key=lambda sk: (-sk[0], sk[1]))
    chosen: list[str] = []
    rest = total
    for size, arg in sizes:
        if rest * per_byte <= budget * 0.9:
            break
        chosen.append(wire[arg])
        rest -= size
    if not chosen or rest * per_byte > budget:
        return None
    shown = ", ".join(chosen)
    return (f"hide the largest optional body members (about {rest * per_byte:,.0f} tokens left): "
            f"`hide: [{shown}]`, or project the output (`output.fields`)")


def _says_when_not(text: str, others: list[str]) -> bool:
    """Whether a description names one of the other tools or gives negative guidance."""
    lowered = text.lower()
    if any(has_word(lowered, o.lower()) for o in others):
        return True
    return bool(_WHEN_NOT.search(text))


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _direct_refs(node: Any) -> list[str]:
    """The JSON pointers of the local `$ref`s inside `node`, without following them."""
    out: list[str] = []
    stack: list[Any] = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str):
                target = ref_to_pointer(ref)
                if target is not None:
                    out.append(target)
            stack.extend(v for k, v in cur.items() if k != "$ref")
        elif isinstance(cur, list):
            stack.extend(cur)
    return out


def lint_api(data: LintInput) -> list[Diagnostic]:
    """All findings for one API, build diagnostics included, sorted by location; severities are the
    rules' defaults (apply `apply_severity` for the configured ones). Pure: reads no files."""
    linter = _Linter(data)
    sink = DiagnosticSink()
    sink.extend(data.build_diagnostics)  # at the build's severity: one finding, one severity everywhere
    sink.extend(linter.run())
    return sorted(data.doc.fill_locations(sink.items), key=Diagnostic.sort_key)


__all__ = ["LintInput", "lint_api"]
