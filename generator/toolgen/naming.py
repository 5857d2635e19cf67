"""Kernel `naming`: tool names and argument names that every dialect accepts, shortened deterministically.

Input: operationIds, intent keys and wire names. Output: valid names (or why one is not valid).

Tool names follow `^[a-zA-Z0-9_-]{1,64}$`, the intersection of OpenAI function names, Anthropic
clients that enforce 64 and MCP clients (provider-rules.md A.1, B.1, D.2), counting the
`preview_`/`record_` prefix. Argument names follow `^[A-Za-z_][A-Za-z0-9_]{0,63}$` (provider-rules.md
E.6, the Gemini parameter rule, which also makes them Python-friendly); the wire name is kept in the
binding table.
"""

from __future__ import annotations

import hashlib
import re

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ARG_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_TOOL_NAME = 64
#: an API's name in toolgen.yaml (also its Python package's name); `re.fullmatch` it
API_NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"
API_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")
#: toolset (namespace) names: a letter first, then what every dialect's names allow (A.1 function and
#: namespace names, B.1, D.2, the Gemini rule of F.3 that a name starts with a letter or '_')
TOOLSET_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
MAX_ARG_NAME = 64

_SYMBOLS = {"<": "_lt", ">": "_gt", "=": "_eq", "!": "_not", "[]": "", "@": "_at", "$": "_", "+": "_plus"}


def stable_suffix(text: str, length: int = 8) -> str:
    """A short, stable hex digest of `text` (sha256), independent of hash seeds."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def snake_case(text: str) -> str:
    """``issues/list-for-repo`` -> ``issues_list_for_repo``; ``getTicketById`` -> ``get_ticket_by_id``.

    Only ASCII letters, digits and underscores survive; runs of anything else become one ``_``.
    """
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return re.sub(r"_+", "_", text)


def shorten(name: str, limit: int = MAX_TOOL_NAME, *, seed: str | None = None) -> str:
    """Cut `name` to at most `limit` characters, ending in ``_`` + an 8-hex digest of `seed` (default:
    `name`), so two long names that share a prefix stay distinct. Names within the limit are
    returned unchanged."""
    if len(name) <= limit:
        return name
    digest = stable_suffix(seed if seed is not None else name)
    head = name[: limit - len(digest) - 1].rstrip("_-")
    return f"{head}_{digest}"


def tool_name_problem(name: str) -> str | None:
    """Why `name` is not a valid tool name, or None."""
    if not name:
        return "a tool name must not be empty"
    if len(name) > MAX_TOOL_NAME:
        return f"{name!r} is {len(name)} characters; the limit is {MAX_TOOL_NAME}"
    if not TOOL_NAME_RE.fullmatch(name):
        bad = sorted({c for c in name if not re.match(r"[a-zA-Z0-9_-]", c)})
        return f"{name!r} contains {''.join(bad)!r}; only letters, digits, '_' and '-' are allowed"
    return None


def arg_name(wire_name: str) -> str:
    """A valid argument name for a wire name: ``DateCreated<`` -> ``DateCreated_lt``,
    ``assignee.any`` -> ``assignee_any``, ``X-Request-Id`` -> ``X_Request_Id``, ``2fa`` -> ``_2fa``."""
    import unicodedata

    # letters with accents keep their base letter (ünïcode -> unicode); other non-ASCII goes below
    text = unicodedata.normalize("NFKD", wire_name).encode("ascii", "ignore").decode("ascii") or wire_name
    for symbol, replacement in _SYMBOLS.items():
        text = text.replace(symbol, replacement)
    text = re.sub(r"[^A-Za-z0-9_]+", "_", text)
    text = re.sub(r"_+", "_", text)
    if text != "_":
        text = text.strip("_") or "_"
        if wire_name.startswith("_"):
            text = "_" + text
    if not text or text[0].isdigit():
        text = "_" + text
    if len(text) > MAX_ARG_NAME:
        text = shorten(text, MAX_ARG_NAME, seed=wire_name)
    return text


def toolset_name_problem(name: str) -> str | None:
    """Why `name` is not a valid toolset name (`TOOLSET_NAME_RE`: it becomes an OpenAI namespace name
    and a prefix clients may put before tool names), or None."""
    if not name:
        return "a toolset name must not be empty"
    if len(name) > MAX_TOOL_NAME:
        return f"{name!r} is {len(name)} characters; the limit is {MAX_TOOL_NAME}"
    if not TOOLSET_NAME_RE.fullmatch(name):
        return f"{name!r} must start with a letter and hold only letters, digits, '_' and '-'"
    return None


def toolset_from_tag(tag: str) -> str | None:
    """The toolset name for an OpenAPI tag: ``Code Scanning`` -> ``code_scanning``, ``code-scanning`` ->
    ``code_scanning``; a leading digit gets a ``t_`` prefix; None when nothing is left."""
    name = snake_case(tag)
    if not name:
        return None
    if not name[0].isalpha():
        name = "t_" + name
    return shorten(name, MAX_TOOL_NAME)


def path_text_problem(value: str) -> str | None:
    """Why `value` cannot be a path a project file gives (toolgen.yaml's paths, an intent map's
    ``spec:``): a control character (a NUL names no file on any system; a line break in a path is never
    meant), or None."""
    bad = next((ch for ch in value if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    return None if bad is None else f"a path may not hold the control character {bad!r}"


def _is_word(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a word character as `re` reads ``\\w`` (a letter, a digit of any
    script, or ``_``); False outside the text."""
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def has_word(text: str, word: str) -> bool:
    """Whether `word` occurs in `text` between word boundaries: ``re.search(rf"\\b{re.escape(word)}\\b",
    text)`` without compiling a pattern per word (a build asks it of thousands of tool names, more than
    `re`'s pattern cache holds). An empty `word` never occurs."""
    if not word:
        return False
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if _is_word(text, start - 1) != _is_word(text, start) and _is_word(text, end - 1) != _is_word(
            text, end
        ):
            return True
        start = text.find(word, start + 1)
    return False
