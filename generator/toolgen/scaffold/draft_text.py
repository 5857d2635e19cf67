"""`toolgen init SPEC`, its text: a drafted intent map -> the YAML text a human edits.

Input: the drafts of `toolgen.scaffold.init` (`Draft`: one operation's intent with the comment lines
above it and its end-of-line comments; `LeftOut`: an operation the draft leaves out), the map's data
(`spec`, `api`, `toolsets`) and the loaded `SpecDocument`. Output: the intent map as text
(ruamel.yaml, round-trip, with comments): a header saying what to review, an `auth:` block naming
the runtime secret of every security scheme, the intents under `tools:` grouped by first tag (each
group headed by its tag's description as plain, wrapped comment lines), the operations left out
listed as comments with their intents ready to uncomment, and the `toolsets:` block. Nested
mappings and lists of an intent are written in flow style; a string holding a YAML indicator is
double-quoted inside a flow mapping. Raises nothing of its own.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

from ..compile.load import SpecDocument
from ..compile.lower.security import secret_name
from ..compile.operations import Operation

#: a `# decide [RULE]` mark is one comment line of at most this many characters (the longest rule
#: message and hint fit)
MARK_CHARS = 1000


@dataclass
class Draft:
    """One operation's intent while the map is drafted."""

    op: Operation
    key: str
    intent: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # comment lines above the intent
    eol: dict[str, str] = field(default_factory=dict)  # key -> end-of-line comment
    toolset_description: str = ""


@dataclass(frozen=True)
class LeftOut:
    """An operation the draft leaves out: why (the build's diagnostic), what to do to include it (its
    hint), and the intent drafted for it (None when no intent can be drafted)."""

    operation: str
    reason: str
    remedy: str
    key: str | None = None
    intent: dict[str, Any] | None = None


MAX_TAG_LINES = 3
TAG_WIDTH = 96


def _group_order(doc: SpecDocument, drafts: list[Draft]) -> list[tuple[str, list[Draft]]]:
    """Drafts grouped by first tag (the spec's tag order first), untagged ones by their path toolset."""
    groups: dict[str, list[Draft]] = {}
    for d in drafts:
        if d.op.tags:
            tag = d.op.tags[0]
        else:
            name = d.intent.get("toolset")
            tag = (
                f"(no tag) {d.toolset_description.removeprefix('Operations under ').rstrip('.')}"
                if name
                else ""
            )
        groups.setdefault(tag, []).append(d)
    declared = [str(t.get("name")) for t in doc.data.get("tags") or [] if isinstance(t, dict)]
    order = [t for t in declared if t in groups] + [t for t in groups if t not in declared]
    return [(t, groups[t]) for t in order]


def _tag_descriptions(doc: SpecDocument) -> dict[str, list[str]]:
    """Tag -> its description's first paragraph as plain text, wrapped (at most `MAX_TAG_LINES`)."""
    out = {}
    for t in doc.data.get("tags") or []:
        if isinstance(t, dict) and isinstance(t.get("description"), str):
            lines = plain_comment_lines(t["description"])
            if lines:
                out[str(t.get("name"))] = lines
    return out


_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def plain_comment_lines(markdown: str, width: int = TAG_WIDTH, max_lines: int = MAX_TAG_LINES) -> list[str]:
    """The first paragraph of a Markdown text as plain words, wrapped to `width`: links keep their
    text, emphasis, code marks, headings, list bullets and HTML tags go; a cut ends in "…"."""
    import textwrap

    paragraph: list[str] = []
    for raw in markdown.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if not line:
            if paragraph:
                break
            continue
        if re.match(r"^#{1,6}\s", line):  # a heading is a paragraph of its own: skip it
            if paragraph:
                break
            continue
        line = re.sub(r"^([-*+]\s+|>\s*|\d+[.)]\s+)", "", line)
        if line.startswith(("```", "|", "<!--")):
            if paragraph:
                break
            continue
        paragraph.append(line)
    text = " ".join(paragraph)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_REF_LINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _MD_EMPHASIS.sub(r"\2", text)
    text = " ".join(text.split())
    if not text:
        return []
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


def _intent_node(intent: dict[str, Any]) -> Any:
    """An intent as a ruamel mapping, its nested mappings and lists in flow style."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    node = CommentedMap()
    for k, v in intent.items():
        if isinstance(v, dict):
            inner = CommentedMap(v)
            inner.fa.set_flow_style()
            node[k] = inner
        elif isinstance(v, list):
            seq = CommentedSeq(v)
            seq.fa.set_flow_style()
            node[k] = seq
        else:
            node[k] = v
    return node


def _dump(root: Any) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(root, buf)
    return buf.getvalue()


def left_out_lines(left_out: list[LeftOut]) -> list[str]:
    """The comment lines (without ``# ``) listing left-out operations: per operation why, what to do,
    and its drafted intent indented as under `tools:`, so uncommenting it (``# `` removed) puts it back."""
    from ruamel.yaml.comments import CommentedMap

    if not left_out:
        return []
    lines = [
        f"=== Operations left out ({len(left_out)}): the build cannot turn them into tools as drafted ===",
        "Each: why, what to do, and its intent. Apply the remedy, uncomment the intent (delete the",
        "leading `# `; it belongs under `tools:`), then run `toolgen lint`.",
    ]
    for item in left_out:
        lines += [
            "",
            f"{one_line(item.operation)}",
            f"  why: {one_line(item.reason)[:400]}",
            f"  to include it: {one_line(item.remedy)[:400]}",
        ]
        if item.key is not None and item.intent is not None:
            root = CommentedMap()
            root[item.key] = _intent_node(item.intent)
            lines += ["  " + line for line in _dump(root).rstrip("\n").split("\n")]
    return lines


def render_draft(
    doc: SpecDocument,
    drafts: list[Draft],
    data: dict[str, Any],
    left_out: list[LeftOut],
    command: str,
    map_decisions: list[str],
) -> str:
    """The draft intent map's text: the header comment (naming `command`), ``toolgen``, ``spec`` and
    ``api`` of `data`, the `auth:` block of `doc`'s security schemes, the `drafts` under ``tools:``
    grouped by first tag (each with its notes above it and its end-of-line comments), the decisions
    about the whole map (`map_decisions`) above ``tools:``, the `left_out` operations as comments
    after the last tool, and the ``toolsets:`` of `data`."""
    from ruamel.yaml.comments import CommentedMap

    raw_info = doc.data.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    title = " ".join(str(info.get("title") or data["api"]["name"]).split())
    version = str(info.get("version") or "")
    root = CommentedMap()
    root["toolgen"] = 1
    root["spec"] = data["spec"]
    api = CommentedMap()
    api["name"] = data["api"]["name"]
    root["api"] = api
    if not (doc.data.get("components") or {}).get("securitySchemes"):
        root.yaml_set_comment_before_after_key(
            "api",
            after="The spec declares no security scheme. If the API needs a credential, declare it:\n"
            "auth: {token: {secret: " + data["api"]["name"].upper() + "_TOKEN, kind: bearer}}",
            after_indent=0,
        )
    auth = _auth_block(doc, data["api"]["name"])
    if auth:
        root["auth"] = auth
        root.yaml_set_comment_before_after_key(
            "auth",
            before="securitySchemes key -> the runtime secret: the environment variable the runtime reads "
            "the credential from",
            indent=0,
        )
    tools = CommentedMap()
    root["tools"] = tools
    if map_decisions:  # right above `tools:`, where lint locates the findings about the whole map
        root.yaml_set_comment_before_after_key(
            "tools",
            before="\n".join(
                [
                    "Decisions left for the whole map (`toolgen lint --strict` reports them until made):",
                    *(one_line(line)[:MARK_CHARS] for line in map_decisions),
                ]
            ),
            indent=0,
        )
    descriptions = _tag_descriptions(doc)
    for tag, members in _group_order(doc, drafts):
        first = True
        for d in members:
            node = _intent_node(d.intent)
            for k, comment in d.eol.items():
                if k in node:
                    node.yaml_add_eol_comment(comment, k)
            tools[d.key] = node
            lines = [""]
            if first:
                label = tag or "(no tag)"
                lines += [f"=== {label} ({len(members)} operation{'s' if len(members) != 1 else ''}) ==="]
                lines += descriptions.get(tag, [])
                lines.append("")
                first = False
            lines += d.notes
            tools.yaml_set_comment_before_after_key(d.key, before="\n".join(_comment_lines(lines)), indent=2)
    missing = left_out_lines(left_out)
    if data.get("toolsets"):
        sets = CommentedMap()
        for name, spec in data["toolsets"].items():
            entry = CommentedMap({k: _flow_safe(v) for k, v in spec.items()})
            entry.fa.set_flow_style()
            sets[name] = entry
        root["toolsets"] = sets
        deferred = any(spec["loading"] == "deferred" for spec in data["toolsets"].values())
        # the left-out intents go right after the last tool, so an uncommented one lands under `tools:`
        root.yaml_set_comment_before_after_key(
            "toolsets",
            before="\n".join(["", *missing, ""] if missing else [""])
            + (
                "\nToolsets (namespaces), one per tag (or per path for untagged operations). "
                + (
                    "With this many tools they are deferred: a model finds their tools by tool search.\n"
                    "Make the toolsets an agent needs first `eager` (a few, under 20 tools up front)."
                    if deferred
                    else "All eager: every tool is in the catalog up front."
                )
            ),
            indent=0,
        )
    body = _dump(root)
    header = [
        f"Draft intent map for {title}" + (f" {version}" if version else "") + f", written by `{command}`.",
        "Review it before use: effects come from what each operation's name says it does (its Action,",
        "operationId, path or summary; the method only when they say nothing), approval is required on",
        "every write (the safe default), and pagination was detected from parameters and answers. Each",
        "`# decide [RULE]:` comment is a choice left to you: `toolgen lint --strict` reports it at that",
        "line until it is made (and, for effect-undecided and permission-undecided, the mark deleted).",
        "Delete the intents agents do not need (a catalog of more than 128 tools does not fit one OpenAI",
        "request), add a description that says when NOT to use a tool, and project large outputs with",
        "output.fields.",
    ]
    text = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header) + body
    if missing and not data.get("toolsets"):
        text += "".join(f"# {line}\n".replace("# \n", "#\n") for line in ["", *missing])
    return text


_FLOW_INDICATORS = re.compile(r"[?:,\[\]{}#&*!|>'\"%@`]")


def _flow_safe(value: Any) -> Any:
    """A string double-quoted when it holds a YAML indicator (``What will you make?``): a plain
    scalar with one inside a flow mapping is read differently, or not at all, by YAML 1.1 parsers."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return (
        DoubleQuotedScalarString(value)
        if isinstance(value, str) and _FLOW_INDICATORS.search(value)
        else value
    )


def auth_secrets(doc: SpecDocument, api: str) -> dict[str, str]:
    """Security scheme -> the secret name the runtime would use by default (so the draft says which
    environment variables to set)."""
    schemes = (doc.data.get("components") or {}).get("securitySchemes")
    if not isinstance(schemes, dict):
        return {}
    return {str(name): secret_name(api, str(name), len(schemes)) for name in schemes}


def _auth_block(doc: SpecDocument, api: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    secrets = auth_secrets(doc, api)
    if not secrets:
        return None
    block = CommentedMap()
    for name, secret in secrets.items():
        entry = CommentedMap({"secret": secret})
        entry.fa.set_flow_style()
        block[name] = entry
    return block


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) made one space: one comment line."""
    return " ".join(text.split())


def _comment_lines(lines: list[str]) -> list[str]:
    # ruamel writes each line of `before` as a comment; an empty line stays a blank line
    return [line.replace("\n", " ") for line in lines]


__all__ = [
    "MARK_CHARS",
    "Draft",
    "LeftOut",
    "auth_secrets",
    "left_out_lines",
    "one_line",
    "plain_comment_lines",
    "render_draft",
]
