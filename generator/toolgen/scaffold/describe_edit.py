"""Write drafted search expansions into an intent map's text, every other byte kept.

Input: the map's text, the drafts by intent key (`Expansion`) and the review mark's text. Output: the
text with, in each drafted intent's block, the fields it lacks (`examples` as a block sequence,
`use_when`, `not_for`; with ``replace`` its own ones first removed) as double-quoted scalars after the
block's last line, and a ``# decide [examples-unreviewed]: ...`` comment line right above the
intent's key (`toolgen.review.lint.marks`: `toolgen lint` reports it until a human deletes it). A
tool of an `include` group has no block of its own: its requests become an entry of the top-level
`examples:` (operationId or ``METHOD /path`` -> requests, a double-quoted key), added after that
mapping's last entry (or as a new mapping at the end of the map), each entry marked the same way.
A toolset's drafted `examples` go into its block under `toolsets:` as an intent's do, marked above
the toolset's key; a toolset written as a one-line flow mapping (as `toolgen init` drafts them:
``name: {description: ..., loading: deferred}``) gets ``, examples: [...]`` before its closing brace.

Why text and not a YAML dump: ruamel.yaml's round trip keeps comments but re-flows a user's wrapped
flow sequences; a splice changes nothing it does not add. The text is found through the round-trip
tree's line numbers (``lc``), and the result is read back: its data must equal the old data with
exactly the drafted fields set, or that intent is not written (an intent other intents merge or
alias, a block scalar that keeps trailing lines). An intent written in flow style is not written.
A value is written as a JSON string, which YAML reads as the same double-quoted scalar; the caller
has refused control and format characters in it. Pure.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..review.lint.rules import EXAMPLES_UNREVIEWED
from ..yaml_text import plain_yaml, read_yaml

EXPANSION_FIELDS = ("examples", "use_when", "not_for")


@dataclass(frozen=True)
class Expansion:
    """The drafted expansions of one intent: requests in users' words and two optional lines."""

    examples: tuple[str, ...]
    use_when: str | None = None
    not_for: str | None = None

    def fields(self) -> dict[str, Any]:
        """The fields to write: those drafted (`examples` as a list)."""
        out: dict[str, Any] = {"examples": list(self.examples)} if self.examples else {}
        out.update(
            {k: v for k, v in (("use_when", self.use_when), ("not_for", self.not_for)) if v is not None}
        )
        return out


#: where YAML (and ruamel's line numbers) break lines: after LF, CRLF or a lone CR; never at the
#: other breaks `str.splitlines` knows (U+2028, U+2029, U+0085), which ruamel does not count
_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def _lines(text: str) -> list[str]:
    """`text` cut into lines as YAML counts them, each with its line break."""
    return [line for line in _LINE_END.split(text) if line]


def _newline(line: str) -> str:
    """The line break `line` ends with (LF when none)."""
    return "\r\n" if line.endswith("\r\n") else "\r" if line.endswith("\r") else "\n"


def _block(node: Any) -> bool:
    """Whether `node` is a non-empty block mapping of a round-trip tree."""
    fa = getattr(node, "fa", None)
    return (
        isinstance(node, dict)
        and bool(node)
        and hasattr(node, "lc")
        and fa is not None
        and not fa.flow_style()
    )


_MARKER = re.compile(r"(?:\.\.\.|---)(?:[ \t]|\r?\n|\r|$)")


def _document_end(lines: list[str]) -> int:
    """The index of the line that ends the map's document (``...``, or the ``---`` that starts a
    next one) after its content, or the line count: what is drafted goes above it."""
    content = False
    for i, line in enumerate(lines):
        if content and _MARKER.match(line):
            return i
        stripped = line.strip()
        content = content or bool(stripped and not stripped.startswith("#") and not _MARKER.match(line))
    return len(lines)


def _own(node: Any) -> list[Any]:
    """The keys written in `node`'s own text: not those a merge key (``<<: *base``) brings, which
    have no line of their own."""
    written = node.lc.data or {}
    return [k for k in node if k in written]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_trailer(line: str, child_indent: int) -> bool:
    """A blank line, or a comment no deeper than the intent's members (it belongs to what follows)."""
    stripped = line.strip()
    return not stripped or (stripped.startswith("#") and _indent(line) <= child_indent)


def _content_end(lines: list[str], start: int, stop: int, child_indent: int) -> int:
    """The index after the last line of [start, stop) that is not a trailer."""
    end = stop
    while end > start + 1 and _is_trailer(lines[end - 1], child_indent):
        end -= 1
    return end


def _block_bounds(root: Any, section: str, line_count: int) -> dict[str, tuple[int, int]]:
    """Key of an entry of `section` (``tools`` or ``toolsets``) -> (its key's line, the line where the
    next entry or top-level key starts), 0-based."""
    tools = root[section]
    top = sorted(root.lc.key(k)[0] for k in _own(root))
    tools_line = root.lc.key(section)[0]
    tools_end = next((n for n in top if n > tools_line), line_count)
    starts = sorted((tools.lc.key(k)[0], str(k)) for k in _own(tools))
    return {
        key: (line, starts[i + 1][0] if i + 1 < len(starts) else tools_end)
        for i, (line, key) in enumerate(starts)
    }


def _written(node: Any, drafted: Mapping[str, Any], replace: bool) -> dict[str, Any]:
    """The drafted fields to write into `node`: all with `replace`, else those it lacks (absent, null
    or an empty list: what `toolgen.scaffold.describe` counts as no expansion; its line is replaced)."""
    return {k: v for k, v in drafted.items() if replace or node.get(k) in (None, [])}


def _edit_intent(
    lines: list[str], node: Any, bounds: tuple[int, int], fields: Mapping[str, Any], mark: str | None
) -> list[str]:
    """`lines` with one intent's fields written (see the module docstring)."""
    key_line, stop = bounds
    members = sorted((node.lc.key(k)[0], node.lc.key(k)[1], str(k)) for k in _own(node))
    child_indent = members[0][1]
    pad = " " * child_indent
    out = list(lines)
    end = _content_end(out, key_line, stop, child_indent)
    newline = _newline(out[key_line])
    added: list[str] = []
    for name, value in fields.items():
        if isinstance(value, list):
            added += [
                f"{pad}{name}:{newline}",
                *(f"{pad}  - {json.dumps(v, ensure_ascii=False)}{newline}" for v in value),
            ]
        else:
            added.append(f"{pad}{name}: {json.dumps(value, ensure_ascii=False)}{newline}")
    if end > 0 and not out[end - 1].endswith(("\n", "\r")):
        out[end - 1] += newline
    out[end:end] = added
    removed = [i for i, (line, _, name) in enumerate(members) if name in fields and name in EXPANSION_FIELDS]
    for i in sorted(removed, reverse=True):  # a replaced field's own lines, below the new ones' place first
        first = members[i][0]
        after = members[i + 1][0] if i + 1 < len(members) else end
        del out[first : _content_end(out, first, after, child_indent)]
    return _marked(out, key_line, mark)


def _marked(lines: list[str], key_line: int, mark: str | None) -> list[str]:
    """`lines` with the review mark above line `key_line` (an entry's key), unless one is there."""
    above = lines[key_line - 1] if key_line > 0 else ""
    if mark is not None and f"# decide [{EXAMPLES_UNREVIEWED.id}]" not in above:
        newline = _newline(lines[key_line])
        lines.insert(
            key_line, f"{' ' * _indent(lines[key_line])}# decide [{EXAMPLES_UNREVIEWED.id}]: {mark}{newline}"
        )
    return lines


def _entry_lines(ref: str, texts: list[str], pad: str, mark: str | None, newline: str) -> list[str]:
    out = [f"{pad}# decide [{EXAMPLES_UNREVIEWED.id}]: {mark}{newline}"] if mark is not None else []
    out.append(f"{pad}{json.dumps(ref, ensure_ascii=False)}:{newline}")
    return out + [f"{pad}  - {json.dumps(t, ensure_ascii=False)}{newline}" for t in texts]


def _edit_examples(
    lines: list[str], root: Any, entries: Mapping[str, list[str]], mark: str | None, doc_end: int
) -> list[str]:
    """`lines` with `entries` (operation reference -> requests) added to the top-level `examples:`
    mapping (after its last entry), or with that mapping added at the end of the map's document
    (line `doc_end`)."""
    out = list(lines)
    newline = _newline(out[0]) if out else "\n"
    if doc_end > 0 and not out[doc_end - 1].endswith(("\n", "\r")):
        out[doc_end - 1] += newline
    if "examples" not in root:
        added = [f"examples:{newline}"]
        for ref in sorted(entries):
            added += _entry_lines(ref, entries[ref], "  ", mark, newline)
        out[doc_end:doc_end] = added
        return out
    node = root["examples"]
    start = root.lc.key("examples")[0]
    stop = next((n for n in sorted(root.lc.key(k)[0] for k in _own(root)) if n > start), doc_end)
    indent = node.lc.key(_own(node)[0])[1]
    end = _content_end(out, start, stop, indent)
    added = []
    for ref in sorted(entries):
        added += _entry_lines(ref, entries[ref], " " * indent, mark, newline)
    out[end:end] = added
    return out


#: an edit of an entry's block: (``tools`` or ``toolsets``, the entry's key) -> the fields written
Edits = Mapping[tuple[str, str], Mapping[str, Any]]


def _shown_key(section: str, key: str) -> str:
    """How a drafted entry is named to the caller: an intent by its key, a toolset ``toolsets.KEY``."""
    return key if section == "tools" else f"{section}.{key}"


def _expected(old: Any, edits: Edits, entries: Mapping[str, list[str]]) -> Any:
    new = copy.deepcopy(old)
    for (section, key), fields in edits.items():
        new[section][key].update(copy.deepcopy(dict(fields)))
    if entries:
        new.setdefault("examples", {}).update(copy.deepcopy(dict(entries)))
    return new


def _apply(text: str, root: Any, edits: Edits, entries: Mapping[str, list[str]], mark: str | None) -> str:
    lines = _lines(text)
    doc_end = _document_end(lines)
    # (first line, (section, key) of an entry, or None for the top-level examples)
    regions: list[tuple[int, tuple[str, str] | None]] = []
    bounds: dict[str, dict[str, tuple[int, int]]] = {}
    for section in sorted({section for section, _ in edits}):
        bounds[section] = _block_bounds(root, section, doc_end)
    regions += [(bounds[section][key][0], (section, key)) for section, key in edits]
    if entries:
        regions.append((root.lc.key("examples")[0] if "examples" in root else doc_end, None))
    for _, at in sorted(regions, key=lambda r: r[0], reverse=True):  # bottom up: lines above stay put
        if at is not None:
            section, key = at
            node = root[section][key]
            if _block(node):
                lines = _edit_intent(lines, node, bounds[section][key], edits[at], mark)
            else:
                lines = _edit_flow(lines, node, bounds[section][key][0], edits[at], mark)
        else:
            lines = _edit_examples(lines, root, entries, mark, doc_end)
    return "".join(lines)


def _same(text: str, expected: Any) -> bool:
    try:
        return bool(plain_yaml(read_yaml(text)) == expected)
    except Exception:  # noqa: BLE001 - ruamel raises several unrelated error types for text it cannot read
        return False


def _plan_blocks(
    root: Any,
    section: str,
    drafts: Mapping[str, Expansion],
    replace: bool,
    skipped: dict[str, str],
    lines: list[str] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """(`section`, key) -> the fields to write into that entry's block; an entry that is not a block
    mapping of its own (nor, under ``toolsets``, a one-line flow mapping of the map's `lines`) goes
    into `skipped`."""
    entries = root.get(section)
    edits: dict[tuple[str, str], dict[str, Any]] = {}
    what = "intent" if section == "tools" else "toolset"
    for key, draft in drafts.items():
        node = entries.get(key) if entries is not None and _block(entries) else None
        if node is not None and key not in _own(entries):
            skipped[_shown_key(section, key)] = (
                f"its {what} is merged into `{section}:` from elsewhere (write its expansions by hand)"
            )
            continue
        flow = lines is not None and _one_line_flow(entries, key, lines)
        if not _block(node) and not flow:
            skipped[_shown_key(section, key)] = (
                f"its {what} is not a block mapping"
                + (" nor a one-line flow mapping" if lines is not None else "")
                + " (write its expansions by hand)"
            )
            continue
        fields = _written(node, draft.fields(), replace)
        if flow and set(fields) & set(node or ()):
            skipped[_shown_key(section, key)] = (
                f"its {what} is a flow mapping that has them already (replace them by hand)"
            )
            continue
        if fields:
            edits[(section, key)] = fields
    return edits


def _one_line_flow(entries: Any, key: str, lines: list[str]) -> bool:
    """Whether the entry `key` of `entries` is a non-empty flow mapping on its key's line alone."""
    node = entries.get(key)
    fa, at = getattr(node, "fa", None), getattr(node, "lc", None)
    line = entries.lc.key(key)[0]
    return (
        isinstance(node, dict)
        and bool(node)
        and fa is not None
        and at is not None
        and fa.flow_style()
        and at.line == line
        and line < len(lines)
        and _flow_end(lines[line], at.col) is not None
    )


def _flow_end(line: str, start: int) -> int | None:
    """The index in `line` of the ``}`` closing the flow mapping whose ``{`` is at `start`, or None
    when it does not close on this line. A quote opens a quoted scalar only where a scalar starts."""
    depth, quote, i = 0, "", start
    while i < len(line):
        c = line[i]
        if quote:
            escaped = c == "\\" if quote == '"' else c == "'" and line[i + 1 : i + 2] == "'"
            if escaped:  # a backslash escape, or a doubled single quote: skip the next character
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'" and line[:i].rstrip()[-1:] in ("{", "[", ",", ":"):
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i if c == "}" else None
        i += 1
    return None


def _edit_flow(
    lines: list[str], node: Any, key_line: int, fields: Mapping[str, Any], mark: str | None
) -> list[str]:
    """`lines` with `fields` added inside a one-line flow mapping, before its closing brace (nothing
    changed when the brace is not on the line: the caller's read-back then leaves the entry out)."""
    out = list(lines)
    line = out[key_line]
    end = _flow_end(line, node.lc.col)
    if end is None:
        return out
    added = "".join(f", {name}: {json.dumps(value, ensure_ascii=False)}" for name, value in fields.items())
    out[key_line] = line[:end].rstrip(" ") + added + line[end:]
    return _marked(out, key_line, mark)


def _plan(
    root: Any, drafts: Mapping[str, Expansion], refs: Mapping[str, str], replace: bool
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[str, list[str]], dict[str, str]]:
    """((``tools``, intent key) -> fields to write, operation reference -> requests, intent key -> why
    not written)."""
    examples = root.get("examples", {}) if isinstance(root, dict) else None
    entries: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    own: dict[str, Expansion] = {}
    for key, draft in drafts.items():
        if key in refs:
            writable = _block(examples) and bool(_own(examples))
            if not isinstance(examples, dict) or ("examples" in root and not writable):
                skipped[key] = (
                    "the map's top-level `examples:` is not a block mapping (write its requests by hand)"
                )
            elif refs[key] in examples:
                skipped[key] = f"the top-level `examples:` has {refs[key]!r} already"
            elif draft.examples:
                entries[refs[key]] = list(draft.examples)
            continue
        own[key] = draft
    return _plan_blocks(root, "tools", own, replace, skipped), entries, skipped


def splice(
    text: str,
    drafts: Mapping[str, Expansion],
    mark: str | None,
    *,
    replace: bool = False,
    refs: Mapping[str, str] | None = None,
    toolsets: Mapping[str, Expansion] | None = None,
) -> tuple[str, dict[str, str]]:
    """`text` with the `drafts` written and each draft marked (`mark`: the mark's text; None: no mark),
    and the drafts not written with why (see the module docstring). A draft whose key `refs` maps to
    an operation reference (a tool of an `include` group) is written as that reference's entry of the
    top-level `examples:` (its requests only); any other is an intent of `tools:`, where, without
    `replace`, a field the intent already has is kept. `toolsets`: drafts of toolsets by name (their
    `examples` only), written into the toolsets' blocks the same way and, when not written, named
    ``toolsets.NAME`` with why."""
    toolsets = toolsets or {}
    root = read_yaml(text)
    if not isinstance(root, dict):
        why = "the map is not a mapping"
        return text, {**dict.fromkeys(drafts, why), **{_shown_key("toolsets", k): why for k in toolsets}}
    old = plain_yaml(root)
    edits, entries, skipped = _plan(root, drafts, refs or {}, replace)
    edits.update(_plan_blocks(root, "toolsets", toolsets, replace, skipped, _lines(text)))
    new = _apply(text, root, edits, entries, mark)
    if _same(new, _expected(old, edits, entries)):
        return new, skipped
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for at in sorted(edits):  # one at a time: find the entries whose edit changes something else
        trial = {**kept, at: edits[at]}
        if _same(_apply(text, root, trial, {}, mark), _expected(old, trial, {})):
            kept = trial
        else:
            skipped[_shown_key(*at)] = (
                "writing it into the text would change more than its expansions (an alias or a merge of "
                "it, or a `|+` block scalar at its end): write its expansions by hand"
            )
    if entries and not _same(_apply(text, root, kept, entries, mark), _expected(old, kept, entries)):
        by_ref = {ref: key for key, ref in (refs or {}).items()}
        skipped.update(
            {
                by_ref[ref]: "writing the top-level `examples:` would change more than its entries"
                for ref in entries
            }
        )
        entries = {}
    return _apply(text, root, kept, entries, mark), skipped


__all__ = ["EXPANSION_FIELDS", "Expansion", "splice"]
