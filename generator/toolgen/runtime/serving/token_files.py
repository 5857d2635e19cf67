"""The token file of `toolgen serve --http` (``--tokens FILE``): self-hosting without an
authorization server, callers known by the SHA-256 of their fixed bearer token.

Input: a token file (YAML, or JSON: the same shape)::

    tokens:
      - actor: support-bot                       # audit and receipts name this actor
        sha256: 9f2c...64 hex digits...          # printf %s "$TOKEN" | sha256sum
        scopes: [ticket:read, ticket:write]

Output: `load_token_file` -> a `StaticTokenVerifier` (the MCP SDK's `TokenVerifier` protocol) and
warnings. Tokens are compared in constant time (`hmac.compare_digest` against every entry) and never
logged; a bad file is a `TokenFileError` naming its file, line and column.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..call.local_yaml import UnreadableFile, UnsafeMode, compose_located, read_operator_file
from ..identity import ISSUER_CALLER_PREFIX, RESERVED_ACTOR

__all__ = [
    "MAX_TOKEN_LENGTH",
    "StaticToken",
    "StaticTokenVerifier",
    "TokenFileError",
    "load_token_file",
    "token_sha256",
]

#: Longest bearer token looked at (longer ones are refused unhashed).
MAX_TOKEN_LENGTH = 4096
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_STR = "tag:yaml.org,2002:str"


def token_sha256(token: str) -> str:
    """The lower-case hex SHA-256 of a token's UTF-8 bytes: what a token file stores."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StaticToken:
    """One entry of a token file: the SHA-256 digest (32 bytes) of the token, the actor it
    authenticates and the scopes that actor holds."""

    digest: bytes
    actor: str
    scopes: tuple[str, ...]


class StaticTokenVerifier:
    """A `TokenVerifier` over fixed tokens (known by their SHA-256 only).

    `verify_token` hashes the presented token once and compares the digest with every entry's by
    `hmac.compare_digest`, without stopping at a match, so the time taken does not depend on which
    entry matches or how much of a digest agrees. Tokens longer than `MAX_TOKEN_LENGTH` and tokens
    that match nothing give None (the SDK then answers 401)."""

    def __init__(self, tokens: Iterable[StaticToken]) -> None:
        self.tokens: tuple[StaticToken, ...] = tuple(tokens)

    def lookup(self, token: str) -> StaticToken | None:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        try:
            digest = hashlib.sha256(token.encode("utf-8")).digest()
        except UnicodeEncodeError:
            return None
        found: StaticToken | None = None
        for entry in self.tokens:
            if hmac.compare_digest(digest, entry.digest) and found is None:
                found = entry
        return found

    async def verify_token(self, token: str) -> Any:
        """The SDK's `AccessToken` for a known token (``client_id`` = the actor, ``scopes``), else None."""
        from mcp.server.auth.provider import AccessToken

        entry = self.lookup(token)
        if entry is None:
            return None
        return AccessToken(
            token="sha256:" + entry.digest.hex(), client_id=entry.actor, scopes=list(entry.scopes)
        )


class TokenFileError(ValueError):
    """A token file that cannot be used; the message is located (``FILE:LINE:COL: ...``) and never
    holds a token."""


def _where(path: Path, node: Any) -> str:
    mark = getattr(node, "start_mark", None)
    return f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)


def load_token_file(path: str | os.PathLike[str]) -> tuple[StaticTokenVerifier, list[str]]:
    """Read a token file (YAML, or JSON: the same shape) into a verifier, plus warnings (the file is
    readable by every user of the machine). A file every user may write is refused.

    Shape: ``{"tokens": [{"actor": str, "sha256": 64 hex digits, "scopes": [str, ...]}, ...]}``; no
    other keys; at least one token; no digest twice; an actor on several entries holds the same
    scopes on each; not writable by every user. Raises
    `TokenFileError` naming the file, line
    and column of the first problem and what to do (a ``token:`` key holding a plain token is refused:
    store its SHA-256)."""
    file = Path(path)
    text, mode = _read_token_text(file)
    reader = _TokenFileReader(file)
    entries = reader.entries(_compose_token_yaml(file, text))
    warnings: list[str] = []
    if mode & stat.S_IROTH:
        warnings.append(
            f"{file} is readable by every user of this machine (mode {stat.S_IMODE(mode):04o}); "
            f"run `chmod 600 {file}`"
        )
    return StaticTokenVerifier(entries), warnings


def _read_token_text(file: Path) -> tuple[str, int]:
    """The token file's text and mode; `TokenFileError` when it cannot be read or every user may write it."""
    try:  # writable by every user: any local user could add a token with any scopes
        return read_operator_file(file, refused_bits=stat.S_IWOTH)
    except UnreadableFile as exc:
        raise TokenFileError(
            f"{file}: cannot read the token file: {exc.cause.__class__.__name__}: {exc.detail}"
        ) from None
    except UnsafeMode as exc:
        raise TokenFileError(
            f"{file}: the token file is writable by every user of this machine (mode "
            f"{exc.mode:04o}), so anyone could add a token; run `chmod 600 {file}`"
        ) from None


def _compose_token_yaml(file: Path, text: str) -> Any:
    """The YAML node tree of the token file's `text` (None when empty); `TokenFileError` at the line
    and column of a syntax error (`toolgen.runtime.call.local_yaml.compose_located`)."""
    return compose_located(file, text, TokenFileError)


class _TokenFileReader:
    """The shape of a token file's node tree (`load_token_file`), checked node by node; every refusal
    a `TokenFileError` at the node's line and column."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.seen: dict[bytes, Any] = {}  # each digest's node
        self.actors: dict[str, tuple[tuple[str, ...], Any]] = {}  # each actor's scopes and first node

    def fail(self, node: Any, message: str) -> TokenFileError:
        return TokenFileError(f"{_where(self.file, node)}: {message}")

    def mapping(self, node: Any, what: str, allowed: Sequence[str]) -> dict[str, tuple[Any, Any]]:
        """The (key node, value node) of each key of the mapping `node`: only `allowed` keys, none twice."""
        import yaml  # type: ignore[import-untyped, unused-ignore]

        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, tuple[Any, Any]] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
            if name == "token":
                raise self.fail(
                    key,
                    "a plain token is not accepted: store its SHA-256 instead, "
                    "`sha256: <printf %s TOKEN | sha256sum>`",
                )
            if name not in allowed:
                raise self.fail(
                    key, f"unknown key {str(name)[:40]!r} in {what}; allowed: {', '.join(allowed)}"
                )
            if name in out:
                raise self.fail(key, f"duplicate key {name!r} in {what}")
            out[name] = (key, value)
        return out

    def entries(self, root: Any) -> list[StaticToken]:
        """The tokens of the file's `root` node, in order."""
        import yaml  # type: ignore[import-untyped, unused-ignore]

        if root is None:
            raise TokenFileError(
                f"{self.file}:1:1: the token file is empty; it needs `tokens:`, a list of "
                "{actor, sha256, scopes}"
            )
        top = self.mapping(root, "the token file", ("tokens",))
        if "tokens" not in top:
            raise self.fail(root, "missing `tokens:` (a list of {actor, sha256, scopes})")
        tokens_node = top["tokens"][1]
        if not isinstance(tokens_node, yaml.SequenceNode) or not tokens_node.value:
            raise self.fail(tokens_node, "`tokens` must be a non-empty list of {actor, sha256, scopes}")
        return [self.entry(item) for item in tokens_node.value]

    def entry(self, item: Any) -> StaticToken:
        """One token entry: its actor, digest (not seen before) and scopes (the same as the actor's
        other entries)."""
        import yaml  # type: ignore[import-untyped, unused-ignore]

        fields = self.mapping(item, "a token entry", ("actor", "sha256", "scopes"))
        for required in ("actor", "sha256", "scopes"):
            if required not in fields:
                raise self.fail(item, f"the token entry has no `{required}`")
        actor_node = fields["actor"][1]
        if (
            not isinstance(actor_node, yaml.ScalarNode)
            or actor_node.tag != _STR
            or not actor_node.value.strip()
        ):
            raise self.fail(
                actor_node, "`actor` must be a non-empty string (the id audit and receipts record)"
            )
        if actor_node.value.strip().startswith(ISSUER_CALLER_PREFIX):
            raise self.fail(
                actor_node,
                f"{RESERVED_ACTOR}: choose another name",
            )
        digest = self.digest(fields["sha256"][1])
        held = self.scopes(fields["scopes"][1])
        actor_id = actor_node.value.strip()
        if actor_id in self.actors and frozenset(self.actors[actor_id][0]) != frozenset(held):
            # audit, receipts and stored previews know the actor id only: one id, one set of scopes
            first = _where(self.file, self.actors[actor_id][1])
            raise self.fail(
                actor_node,
                f"actor {actor_id!r} already has a token with other scopes at "
                f"{first}; several tokens of one actor (a rotation) must hold the same "
                "scopes, else give them different actor ids",
            )
        self.actors.setdefault(actor_id, (held, actor_node))
        return StaticToken(digest, actor_id, held)

    def digest(self, node: Any) -> bytes:
        """The 32 bytes of an entry's ``sha256``, which no earlier entry holds."""
        import yaml  # type: ignore[import-untyped, unused-ignore]

        text = node.value if isinstance(node, yaml.ScalarNode) else ""
        if not isinstance(text, str) or not _HEX64.fullmatch(text):
            raise self.fail(
                node,
                "`sha256` must be the 64 hex digits of the token's SHA-256 (printf %s TOKEN | sha256sum)",
            )
        digest = bytes.fromhex(text)
        if digest in self.seen:
            raise self.fail(
                node,
                f"this sha256 is already the token of the entry at {_where(self.file, self.seen[digest])}",
            )
        self.seen[digest] = node
        return digest

    def scopes(self, node: Any) -> tuple[str, ...]:
        """An entry's scopes, stripped, each once, in order."""
        import yaml  # type: ignore[import-untyped, unused-ignore]

        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, "`scopes` must be a list of scope strings (may be empty: [])")
        scopes: list[str] = []
        for scope in node.value:
            if not isinstance(scope, yaml.ScalarNode) or scope.tag != _STR or not scope.value.strip():
                raise self.fail(scope, "every scope must be a non-empty string, e.g. ticket:read")
            scopes.append(scope.value.strip())
        return tuple(dict.fromkeys(scopes))
