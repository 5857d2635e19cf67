"""The lint rules that read each operation: mapping, effects, the policy (permissions, approval,
idempotency keys), OAuth scopes, pagination and output sizes."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from ...compile.ir import Tool
from ...compile.lower.idempotency_key import KeyPlace, idempotency_place
from ...compile.operations import (
    Operation,
    declared_oauth_scopes,
    find_operation,
    operation_requirements,
    used_scopes,
)
from ...compile.pagination import find_items_field, paging_signals
from ...compile.verbs import changes_named
from ...emit import compact_json, piece_key
from ...pointer import PointerError, ref_to_pointer, resolve_pointer
from ...tokens import count_tokens
from .lint_context import LintContext
from .rules import (
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
    OUTPUT_UNPROJECTED_LARGE,
    PAGINATION_MISSING,
    PERMISSION_MISSING,
    PREVIEW_ADDS_NOTHING,
    SCOPE_UNKNOWN,
    TOOL_NAME_DUPLICATE,
)

T = TypeVar("T")


class OperationChecks(LintContext):
    """The rules about each intent's operation (module docstring)."""

    def check_mapping(self) -> None:
        seen: dict[str, str] = {}
        for key, intent in self.model.tools.items():
            op = find_operation(self.op_index, intent.operation)
            if op is None:
                continue
            other = seen.get(op.pointer)
            if other is not None:
                first = self.model.tools[other]
                if (first.fixed, first.hide, first.output, first.args) == (
                    intent.fixed,
                    intent.hide,
                    intent.output,
                    intent.args,
                ):
                    self.add(
                        OPERATION_MAPPED_TWICE,
                        f"intent `{key}` maps {op.key}, which intent `{other}` already maps, with the same "
                        "fixed values, hidden and narrowed arguments and output",
                        self.intents.locate("tools", key, "operation"),
                        tool=key,
                    )
            else:
                seen[op.pointer] = key
        names: dict[str, Tool] = {}
        for tool in self.ir.tools:
            if tool.name in names:
                key = tool.policy.intent
                loc = (
                    self.intents.locate("tools", key)
                    if key in self.model.tools
                    else self.doc.locate(tool.source_pointer)
                )
                self.add(
                    TOOL_NAME_DUPLICATE,
                    f"tool name `{tool.name}` is produced twice (intents "
                    f"`{names[tool.name].policy.intent}` and `{key}`)",
                    loc,
                    tool=tool.name,
                )
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
                self.add(
                    EFFECT_CONTRADICTS_METHOD,
                    f"`{view.key}` is marked read but {view.op.key} is a {method}",
                    loc,
                    tool=view.main.name,
                )
            elif effect == "read" and changes:
                strongest = "destructive" if any(e.effect == "destructive" for e in changes) else "write"
                self.add(
                    EFFECT_READ_NAMES_CHANGE,
                    f"`{view.key}` is marked read, but {view.op.key}: "
                    f"{'; '.join(e.says() for e in changes[:2])}",
                    loc,
                    f"if it changes something, set `effect: {strongest}` and `approval: required` (a read "
                    "is never previewed or approved, and its MCP tool says readOnlyHint); if it only reads, set "
                    "`effect-read-names-change` to `off` in toolgen.yaml `lint.severity`",
                    tool=view.main.name,
                )
            elif effect != "read" and method in ("GET", "HEAD", "OPTIONS") and not changes:
                self.add(
                    EFFECT_WRITE_ON_SAFE_METHOD,
                    f"`{view.key}` is marked {effect} but {view.op.key} is a "
                    f"{method}; confirm that this API mutates on {method}",
                    loc,
                    tool=view.main.name,
                )
            elif effect == "write" and method == "DELETE":
                self.add(
                    EFFECT_DELETE_NOT_DESTRUCTIVE,
                    f"`{view.key}` is marked write but {view.op.key} deletes",
                    loc,
                    tool=view.main.name,
                )

    def _idempotency_place(self, op: Operation) -> KeyPlace | None:
        """Where `op` takes an idempotency key (`idempotency_place`), remembered by the operation's
        part of the document (`_remembered`): a write's request body is walked once, not on every build."""
        return self._remembered(
            op, "idempotency-place 1", partial(idempotency_place, self.doc, self.converter, op)
        )

    def _check_key_sent(self, view: Any, row: Any) -> None:
        """``idempotency-header-unused`` / ``idempotency-key-unsent``: the operation takes an
        idempotency key (`idempotency_place`) that the record does not send there."""
        place = self._idempotency_place(view.op)
        idem = row.idempotency
        if place is None:
            if idem is None:
                self.add(
                    IDEMPOTENCY_KEY_MISSING,
                    f"`{row.tool}` ({row.effect}) has no idempotency key",
                    self.where(view),
                    tool=row.tool,
                )
            return
        sent = (
            idem is not None
            and idem.send_in == place.location
            and (
                (idem.wire_name or "").lower() == place.name.lower()
                if place.location == "header"
                else idem.wire_name == place.name
            )
        )
        if sent:
            return
        if place.location == "header":
            self.add(
                IDEMPOTENCY_HEADER_UNUSED,
                f"{view.op.key} declares the `{place.name}` header but "
                f"`{row.tool}` does not send its idempotency key there",
                self.where(view, "idempotency"),
                f'set `idempotency: {{key: action_id, send_as: "header:{place.name}"}}`',
                tool=row.tool,
            )
            return
        what = "query parameter" if place.location == "query" else "request-body member"
        self.add(
            IDEMPOTENCY_KEY_UNSENT,
            f"{view.op.key} takes an idempotency key as the {what} `{place.name}` "
            f"(#{place.pointer}) but `{row.tool}` does not send its key there"
            + (" (`send_as: none`)" if idem is not None and idem.send_in == "none" else ""),
            self.where(view, "idempotency"),
            f'set `idempotency: {{key: action_id, send_as: "{place.send_as}", honoured_by_api: true}}`: the '
            "runtime fills it from the record's key and hides it from the model",
            tool=row.tool,
        )

    def check_policy(self) -> None:
        for view in self.views:
            row = view.main.policy
            if not row.permission:
                self.add(
                    PERMISSION_MISSING,
                    f"`{view.main.name}` requires no permission",
                    self.where(view),
                    tool=view.main.name,
                )
            if row.mode != "record":
                continue
            if (
                row.effect == "write"
                and row.approval != "required"
                and view.preview is not None
                and row.record_arguments != "preview"
            ):
                self.add(
                    PREVIEW_ADDS_NOTHING,
                    f"`{view.preview.name}` previews a write that needs no approval "
                    f"and `{row.tool}` takes the full arguments: the preview gates nothing",
                    self.where(view, "approval", "effect"),
                    "set `preview: false` to drop "
                    f"`{view.preview.name}`, or `approval: required` if a human should see the request first",
                    tool=view.preview.name,
                )
            if row.effect == "destructive" and row.approval != "required":
                self.add(
                    DESTRUCTIVE_WITHOUT_APPROVAL,
                    f"`{row.tool}` is destructive ({view.op.key}) but needs no approval",
                    self.where(view, "approval", "effect"),
                    tool=row.tool,
                )
            self._check_key_sent(view, row)
            idem = row.idempotency
            if idem is not None and idem.send_in != "none" and idem.honoured_by_api is None:
                self.add(
                    IDEMPOTENCY_HONOUR_UNDECLARED,
                    f"`{row.tool}` sends its idempotency key to the API as "
                    f"{idem.send_in} `{idem.wire_name}` but does not say whether the API deduplicates by it",
                    self.where(view, "idempotency"),
                    tool=row.tool,
                )

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
            if not any(
                name in declared and isinstance(scopes, list) and scopes
                for r in reqs
                for name, scopes in r.items()
            ):
                continue  # the spec asks for no scope here: the permission is the map's own name
            for scope in view.main.policy.permission:
                if scope not in known:
                    close = difflib.get_close_matches(scope, sorted(known), n=1)
                    self.add(
                        SCOPE_UNKNOWN,
                        f"`{view.main.name}` requires scope {scope!r}, which the spec's OAuth "
                        "schemes do not declare",
                        self.where(view, "permission"),
                        f"did you mean {close[0]!r}?" if close else None,
                        tool=view.main.name,
                    )

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
        is_array = isinstance(schema, dict) and (
            schema.get("type") == "array"
            or (isinstance(schema.get("type"), list) and "array" in schema["type"])
        )
        query = [str(p.get("name")) for p in self.params(op) if p.get("in") == "query"]
        return is_array, paging_signals(query, schema, bool(link)), find_items_field(schema) is not None

    def check_pagination(self) -> None:
        for view in self.views:
            row = view.main.policy
            if row.mode != "read" or row.pagination is not None:
                continue
            is_array, signals, has_items = self._remembered(
                view.op, "paging 2", partial(self._paging_facts, view.op)
            )
            bounded = bool(view.intent and view.intent.output and view.intent.output.max_bytes)
            if is_array and not signals and bounded:
                continue  # nothing to page with; the intent bounds the list explicitly
            if is_array or (signals and has_items):
                why = "returns an array" if is_array else "has an item array"
                also = f"; it {'; '.join(signals)}" if signals else ""
                self.add(
                    PAGINATION_MISSING,
                    f"`{row.tool}` lists ({view.op.key} {why}{also}) but has no pagination",
                    self.where(view),
                    "declare `pagination:` with the style these name (cursor, link, page or offset; docs/"
                    "review.md, 'Pagination styles')"
                    if signals
                    else "the operation declares no paging parameter, answer field or Link header: set "
                    "`output.max_bytes` (and `output.fields`) to bound the list, or turn this rule off for it",
                    tool=row.tool,
                )

    def check_outputs(self) -> None:
        budget = self.settings.large_output_tokens
        for view in self.views:
            row = view.main.policy
            if row.output.fields:
                continue
            measured = self._remembered(
                view.op, f"response-size {budget}", partial(self.response_size, view.op, budget)
            )
            if measured is None:
                continue
            length, tokens = measured
            if tokens <= budget:
                continue
            more = "" if length <= budget * 16 else "more than "
            self.add(
                OUTPUT_UNPROJECTED_LARGE,
                f"`{row.tool}` returns the whole response of {view.op.key} "
                f"({more}{tokens:,} tokens of schema; budget {budget:,}) without `output.fields`",
                self.where(view, "output"),
                tool=row.tool,
            )

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
        media = next(
            (m for m in content if m.split(";")[0].strip().lower() == "application/json"), None
        ) or next((m for m in content if "json" in m.lower()), None)
        if media is not None and isinstance(content[media], dict) and "schema" in content[media]:
            return content[media]["schema"]
    return None


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
