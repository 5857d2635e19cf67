"""The lint stage's input and what every rule reads of it: `LintInput`, each intent's tools
(`IntentView`) and `LintContext`, the linter's state and helpers (where a finding is located, each
operation's parameters and response, the catalogs). The rules are in `operation_checks` and
`catalog_checks`; `linter` runs them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...compile.intent import LoadedIntentMap, ToolIntent
from ...compile.ir import ApiIR, Tool
from ...compile.load import SpecDocument
from ...compile.lower import operation_parameters, operation_response
from ...compile.lower.reuse import OperationKeys
from ...compile.operations import (
    Operation,
    OperationIndex,
    find_operation,
    list_operations,
    operation_matches,
)
from ...compile.schema import SchemaBudget, SchemaConverter
from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation
from ...dialects import DialectOptions
from ...emit.build_report import ToolSize
from ...emit.dialect_catalogs import Catalogs, build_catalogs
from ...remember import Remember, computed
from .preflight import ALL_DIALECTS
from .rules import (
    LintSettings,
    Rule,
)


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
class IntentView:
    """The tools of one intent (explicit, or one operation of an include group)."""

    key: str
    explicit: bool
    intent: ToolIntent | None
    group: int | None
    op: Operation
    main: Tool  # the read tool, or the record tool of a write
    preview: Tool | None


class LintContext:
    """The state every rule reads (`LintInput`, the operations, the intents' views) and its helpers."""

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
        budget = SchemaBudget(
            max_nodes=self.model.budgets.max_schema_nodes, max_depth=self.model.budgets.max_schema_depth
        )
        self.converter = SchemaConverter(self.doc, DiagnosticSink(), budget)
        self._params = operation_parameters
        self._response = operation_response
        self._param_cache: dict[str, list[dict[str, Any]]] = {}
        self._response_cache: dict[str, tuple[Any, bool] | None] = {}
        self._refs_cache: dict[str, tuple[list[str], str | None]] = {}
        self._size_cache: dict[tuple[str, tuple[str, ...], int], tuple[int, int]] = {}
        self._closures: dict[
            str, tuple[str, ...]
        ] = {}  # a response schema's compact JSON -> its $ref closure
        self.views = list(self._views())
        self._catalogs: Catalogs | None = data.catalogs

    # --- helpers ----------------------------------------------------------------------------

    def _views(self) -> Iterator[IntentView]:
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
            yield IntentView(key, explicit, intent if explicit else None, group, op, main, preview)

    def _same_op(self, intent: ToolIntent, op: Operation) -> bool:
        found = find_operation(self.op_index, intent.operation)
        return found is not None and found.pointer == op.pointer

    def _group_of(self, op: Operation) -> int | None:
        for i, group in enumerate(self.model.include):
            if operation_matches(op, group.match) and not any(
                operation_matches(op, p) for p in group.exclude
            ):
                return i
        return None

    def where(self, view: IntentView, *keys: str) -> SourceLocation:
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

    def add(
        self,
        rule: Rule,
        message: str,
        location: SourceLocation | None,
        hint: str | None = None,
        tool: str | None = None,
    ) -> None:
        self.sink.add(Diagnostic(rule.id, rule.severity, message, location, hint or rule.help, tool))
