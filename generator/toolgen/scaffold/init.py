"""`toolgen init SPEC`: a draft intent map for a spec, for a human to edit.

Input: a loaded `SpecDocument`. Output: `InitResult`, holding the intent map as YAML text (written
with its comments by `toolgen.scaffold.draft_text`): every operation of the spec as an explicit
intent, grouped by its first tag (a comment per group), with

- the effect from what the operation says it does (`toolgen.compile.verbs.guess_effect`: the verb of
  its Action, operationId, path or summary, the method only as the prior): a GET whose name says
  delete or create is drafted destructive or write, with approval; a POST whose operationId and
  summary both say search/query/list is drafted read; either with a `# decide [effect-undecided]` mark
  when the words disagree (`toolgen lint --strict` fails until a human decides and deletes it), and
  when in doubt a write;
- the permission from the operation's OAuth scopes when it has some, else ``<api>:read|write`` (the
  map's own permission; when an OAuth scheme protects an operation but the spec asks for no scope, a
  note says so and one `# decide [permission-undecided]` mark above `tools:` counts them);
- `hide:` for the parameters a security scheme's request signature computes (AWS SigV4's
  ``X-Amz-Date``, ``X-Amz-Signature``, ...: `toolgen.compile.lower.security.signed_parameters`),
  with a comment saying signing belongs to the transport;
- `description:` from the spec's own text, cut at a sentence end, where the spec's would make a tool
  description longer than lint's limit (1,024 characters with what the build adds), with a note;
- `approval: required` on every write and destructive intent (the safe default; a comment says
  `never` suits only a low-risk write);
- the idempotency key sent where the operation takes one (`toolgen.compile.lower.idempotency_key`: an
  `Idempotency-Key` header in any spelling, a query parameter or a top-level request-body member
  such as `idempotency_key`; a `client_request_id`-like name only where its description says it
  deduplicates), with `honoured_by_api: true` (false where its description says the API does not
  deduplicate by it yet), else kept for receipts only (`send_as: none`);
- pagination detected by `toolgen.compile.pagination.detect` from the query parameters and the
  answer together (the success response the build uses, `toolgen.compile.lower.operation_success`,
  and its declared headers): tokens in the answer or a header, next URLs, pages, offsets, windows,
  with a `# decide [pagination-undecided]` mark where detection doubts or one side is missing;
- comments above each intent: the operation and its summary, and the response's top-level fields as
  an `output.fields` projection to choose from; a "check this" where the scope the operation
  inherits looks wrong for its method (a POST whose only scope says read, a GET that asks for write);
- an `auth:` block naming the runtime secret (environment variable) of every security scheme, as
  the runtime would name it by default (``<API>_TOKEN``, or ``<API>_<SCHEME>`` for several);
- tag descriptions as plain, wrapped comment lines (Markdown links, emphasis and headings removed);
- a `toolsets:` block with one toolset per first tag (named by `toolgen.naming.toolset_from_tag`,
  described by the tag's first sentence), or for an untagged operation per path (the `from_path`
  rule, `toolgen.compile.lower.toolsets.path_toolset`), and each intent's `toolset`: `eager` when the draft has at
  most `EAGER_INTENTS` intents, else `deferred` (found by tool search), for the human to pick the
  toolsets a model sees up front.

Names are snake_case operationIds (``METHOD /path`` when the spec has none), valid tool names,
unique, and at most 64 characters with the `preview_` prefix. The draft is lowered once in memory:
an operation the build cannot turn into a tool is left out, and listed after the tools with why
(the build's diagnostic), what to do (its hint) and its intent commented out, ready to uncomment once
the remedy is applied; so `toolgen build` works on the draft and `toolgen lint` reports warnings only.
The lowerings of the draft (its errors, the descriptions to cut, the decisions lint leaves) share
each operation's lowering (`toolgen.scaffold.draft_lowering`): an operation is lowered once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compile.intent import Budgets
from ..compile.load import SpecDocument
from ..compile.lower import operation_parameters, operation_success
from ..compile.lower.body import body_member_costs
from ..compile.lower.idempotency_key import idempotency_place
from ..compile.lower.security import signed_parameters
from ..compile.lower.toolsets import path_toolset, tag_description, with_resources
from ..compile.operations import (
    Operation,
    declared_oauth_scopes,
    list_operations,
    operation_requirements,
)
from ..compile.pagination import detect
from ..compile.schema import SchemaConverter, object_view, project_schema
from ..compile.verbs import EffectGuess, guess_effect
from ..diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from ..naming import MAX_TOOL_NAME, shorten, snake_case, stable_suffix, toolset_from_tag
from ..review.lint.rules import EFFECT_UNDECIDED, PAGINATION_UNDECIDED, PERMISSION_UNDECIDED
from .draft_lowering import DraftLowering, fit_descriptions, lower_errors
from .draft_lowering import decisions as decisions_of
from .draft_text import (
    MARK_CHARS,
    Draft,
    LeftOut,
    auth_secrets,
    one_line,
    plain_comment_lines,
    render_draft,
)

MAX_FIELD_HINTS = 15
#: a draft with more intents than this loads its toolsets `deferred` (found by tool search): OpenAI
#: advises fewer than 20 functions up front, and the whole catalog would not fit one request
EAGER_INTENTS = 20
KEY_CANDIDATES = ("action_id", "idempotency_key", "toolgen_action_id")
#: what a drafted tool's request body may cost before `init` hides its largest optional members: the
#: build's node budget, and a byte size that keeps the tool under lint's `max_tool_tokens` (16,000
#: o200k tokens; compact JSON schemas run at 3.5 to 4 bytes a token, so 48,000 bytes leaves room)
BODY_NODES = Budgets().max_schema_nodes
BODY_BYTES = 48_000


@dataclass
class InitResult:
    """The draft's text and what went into it."""

    text: str
    api: str
    intents: int
    skipped: list[tuple[str, str]]  # (operation, reason)
    secrets: list[str] = field(default_factory=list)  # the environment variables of its `auth:` block
    left_out: list[LeftOut] = field(default_factory=list)  # `skipped` with remedies and drafted intents
    #: what `toolgen lint --strict` reports on the draft as written: (intent key, or "" for the whole
    #: map; rule id; message); each is marked `# decide [rule]` in the draft
    decisions: list[tuple[str, str, str]] = field(default_factory=list)


def api_name_from(text: str) -> str:
    """A valid API name (``^[a-z_][a-z0-9_]*$``) from a file stem or title."""
    name = _plain_name(text)
    return name + "_api" if _is_keyword(name) else name


def renamed_keyword(text: str) -> str | None:
    """The Python keyword (``case``, ``match``, ``class``) that `api_name_from` would have made of
    `text`, and renamed with ``_api`` as no generated package can be named so; else None."""
    name = _plain_name(text)
    return name if _is_keyword(name) else None


def _plain_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", snake_case(text)).strip("_") or "api"
    return "_" + name if name[0].isdigit() else name


def _is_keyword(name: str) -> bool:
    import keyword

    return keyword.iskeyword(name) or keyword.issoftkeyword(name)


_SAFE = ("GET", "HEAD", "OPTIONS")


def _effect_notes(op: Operation, guess: EffectGuess, draft: Draft) -> None:
    """Notes where the drafted effect is not the method's: a change on a safe method, a read on POST,
    a destructive POST/PUT/PATCH; a `# decide [effect-undecided]` mark when the words disagree."""
    effect = guess.effect
    safe = op.method in _SAFE
    if safe and effect != "read":
        if guess.doubtful:
            why = guess.why if ", while " in guess.why else f"{guess.why}, while other words say read"
            draft.notes.append(
                f"decide [effect-undecided]: {why}: drafted "
                f"{effect} with approval until you decide; if it only reads, set `effect: read` and "
                "remove `approval` and `idempotency`; then delete this mark"
            )
            draft.eol["effect"] = "decide"
        else:
            draft.notes.append(f"effect: {guess.why}: drafted {effect} from the name, not the method")
            draft.eol["effect"] = "from the name, not the method"
    elif not safe and effect == "read":
        draft.notes.append(
            f"decide [effect-undecided]: {guess.why}: drafted read (no approval, no preview); if it "
            "changes anything, set `effect: write` and `approval: required`; then delete this mark"
        )
        draft.eol["effect"] = "decide"
    elif effect == "destructive" and op.method != "DELETE":
        if guess.doubtful:
            draft.notes.append(
                f"decide [effect-undecided]: {guess.why}, while other words do not: drafted "
                "destructive; make it `effect: write` if nothing is lost; then delete this mark"
            )
            draft.eol["effect"] = "decide"
        else:
            draft.notes.append(f"effect: {guess.why}: drafted destructive")


def _operation_ref(op: Operation, id_counts: dict[str, int]) -> str:
    if op.operation_id and id_counts.get(op.operation_id, 0) == 1:
        return op.operation_id
    return op.key


def _top_fields(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    view = object_view(schema)
    return list(view[0]) if view else []


class _Drafter:
    def __init__(self, doc: SpecDocument, api: str):
        self.doc = doc
        self.api = api
        self.sink = DiagnosticSink()
        self.converter = SchemaConverter(doc, self.sink)
        self.declared = declared_oauth_scopes(doc)
        self.taken: set[str] = set()
        #: the map's own permission of each operation an OAuth scheme protects without asking a scope
        self.unscoped: list[str] = []

    def name(self, op: Operation, effect: str) -> str:
        base = snake_case(op.synthetic_id) or "op"
        limit = MAX_TOOL_NAME - (len("preview_") if effect != "read" else 0)
        name = shorten(base, limit, seed=op.pointer)
        n = 0
        while self._clash(name, effect):
            n += 1
            name = shorten(
                f"{base}_{stable_suffix(op.pointer + '#' * n, 6)}", limit, seed=op.pointer + str(n)
            )
        self.taken.update(self._names(name, effect))
        return name

    @staticmethod
    def _names(name: str, effect: str) -> list[str]:
        return [name] if effect == "read" else [name, "preview_" + name, "record_" + name]

    def _clash(self, name: str, effect: str) -> bool:
        return any(n in self.taken for n in self._names(name, effect))

    def permission(self, op: Operation, effect: str, draft: Draft) -> Any:
        reqs = operation_requirements(self.doc, op)
        for req in reqs:
            scopes = [
                str(s)
                for name, value in req.items()
                if name in self.declared and isinstance(value, list)
                for s in value
            ]
            if scopes:
                unique = list(dict.fromkeys(scopes))
                hint = _scope_mismatch(op, effect, unique)
                if hint:
                    draft.notes.append(hint)
                    draft.eol["permission"] = "check this"
                return unique[0] if len(unique) == 1 else unique
        own = f"{self.api}:{'read' if effect == 'read' else 'write'}"
        if any(self.declared.get(name) for req in reqs for name in req):
            draft.notes.append(
                f"permission: the spec asks for no OAuth scope here; `{own}` is this map's own "
                "permission (see the mark above `tools:`)"
            )
            self.unscoped.append(own)
        return own

    def draft(self, op: Operation, id_counts: dict[str, int]) -> Draft:
        guess = guess_effect(op)
        effect = guess.effect
        key = self.name(op, effect)
        intent: dict[str, Any] = {"operation": _operation_ref(op, id_counts), "effect": effect}
        draft = Draft(op, key, intent)
        summary = op.node.get("summary") or op.node.get("description") or ""
        summary = " ".join(str(summary).split())
        head = f"{op.key}" + (f": {summary[:100]}" + ("…" if len(summary) > 100 else "") if summary else "")
        draft.notes.append(head)
        if not summary:
            draft.notes.append(
                "description: the spec has none; write what the tool does and when not to use it"
            )
        _effect_notes(op, guess, draft)
        permission = self.permission(op, effect, draft)
        if permission is not None:
            intent["permission"] = permission
        if op.tags:
            toolset = toolset_from_tag(op.tags[0])
            draft.toolset_description = _toolset_description(self.doc, op.tags[0])
        else:
            toolset, draft.toolset_description = path_toolset(op.url_path)
        if toolset is not None:
            intent["toolset"] = toolset
        try:
            params = [p for p, _ in operation_parameters(self.doc, self.converter, op)]
        except DiagnosticError:
            params = []
        try:
            success = operation_success(self.doc, self.converter, op)  # read only
            response, link, headers = success.schema, success.link, success.headers
        except DiagnosticError:
            response, link, headers = None, False, ()
        if effect != "read":
            _draft_hide(self.converter, op, intent, draft)
            intent["approval"] = "required"
            draft.eol["approval"] = (
                "destructive: keep it"
                if effect == "destructive"
                else "the safe default; `never` only for low-risk writes"
            )
            place = idempotency_place(self.doc, self.converter, op)
            if place is None:
                intent["idempotency"] = {"key": KEY_CANDIDATES[0], "send_as": "none"}
                draft.eol["idempotency"] = "receipts only: the spec declares no idempotency key"
            else:
                intent["idempotency"] = {
                    "key": KEY_CANDIDATES[0],
                    "send_as": place.send_as,
                    "honoured_by_api": place.honoured,
                }
                draft.eol["idempotency"] = (
                    f"the API takes the key as {place.location} `{place.name}`; the "
                    "runtime fills it, the model never does"
                    + (
                        ""
                        if place.honoured
                        else "; the spec says the API does not "
                        "deduplicate by it yet, so an unknown outcome is never re-sent"
                    )
                )
        _draft_signed_hide(self.doc, op, params, intent, draft)
        fields_of = response
        if effect == "read":
            fields_of = _draft_pagination(params, response, (link, headers), draft)
        if isinstance(fields_of, dict) and fields_of.get("type") == "array":
            fields_of = fields_of.get("items")
        fields = _top_fields(fields_of)
        if fields and effect == "read":
            _draft_output_fields(self.converter, response, fields_of, fields, intent, draft)
        if fields and "output" not in intent:
            shown = ", ".join(fields[:MAX_FIELD_HINTS]) + (
                f", … (+{len(fields) - MAX_FIELD_HINTS})" if len(fields) > MAX_FIELD_HINTS else ""
            )
            draft.notes.append(f"output: {{fields: [...]}}  # keep what the model needs, from: {shown}")
        return draft


def _draft_output_fields(
    converter: SchemaConverter,
    response: Any,
    fields_of: Any,
    fields: list[str],
    intent: dict[str, Any],
    draft: Draft,
) -> None:
    """A read whose whole response expands beyond the build's node budget (`BODY_NODES`): draft
    ``output: {fields: [...]}`` with its top-level fields (of each item, for a list), each kept one
    level deep as the build keeps it, leaving out a field that alone would not fit, and say so in a
    comment above the intent. Counted on the converter's shared result, never expanded."""
    if not isinstance(response, dict) or not isinstance(fields_of, dict):
        return
    total = converter.measure(response, {})
    if total <= BODY_NODES:
        return
    defs = response.get("$defs")
    base = {**fields_of, "$defs": defs} if isinstance(defs, dict) and "$defs" not in fields_of else fields_of
    kept: list[str] = []
    for name in fields:
        try:
            fits = project_schema(base, [*kept, name], depth=1, max_nodes=BODY_NODES) is not None
        except KeyError:
            fits = False
        if fits:
            kept.append(name)
    if not kept:
        return
    intent["output"] = {"fields": kept}
    left = [f for f in fields if f not in kept]
    draft.notes.append(
        f"output: the whole response expands to {total:,} schema nodes (budget {BODY_NODES:,}): "
        f"drafted as its {len(kept)} top-level fields, one level deep"
        + (f" (left out, too large even so: {', '.join(left)})" if left else "")
        + "; keep only what agents need"
    )


def _draft_hide(converter: SchemaConverter, op: Operation, intent: dict[str, Any], draft: Draft) -> None:
    """A write whose request body would exceed the build's node budget (`BODY_NODES`) or make a tool
    larger than lint's per-tool budget (`BODY_BYTES`): hide its largest optional members, largest
    first, until the rest fits, as `hide:` (wire names), and say so in a comment above the intent. A
    body whose required members alone are over is left as it is (the build then says why)."""
    costs, required = body_member_costs(converter, op)
    nodes = 1 + sum(n for n, _ in costs.values())
    size = sum(b for _, b in costs.values())
    if nodes <= BODY_NODES and size <= BODY_BYTES:
        return
    hidden: list[str] = []
    for name in sorted(
        (m for m in costs if m not in required), key=lambda m: (-costs[m][1], -costs[m][0], m)
    ):
        if nodes <= BODY_NODES and size <= BODY_BYTES:
            break
        hidden.append(name)
        nodes -= costs[name][0]
        size -= costs[name][1]
    if nodes > BODY_NODES or not hidden:
        return
    intent["hide"] = hidden
    draft.notes.append(
        f"hide: {len(hidden)} of the body's {len(costs)} members drafted hidden, largest first: with "
        f"them the tool would be too large for a model ({size / 1000:,.0f} kB of body schema left); "
        "unhide the ones agents need"
    )


def _draft_signed_hide(
    doc: SpecDocument, op: Operation, params: list[dict[str, Any]], intent: dict[str, Any], draft: Draft
) -> None:
    """Hide the optional parameters a security scheme's request signature computes
    (`toolgen.compile.lower.security.signed_parameters`: AWS SigV4's ``X-Amz-Date``,
    ``X-Amz-Signature``, ...), ahead of any `hide:` entry already drafted, and say why in a comment
    above the intent: signing belongs to the transport, never to the model. A required one stays
    (the build's ``param-signed-visible`` warning says what to do)."""
    signed = signed_parameters(doc, op)
    names = [
        str(p["name"])
        for p in params
        if p.get("in") in ("header", "query")
        and str(p.get("name", "")).lower() in signed
        and not p.get("required")
    ]
    if not names:
        return
    schemes = sorted({signed[n.lower()][0] for n in names})
    intent["hide"] = [*names, *(h for h in intent.get("hide", []) if h not in names)]
    draft.notes.append(
        f"hide: {', '.join(names)}: computed by the request signature of security scheme(s) "
        f"{', '.join(schemes)}; signing belongs to the transport, never to the model"
    )


_READ_WORD = re.compile(r"(?:^|[^a-z])(read|readonly|view|list|get)(?:$|[^a-z])", re.IGNORECASE)
_WRITE_WORD = re.compile(
    r"(?:^|[^a-z])(write|create|update|delete|manage|admin|edit|modify)(?:$|[^a-z])", re.IGNORECASE
)


def _scope_mismatch(op: Operation, effect: str, scopes: list[str]) -> str | None:
    """A "check this" note when the scopes look wrong for the method: a write whose every scope says
    read, or a read whose every scope says write. Worded for scopes inherited from the top level."""
    inherited = "security" not in op.node
    source = "inherited from the spec's top-level security" if inherited else "from the operation's security"
    shown = ", ".join(scopes)
    if effect != "read" and all(_READ_WORD.search(s) and not _WRITE_WORD.search(s) for s in scopes):
        return (
            f"check this: {op.method} changes data, but its scope ({shown}, {source}) says read; "
            "set the permission an actor must hold to write"
        )
    if effect == "read" and all(_WRITE_WORD.search(s) and not _READ_WORD.search(s) for s in scopes):
        return (
            f"check this: {op.method} is drafted as a read, but its scope ({shown}, {source}) says write; "
            "is the effect or the scope wrong?"
        )
    return None


def _draft_pagination(
    params: list[dict[str, Any]], response: Any, declared: tuple[bool, Sequence[str]], draft: Draft
) -> Any:
    """Draft `pagination:` of a read from its query parameters and its answer together
    (`toolgen.compile.pagination.detect`; `declared`: whether the response declares a Link header,
    and the names of the headers it declares); where detection has a doubt, a
    `# decide [pagination-undecided]` mark above the intent says what to check. Returns the schema
    whose fields the output hint lists: each item's for a paged list, else the whole answer."""
    query, literal = (
        [p for p in params if p.get("in") == "query"],
        [part for part in draft.op.url_path.split("/") if part and "{" not in part],
    )
    found = detect(
        [str(p.get("name")) for p in query],
        response,
        declared[0],
        _param_types(params),
        headers=declared[1],
        params=query,
        resource=literal[-1] if literal else None,
    )
    if found is None:
        return response
    pag: dict[str, Any] = {"style": found.style, "items": found.items}
    for attr in ("cursor", "limit", "next", "has_more", "cursor_from_item"):
        value = getattr(found, attr)
        if value is not None:
            pag[attr] = value
    draft.intent["pagination"] = pag
    draft.eol["pagination"] = "decide" if found.doubt else "detected; check it"
    if found.doubt:
        draft.notes.append(f"decide [{PAGINATION_UNDECIDED.id}]: {found.doubt}; then delete this mark")
    return _items_schema(response, found.items)


def _items_schema(response: Any, dotted: str) -> Any:
    node = response
    for part in [p for p in dotted.split(".") if p]:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or part not in props:
            return None
        node = props[part]
    return node


def _first_drafts(doc: SpecDocument, api: str) -> tuple[_Drafter, list[Draft], list[LeftOut]]:
    drafter, operations = _Drafter(doc, api), list_operations(doc)  # one draft per operation but TRACE
    id_counts = dict(Counter(op.operation_id for op in operations if op.operation_id))
    left_out = [
        LeftOut(
            op.key,
            "operation-method-unsupported: TRACE operations are not turned into tools",
            "none: toolgen makes no tool of a TRACE",
        )
        for op in operations
        if op.method == "TRACE"
    ]
    return drafter, [drafter.draft(op, id_counts) for op in operations if op.method != "TRACE"], left_out


def drafted_effects(doc: SpecDocument, api: str) -> list[tuple[Operation, str, str]]:
    """(operation, key, effect) per intent `draft_intent_map` drafts; cheap: the map is not lowered."""
    return [(d.op, d.key, str(d.intent["effect"])) for d in _first_drafts(doc, api)[1]]


def drafted_intents(doc: SpecDocument, api: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Operation pointer (``/paths/~1x/get``) -> (key, intent) as `draft_intent_map` drafts them,
    before lint's marks: ``operation``, ``effect``, ``permission``, ``toolset``, and for a write
    ``hide`` (a too-large body's largest optional members), ``approval`` and ``idempotency``. The
    dicts are fresh; the map is not lowered."""
    return {d.op.pointer: (d.key, d.intent) for d in _first_drafts(doc, api)[1]}


def draft_intent_map(
    doc: SpecDocument,
    *,
    api: str,
    spec_ref: str,
    out: Path,
    command: str,
    decisions: bool = True,
    spec_diagnostics: Sequence[Diagnostic] = (),
) -> InitResult:
    """The draft intent map of `doc` (see the module docstring). `spec_ref` is the `spec:` value
    (relative to `out`); `command` is quoted in the header comment. `decisions=False` skips linting
    the draft (no `# decide [RULE]` notes, `InitResult.decisions` empty). `spec_diagnostics` are
    those of loading `doc` (`load_spec`'s sink): `toolgen lint` reports them too, so each at error
    level under --strict is a decision of the draft as well."""
    drafter, drafts, left_out = _first_drafts(doc, api)
    data: dict[str, Any] = {
        "toolgen": 1,
        "spec": spec_ref,
        "api": {"name": api},
        "tools": {d.key: d.intent for d in drafts},
    }
    toolsets = _toolsets(doc, drafts)
    if toolsets:
        data["toolsets"] = toolsets
    lowering, by_key = DraftLowering(doc, api, out), {d.key: d for d in drafts}
    for _ in range(3):
        errors = lower_errors(lowering, data)
        if not errors:
            break
        retried = False
        for key, (message, hint) in errors.items():
            draft = by_key[key]
            idem = draft.intent.get("idempotency")
            if message.startswith("idempotency-key-collision") and idem and idem["key"] != KEY_CANDIDATES[-1]:
                idem["key"] = KEY_CANDIDATES[KEY_CANDIDATES.index(idem["key"]) + 1]
                retried = True
                continue
            left_out.append(LeftOut(draft.op.key, message, hint, key, draft.intent))
            del by_key[key], data["tools"][key]
        drafts = list(by_key.values())
        if not retried:
            break
    if drafts:
        for key, note in fit_descriptions(lowering, data, by_key).items():
            by_key[key].notes.append(note)
    found = (
        decisions_of(lowering, data, list(spec_diagnostics), {d.op.pointer: d.key for d in drafts})
        if decisions
        else []
    )
    if decisions and drafter.unscoped:
        hint = (
            "set `permission:` of those intents to what an actor must hold (or keep these names, granted to "
            "your actors); then delete this mark"
        )
        found.insert(0, ("", PERMISSION_UNDECIDED.id, _unscoped_message(drafter.unscoped), hint))
    for key, code, message, hint in found:
        if key in by_key:
            by_key[key].notes.append(one_line(f"decide [{code}]: {message}; {hint}")[:MARK_CHARS])
    map_decisions = [
        f"decide [{code}]: {message}; {hint}" for key, code, message, hint in found if key not in by_key
    ]
    text = render_draft(doc, drafts, data, left_out, command, map_decisions)
    skipped = [(item.operation, item.reason) for item in left_out]
    marked = [(key if key in by_key else "", code, message) for key, code, message, _ in found]
    if decisions:  # the effects in doubt are marked as they are drafted (lint reports them from the marks)
        marked += [
            (d.key, rule, note.split(": ", 1)[1])
            for d in drafts
            for note in d.notes
            for rule in (EFFECT_UNDECIDED.id, PAGINATION_UNDECIDED.id)
            if note.startswith(f"decide [{rule}]")
        ]
    return InitResult(
        text, api, len(drafts), skipped, sorted(set(auth_secrets(doc, api).values())), left_out, marked
    )


def _unscoped_message(own: list[str]) -> str:
    names = " and ".join(f"`{name}`" for name in sorted(set(own)))
    return (
        f"{len(own):,} operation{'s' if len(own) != 1 else ''} protected by an OAuth scheme ask{'' if len(own) != 1 else 's'} "
        f"for no scope, so the draft gives {'them' if len(own) != 1 else 'it'} this map's own permission "
        f"{names} (each has a `permission:` note)"
    )


def _toolsets(doc: SpecDocument, drafts: list[Draft]) -> dict[str, dict[str, str]]:
    """One toolset per first tag the drafts use (named by `toolset_from_tag`, described by the spec's tag
    description and the resources of its operations, `with_resources`): `eager` when the draft is small,
    else `deferred` (found by tool search), for the human to choose which toolsets a model sees up front."""
    loading = "eager" if len(drafts) <= EAGER_INTENTS else "deferred"
    paths: dict[str, list[str]] = {}  # each toolset's paths in draft order, in one pass (~1,000 toolsets)
    first: dict[str, Draft] = {}
    for d in (d for d in drafts if isinstance(d.intent.get("toolset"), str)):
        paths.setdefault(d.intent["toolset"], []).append(d.op.url_path)
        first.setdefault(d.intent["toolset"], d)
    out = {
        name: {"description": with_resources(d.toolset_description, paths[name]), "loading": loading}
        for name, d in first.items()
    }
    return dict(sorted(out.items()))


def _toolset_description(doc: SpecDocument, tag: str) -> str:
    """`tag_description` with Markdown (emphasis, code marks) made plain, as the draft's comments show tags."""
    return tag_description(
        doc.data, tag, lambda text: " ".join(plain_comment_lines(text, width=100_000, max_lines=1))
    )


__all__ = [
    "InitResult",
    "api_name_from",
    "draft_intent_map",
    "drafted_effects",
    "drafted_intents",
    "renamed_keyword",
]


def _param_types(params: list[dict[str, Any]]) -> dict[str, str]:
    """JSON type of each query parameter that declares a single one (for pagination detection)."""
    out: dict[str, str] = {}
    for p in params:
        schema = p.get("schema")
        if p.get("in") == "query" and isinstance(schema, dict) and isinstance(schema.get("type"), str):
            out[str(p.get("name"))] = schema["type"]
    return out
