"""The text a model reads: tool titles and descriptions, argument descriptions cut to a budget.

Input: an operation's summary and description (or the intent's own), its policy row. Output: one
line of description per tool that starts with what the tool does in the API's words (the summary,
else a line made from the method and path, `derived_summary`) and then says what the call does
(read-only, writes, deletes; approval; how to page), titles of at most 80 characters, description
text with Markdown links reduced to their text and cut at a sentence end, and argument schemas whose
nested members keep no long descriptions (`trim_member_descriptions`). The near neighbours a tool is
not for are added after all tools are lowered (`toolgen.compile.lower.routing`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..ir import Mode, PolicyRow
from ..operations import Operation
from .context import Ctx
from .resolve import ResolvedIntent


def title_of(op: Operation) -> str | None:
    summary = op.node.get("summary")
    if isinstance(summary, str) and summary.strip():
        text = " ".join(summary.split())
        return text if len(text) <= 80 else text[:79].rstrip() + "…"
    return None


def expansion_texts(texts: Iterable[str]) -> tuple[str, ...]:
    """`texts` (intent-map `examples`) with whitespace collapsed, each once, in order."""
    return tuple(dict.fromkeys(" ".join(t.split()) for t in texts if t.strip()))


def operation_examples(examples: Mapping[str, Sequence[str]], op: Operation) -> list[str]:
    """The requests the intent map's top-level `examples` gives for `op`: under its operationId, its
    ``METHOD /path`` (the method in any case) or its synthetic id, in that order."""
    if not examples:
        return []
    routes = _routes(tuple(examples)).get(op.key, ())
    keys = [op.operation_id, op.key, *(k for k in routes if k != op.key), op.synthetic_id]
    return [text for key in dict.fromkeys(k for k in keys if k) for text in examples.get(key, ())]


@lru_cache(maxsize=8)
def _routes(keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The keys of a top-level `examples` that read ``METHOD /path``, by ``METHOD /path`` with the
    method in upper case and the path stripped (`Operation.key`'s form), each group in map order:
    made once per map, not once per operation."""
    out: dict[str, list[str]] = {}
    for key in keys:
        method, _, path = key.partition(" ")
        if path.strip():
            out.setdefault(f"{method.upper()} {path.strip()}", []).append(key)
    return {route: tuple(found) for route, found in out.items()}


def guidance(use_when: str | None, not_for: str | None) -> str:
    """The sentences the intent map's `use_when` and `not_for` add to a tool's description, each on
    one line of its own: `` Use when: <use_when>. Not for: <not_for>.`` ("" when neither is set).
    Tool search drops the ``Not for:`` sentence from what it indexes (`toolgen.search.text_index`)."""
    out = ""
    for label, text in (("Use when", use_when), ("Not for", not_for)):
        if text:
            line = " ".join(text.split())
            out += f" {label}: {line if line[-1] in '.!?' else line + '.'}"
    return out


def with_examples(text: str, examples: Sequence[str], limit: int) -> str:
    """`text` and `` Examples: "<request>"; "<request>".``: as many of `examples` (in order) as keep
    the whole within `limit` characters, none when the first does not fit. Hosted tool search reads
    descriptions (Anthropic's BM25 and regex tool search, OpenAI's `tool_search`), so the requests help
    it too; `toolgen.search.text_index` drops the sentence from the description it indexes (it indexes the
    requests in their own field)."""
    shown: list[str] = []
    for example in examples:
        if len(text) + len(examples_sentence([*shown, example])) > limit:
            break
        shown.append(example)
    return text + examples_sentence(shown)


def examples_sentence(examples: Sequence[str]) -> str:
    """`` Examples: "a"; "b".`` for `examples` ("" for none)."""
    return f" Examples: {'; '.join(chr(34) + e + chr(34) for e in examples)}." if examples else ""


def summary_of(ctx: Ctx, op: Operation, intent: ResolvedIntent, limit: int, examples: Sequence[str]) -> str:
    """The text a tool's description starts with: the intent's `description`, else the operation's
    summary and the first paragraph of its description (cut to `limit` characters less what the
    intent's `use_when` / `not_for` add, `guidance`), then that guidance, whole, then the requests of
    `examples` (the tool's requests as `toolgen.compile.lower.toolsets.place` gathered them: the
    intent's and the map's top-level ones for its operation) that fit within `limit` (`with_examples`)."""
    extra = guidance(intent.use_when, intent.not_for)
    if intent.description:
        return with_examples(" ".join(intent.description.split()) + extra, examples, limit)
    whole = limit
    limit = max(limit - len(extra), 80)
    parts = []
    summary = op.node.get("summary")
    if isinstance(summary, str) and summary.strip():
        parts.append(" ".join(summary.split()).rstrip(".") + ".")
    description = op.node.get("description")
    if isinstance(description, str) and description.strip():
        first = description.strip().split("\n\n", 1)[0]
        first = " ".join(first.split())
        if first and first.rstrip(".") + "." not in parts:
            parts.append(first)
    text = " ".join(parts) or derived_summary(op.method, op.url_path)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return with_examples(text + extra, examples, whole)


def derived_summary(method: str, path: str) -> str:
    """The first line of a tool whose operation has no summary and no description: what the call does
    in the words of its path (the action its method takes on the path's last literal segment, the
    parent it sits under), then the request itself: ``GET /ipam/vrfs/{id}/`` -> "Get one vrf by
    id, under ipam: GET /ipam/vrfs/{id}/." A last literal segment after a parameter that is not a
    POST names an action (``POST /x/{id}/cancel`` -> "Cancel, under x: POST /x/{id}/cancel.")."""
    segments = [s for s in path.split("/") if s]
    literal = [i for i, s in enumerate(segments) if not s.startswith("{")]
    if not literal:
        return f"Calls {method} {path}."
    last = literal[-1]
    noun = _words(segments[last])
    item = segments[-1].startswith("{")
    under = ", under " + " ".join(_words(segments[i]) for i in literal[:-1][-2:]) if len(literal) > 1 else ""
    param = segments[-1].strip("{}") if item else ""
    verb = {"GET": "List", "POST": "Create", "PUT": "Replace", "PATCH": "Update", "DELETE": "Delete"}.get(
        method
    )
    if verb is None:
        return f"Calls {method} {path}."
    if item:
        verb = {"List": "Get", "Create": "Create"}.get(verb, verb)
        head = f"{verb} one {_singular(noun)} by {param}"
    elif method == "POST" and last > 0 and segments[last - 1].startswith("{"):
        head = noun[:1].upper() + noun[1:]
    elif method in ("PUT", "PATCH", "DELETE"):
        head = f"{verb} several {noun}"
    else:
        head = f"{verb} {noun}"
    return f"{head}{under}: {method} {path}."


def _singular(words: str) -> str:
    """The last word of `words` made singular by its English ending (ies, ses/xes/ches/shes, s)."""
    head, _, word = words.rpartition(" ")
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    return f"{head} {word}" if head else word


def _words(segment: str) -> str:
    return " ".join(w for w in re.split(r"[-_.~]+", segment) if w)


def describe_tool(summary: str, mode: Mode, row: PolicyRow, record: PolicyRow | None) -> str:
    """The tool description: the intent's text, then what the call does (effect, approval, pages)."""
    if mode == "read":
        tail = "Read-only."
        if row.pagination is not None:
            tail += f" Pages: pass next_cursor back as {row.pagination.cursor_arg}."
        return f"{summary} {tail}"
    assert record is not None
    verb = "Destructive" if record.effect == "destructive" else "Writes"
    if mode == "preview":
        then = (
            f"Then call {record.tool} with the preview_id."
            if record.record_arguments == "preview"
            else f"Then call {record.tool} with the same arguments."
        )
        gate = (
            "A human must approve the returned preview_id before " + record.tool + " runs."
            if record.approval == "required"
            else then
        )
        if record.approval_when is not None:  # the condition itself is not shown: a model could aim below it
            gate = (
                f"When its approval_required is true, a human must approve the returned preview_id before "
                f"{record.tool} runs; else {then.removeprefix('Then ')}"
            )
        return (
            f"PREVIEW ONLY, never writes: returns the exact request {record.tool} would send and a "
            f"preview_id. {gate} {record.tool}: {first_sentence(summary)}"
        )
    if row.record_arguments == "preview":
        gate = f"Sends exactly the request previewed by {row.pair}: pass its preview_id" + (
            ", which a human must approve." if row.approval == "required" else "."
        )
        if row.approval_when is not None:
            gate = (
                f"Sends exactly the request previewed by {row.pair}: pass its preview_id (approved by a "
                "human when the preview says approval_required)."
            )
    else:
        gate = (
            f"Needs human approval of the preview_id from {row.pair} (same arguments)."
            if row.approval == "required"
            else "No approval needed."
        )
        if row.approval_when is not None:
            gate = (
                f"Needs human approval of the preview_id from {row.pair} (same arguments) when that preview "
                "says approval_required."
            )
    return f"{summary} {verb} ({row.method}). {gate}"


_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^()]*\))*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_(\"'])")


def cap_text(text: str, limit: int) -> str:
    """Description text for a catalog: Markdown links reduced to their text (URLs cost tokens and
    help no model), whitespace collapsed, cut at a sentence end within `limit` characters when one
    exists, else at `limit` with an ellipsis."""
    text = " ".join(_MD_LINK.sub(r"\1", text).split())
    if len(text) <= limit:
        return text
    cut = [m.start() for m in _SENTENCE_END.finditer(text) if m.start() <= limit]
    if cut and cut[-1] >= limit // 3:
        return text[: cut[-1]]
    return text[: limit - 1].rstrip() + "…"


def first_sentence(text: str) -> str:
    m = _SENTENCE_END.search(text)
    return text[: m.start()] if m else text


#: schema keywords whose value is one subschema a step deeper (a member) or at the same level (`_SAME`)
_MEMBER_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SAME = ("items", "additionalProperties", "unevaluatedProperties", "contains", "not", "if", "then", "else")
_SAME_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def trim_member_descriptions(schema: dict[str, Any], limit: int, keep_depth: int = 0) -> dict[str, Any]:
    """An argument's schema with the descriptions of its members kept short: the argument's own
    description cut to `limit` characters (`cap_text`), each member's down to `keep_depth` levels
    (1: the argument's members, whether of an object or of an array's items) cut to its first
    sentence within `limit`, and deeper members' dropped (the default, 0: only the argument's own
    description stays; `defaults.member_descriptions` keeps one level). A new tree; `schema` is not
    changed. Why: a model picks a tool by its name and description and fills nested members from
    their names and types; a spec's long member descriptions (DocuSign's envelope bodies hold a
    million characters of them) cost catalog tokens and make a large write tool match every
    request in a provider's own tool search (BM25 over names and descriptions)."""
    out: dict[str, Any] = _trim(schema, 0, limit, keep_depth)
    return out


def _trim(node: Any, depth: int, limit: int, keep: int) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            if depth == 0:
                out[key] = cap_text(value, limit)
            elif depth <= keep:
                text = first_sentence(" ".join(_MD_LINK.sub(r"\1", value).split()))
                if text:
                    out[key] = cap_text(text, limit)
        elif key in _MEMBER_MAPS and isinstance(value, dict):
            out[key] = {k: _trim(v, depth + 1, limit, keep) for k, v in value.items()}
        elif key in _SAME:
            out[key] = _trim(value, depth, limit, keep)
        elif key in _SAME_LISTS and isinstance(value, list):
            out[key] = [_trim(v, depth, limit, keep) for v in value]
        else:
            out[key] = value
    return out
