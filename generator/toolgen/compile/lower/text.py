"""The text a model reads: tool titles and descriptions, argument descriptions cut to a budget.

Input: an operation's summary and description (or the intent's own), its policy row. Output: one
line of description per tool that ends by saying what the call does (read-only, writes, deletes;
approval; how to page), titles of at most 80 characters, and description text with Markdown links
reduced to their text and cut at a sentence end.
"""

from __future__ import annotations

import re

from ..intent import ToolIntent
from ..ir import Mode, PolicyRow
from ..operations import Operation
from .context import Ctx


def title_of(op: Operation) -> str | None:
    summary = op.node.get("summary")
    if isinstance(summary, str) and summary.strip():
        text = " ".join(summary.split())
        return text if len(text) <= 80 else text[:79].rstrip() + "…"
    return None


def summary_of(ctx: Ctx, op: Operation, intent: ToolIntent, limit: int) -> str:
    if intent.description:
        return " ".join(intent.description.split())
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
    text = " ".join(parts) or f"Calls {op.method} {op.url_path}."
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


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
        then = (f"Then call {record.tool} with the preview_id." if record.record_arguments == "preview"
                else f"Then call {record.tool} with the same arguments.")
        gate = ("A human must approve the returned preview_id before " + record.tool + " runs."
                if record.approval == "required" else then)
        return (f"PREVIEW ONLY, never writes: returns the exact request {record.tool} would send and a "
                f"preview_id. {gate} {record.tool}: {first_sentence(summary)}")
    if row.record_arguments == "preview":
        gate = (f"Sends exactly the request previewed by {row.pair}: pass its preview_id"
                + (", which a human must approve." if row.approval == "required" else "."))
    else:
        gate = (f"Needs human approval of the preview_id from {row.pair} (same arguments)."
                if row.approval == "required" else "No approval needed.")
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
