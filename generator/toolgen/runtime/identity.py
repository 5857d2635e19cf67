"""Tools by identity: which tools a caller's scopes allow, and catalogs cut down to them.

Input: a policy row (``policy.json`` ``tools[]``: its ``permission`` list of scopes) or a whole
catalog document of any dialect (``mcp.json``, ``openai.json``, ``anthropic.json``,
``gemini.json``), and the scopes a caller holds. Output: a yes/no per tool, or the catalog without
the tools the caller may not use.

One rule everywhere (``tools/list`` of `toolgen serve`, the ``search_tools`` meta-tool, `toolgen
catalog --scopes`, `Registry.visible_tools`): a tool is *visible* to a caller when the caller holds
every scope of the row's ``permission`` — the same rule the call path's permission step enforces.
MCP 2026-07-28 allows ``tools/list`` to vary with the authorization presented ("servers MAY return
only the tools the caller's scopes permit"). Hiding never replaces the check: a hidden tool called
by name is still refused with ``permission_denied`` on the call path.

Who a caller is: a caller of an authorization server's access tokens is that issuer's subject,
`issuer_caller_id` (``jwt:<iss>#<sub>``), never the bare ``sub`` (RFC 7519 §4.1.2: a subject is
"locally unique in the context of the issuer"), so the limit buckets, stored previews, issued
approvals, receipts and audit events this id keys stay apart between issuers sharing one store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..policy.format import PolicyRow
from .errors import ToolError, make_error

__all__ = [
    "ISSUER_CALLER_PREFIX",
    "RESERVED_ACTOR",
    "filter_catalog",
    "is_deferred",
    "issuer_caller_id",
    "missing_of",
    "missing_scopes",
    "permission_error",
    "permits",
    "required_scopes",
    "scope_set",
    "split_caller_id",
    "tool_entry_name",
]

#: The prefix of every issuer-bound caller id (`issuer_caller_id`); reserved: an id given any other
#: way (a token file's actor, a verifier that names no issuer) may not begin with it.
ISSUER_CALLER_PREFIX = "jwt:"
#: why a local actor id (a token file's, ``--actor``'s) may not begin with `ISSUER_CALLER_PREFIX`
RESERVED_ACTOR = (
    f"an actor id beginning {ISSUER_CALLER_PREFIX!r} is reserved for the callers of an authorization "
    "server (jwt:<iss>#<sub>): acting as one would use its limits, previews and approvals"
)
_ESCAPED = re.compile("%2[35]")


def issuer_caller_id(issuer: str, subject: str) -> str:
    """The caller id of `subject` (a token's ``sub``) of the authorization server `issuer` (its
    ``iss``, exactly as the token carries it: RFC 8414 §3.3 compares issuers as strings):
    ``"jwt:" + issuer + "#" + subject``, where the issuer's ``%`` and ``#`` are written ``%25`` and
    ``%23``. The first ``#`` after the prefix ends the issuer (an issuer has no fragment, RFC 8414
    §2, so it reads as itself); the subject follows verbatim. No two (issuer, subject) pairs give
    one id (`split_caller_id` is the inverse). Raises `ValueError` for an empty issuer or subject."""
    if not issuer or not subject:
        raise ValueError("a caller id needs a non-empty issuer and subject")
    return ISSUER_CALLER_PREFIX + issuer.replace("%", "%25").replace("#", "%23") + "#" + subject


def split_caller_id(caller_id: str) -> tuple[str, str] | None:
    """The (issuer, subject) of an id `issuer_caller_id` made, or None for any other id."""
    if not caller_id.startswith(ISSUER_CALLER_PREFIX):
        return None
    issuer, separator, subject = caller_id[len(ISSUER_CALLER_PREFIX) :].partition("#")
    if not separator or not issuer or not subject:
        return None
    return _ESCAPED.sub(lambda m: "#" if m.group() == "%23" else "%", issuer), subject


def scope_set(scopes: str | Iterable[str]) -> frozenset[str]:
    """The scopes a caller holds, as a set of whole scope names.

    A single string is an OAuth scope string (RFC 6749 §3.3: scope names separated by spaces), so
    ``"ticket:read ticket:write"`` holds two scopes and ``"not customers:writer"`` holds ``not`` and
    ``customers:writer`` — never ``customers:write`` (a string is never searched for substrings, nor
    taken character by character). Only the space U+0020 separates: ``"customers:write\u00a0x"`` (a
    tab, NBSP or line separator inside) is one name, not ``customers:write``. Any other iterable must
    hold strings. Raises `TypeError` for an item that is not a string."""
    if isinstance(scopes, str):
        return frozenset(name for name in scopes.split(" ") if name)
    held: list[str] = []
    for scope in scopes:
        if not isinstance(scope, str):
            raise TypeError(f"a scope must be a string, not {type(scope).__name__}")
        held.append(scope)
    return frozenset(held)


def required_scopes(row: PolicyRow) -> list[str]:
    """The scopes a policy row's ``permission`` demands (all of them), as strings."""
    return list(row.permission)


def missing_scopes(row: PolicyRow, scopes: str | Iterable[str]) -> list[str]:
    """The rule: the scopes of `row`'s ``permission`` that `scopes` (read by `scope_set`) do not
    hold, in the row's order (empty: the caller may use the tool; a row without ``permission``
    needs none). Every other check of this module and of the call path is this function."""
    return missing_of(row.permission, scopes)


def missing_of(required: Iterable[str], scopes: str | Iterable[str]) -> list[str]:
    """The scopes of `required` that `scopes` (read by `scope_set`) do not hold, in order: the rule
    of `missing_scopes` for a list of scopes that is not a row's (a search document's)."""
    held = scope_set(scopes)
    return [s for s in required if s not in held]


def permits(row: PolicyRow, scopes: str | Iterable[str]) -> bool:
    """True when `scopes` (read by `scope_set`) hold every scope of `row`'s ``permission``
    (`missing_scopes` is empty)."""
    return not missing_scopes(row, scopes)


def permission_error(
    tool: str, row: PolicyRow, actor_id: str, scopes: str | Iterable[str]
) -> ToolError | None:
    """``permission_denied`` naming the scopes of `row`'s ``permission`` that the actor `actor_id`
    holding `scopes` lacks (``details``: ``missing``, ``required``), or None when it holds them
    all (`missing_scopes`). The call path asks this right after finding the tool, so a tool the
    actor may not see is refused before its arguments are read and the refusal reveals nothing of
    its schema; `Registry.refuse_hidden` gives the same refusal."""
    missing = missing_scopes(row, scopes)
    if not missing:
        return None
    return make_error(
        "permission_denied",
        f"{tool} needs the scope(s) {', '.join(missing)}, which actor {actor_id!r} does not hold.",
        details={"missing": missing, "required": required_scopes(row)},
    )


def is_deferred(row: PolicyRow) -> bool:
    """True for a row with ``loading: deferred``: found through search, not listed up front."""
    return row.loading == "deferred"


def tool_entry_name(entry: Any) -> str | None:
    """The tool a catalog entry defines, in any dialect: ``name`` (MCP, Anthropic, Gemini, OpenAI
    Responses) or ``function.name`` (OpenAI Chat Completions); None for anything else (a hosted
    ``tool_search`` entry, a namespace)."""
    if not isinstance(entry, Mapping):
        return None
    function = entry.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return str(function["name"])
    if entry.get("type") == "namespace":
        return None
    name = entry.get("name")
    return name if isinstance(name, str) else None


def filter_catalog(document: Any, hidden: Iterable[str]) -> Any:
    """`document` (a dialect's catalog: a list of tool entries, or an object holding such lists)
    without the entries that define a tool named in `hidden`.

    Lists are filtered entry by entry; an entry holding its own ``tools`` list (an OpenAI
    namespace, a Gemini ``functionDeclarations`` group) is filtered inside, and dropped when
    nothing of it is left. Entries that define no tool of the package (a hosted ``tool_search``
    entry, the ``search_tools`` meta-tool) are kept. The input is not modified; order is kept."""
    drop = frozenset(hidden)
    return _filter(document, drop)


_GROUP_KEYS = ("tools", "functionDeclarations", "function_declarations")


def _filter(node: Any, drop: frozenset[str]) -> Any:
    if isinstance(node, list):
        out: list[Any] = []
        for entry in node:
            name = tool_entry_name(entry)
            if name is not None and name in drop:
                continue
            if isinstance(entry, Mapping) and any(isinstance(entry.get(k), list) for k in _GROUP_KEYS):
                kept = _filter(entry, drop)
                groups = [k for k in _GROUP_KEYS if isinstance(entry.get(k), list)]
                if any(entry[k] for k in groups) and not any(kept[k] for k in groups):
                    continue  # a group whose every tool is hidden
                out.append(kept)
                continue
            out.append(entry)
        return out
    if isinstance(node, Mapping):
        return {k: _filter(v, drop) if isinstance(v, list) else v for k, v in node.items()}
    return node
