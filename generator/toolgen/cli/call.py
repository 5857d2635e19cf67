"""`toolgen call`: run one tool call through the runtime from the shell.

Input: a generated package (folder or API name of the project file), a tool name, its arguments as
JSON, the actor's scopes and an approval. Output: the runtime's result or error as JSON on stdout.

    toolgen call API_OR_DIR TOOL --args JSON [--scopes a,b] [--approve PREVIEW_ID]
                 [--base-url URL] [--receipts PATH_OR_URL] [--actor ID] [--audit-log PATH]

``--receipts`` (env ``TOOLGEN_RECEIPTS``) is a SQLite file path or a store URL: ``redis://host:6379/0``
(shared by many workers; needs the ``redis`` extra), ``sqlite:///file``, ``memory://``. The same store
keeps previews, so a write is previewed by one command and recorded by the next:

    toolgen call tickets preview_ticket_followup --args '{"ticket_id": "T-101", ...}' --scopes ticket:write
    # -> {"result": {"preview_id": "sha256:…", "request": {...}}}; a human approves that request
    toolgen call tickets record_ticket_followup --args '{"preview_id": "sha256:…", "action_id": "a-1"}' \
        --approve sha256:… --scopes ticket:write

Both commands must use the same store and the same ``--actor`` (a preview is bound to its actor);
with ``memory://`` the preview is gone when the first command exits.

Before the call, warnings on stderr: the tool's secrets that are not set, and a base URL that looks
like the spec's example server (a reserved example domain, a local address, a templated URL) when
--base-url is not given.

Prints the structured result (``{"ok": true, "result": ..., "replayed": ...}``) or error
(``{"ok": false, "error": {...}}``) as JSON on stdout. Exit codes (the project's table): 0 success,
1 the tool call failed (a structured tool error), 2 bad command-line input (unreadable JSON, unknown
package or tool), 3 internal error.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from pathlib import Path
from urllib.parse import urlsplit

import click

from ..dialects import names
from ..runtime.audit import JsonlAuditSink, MemoryAuditSink
from ..runtime.call.shaping import cursor_key_from_env
from ..runtime.errors import scrub_url
from ..runtime.serving.loading import PackageNotFound, cursor_key_for, parse_scopes, resolve_package
from ..runtime.serving.registry import Actor, Approval, Registry
from ..runtime.stores import (
    DEFAULT_RECEIPTS_PATH,
    MemoryReceiptStore,
    PostgresReceiptStore,
    ReceiptStore,
    RedisReceiptStore,
    SqliteReceiptStore,
    receipts_from_url,
)
from .options import actor_options, registry_options

_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


class ReceiptStoreError(Exception):
    """--receipts names a store that cannot be opened; the message is safe to print (no password)."""


def display_receipts(spec: str) -> str:
    """`spec` with the password of any URL's user information replaced by ``***``, whatever the
    scheme (a mistyped ``redsi://`` too) and however malformed the rest (``[::1/0``): the authority
    is cut by hand, never by a URL parser that could refuse it first."""
    scheme, sep, rest = spec.partition("://")
    if not sep:
        return spec
    rest = _QUERY_PASSWORD.sub(r"\1***", rest)  # libpq also takes ?password=...
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" not in authority:
        # no user information before the path; an "@" after it may still end a password whose
        # "/" cut the authority short (redis://:pa/ss@host): hide everything up to the last "@"
        if "@" in tail:
            return f"{scheme}://***@{tail.rsplit('@', 1)[1]}"
        return spec
    userinfo, host = authority.rsplit("@", 1)
    if ":" not in userinfo and "@" not in tail:
        return f"{scheme}://{rest}"  # a user name alone (postgresql://postgres@host/db): no password to hide
    user = userinfo.split(":", 1)[0] if ":" in userinfo else userinfo
    if "@" in tail:
        host = tail.rsplit("@", 1)[1]
        tail = ""
    return f"{scheme}://{user}:***@{host}{tail}"


def _without_password(shown: str, exc: BaseException, spec: str) -> str:
    """The message for failing to open `spec` (`shown` is its masked form) with `exc`: the
    exception's own text is dropped when `spec` has a password (after the ``:`` of its user
    information, or a ``password=`` query parameter) and the text holds it or any piece of it (a URL
    parser quotes what it could not read, e.g. the part of ``redis://:p/w@host`` it took for a
    port), so no message ever carries a password."""
    detail = (
        f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, (ValueError, ImportError, OSError))
        else str(exc)
    )
    _, sep, rest = spec.partition("://")
    secrets_in_url = [m.group(1) for m in re.finditer(r"[?&]password=([^&#]*)", rest, re.IGNORECASE)]
    if sep and "@" in rest:
        userinfo = rest.rsplit("@", 1)[0]
        if ":" in userinfo:  # user:password@; a user name alone (postgres@host) holds no password
            secrets_in_url.append(userinfo.split(":", 1)[1])
    if sep and secrets_in_url:
        pieces = [p for password in secrets_in_url for p in re.split(r"[/?#@:\[\]]", password) if p]
        if spec in detail or any(p in detail for p in pieces):
            detail = f"{type(exc).__name__} (the details are withheld: they quote the URL's password)"
    return f"cannot open the receipt store {shown}: {detail}"


def open_receipts(spec: str | None) -> tuple[ReceiptStore, bytes]:
    """The receipt store named by ``--receipts`` / ``TOOLGEN_RECEIPTS`` (default
    `DEFAULT_RECEIPTS_PATH`) and the pagination-cursor key that goes with it: ``TOOLGEN_CURSOR_KEY``
    if set, else one kept beside a SQLite file, or in the store for a Redis or PostgreSQL store (so every worker
    accepts every other's cursors), or a random one for ``memory://``. Raises `ReceiptStoreError`."""
    text = spec or os.environ.get("TOOLGEN_RECEIPTS") or str(DEFAULT_RECEIPTS_PATH)
    shown = display_receipts(text)
    try:
        store = receipts_from_url(text)
    except Exception as exc:  # noqa: BLE001 - a bad URL, a missing driver, a database that does not answer
        raise ReceiptStoreError(_without_password(shown, exc, text)) from None
    try:
        env_key = cursor_key_from_env()
        if env_key is not None:
            key = env_key
        elif isinstance(store, SqliteReceiptStore):
            key = cursor_key_for(store.path)
        elif isinstance(store, (RedisReceiptStore, PostgresReceiptStore)):
            key = store.shared_cursor_key()  # also checks that the server answers
        else:
            key = secrets.token_bytes(32)
    except Exception as exc:  # noqa: BLE001 - e.g. redis.ConnectionError; report it, don't trace back
        store.close()
        raise ReceiptStoreError(_without_password(shown, exc, text)) from None
    return store, key


def package_folder(command: str, api_or_dir: str) -> Path:
    """The folder of a generated package named by API name or path; a bad one prints one line naming
    `command` and exits 2."""
    try:
        return resolve_package(api_or_dir)
    except PackageNotFound as exc:
        click.echo(f"toolgen {command}: {exc}", err=True)
        sys.exit(2)


def open_registry(
    command: str,
    api_or_dir: str,
    base_url: str | None,
    receipts_spec: str | None,
    audit_log: Path | None,
    approvals: str = "client",
) -> Registry:
    """The registry behind `toolgen call` / `serve` / `approve`: the generated package (name or
    folder), its receipt store (path or URL), audit sink and approvals mode (``client`` or
    ``issued``). A bad argument prints one line naming `command` and exits 2."""
    folder = package_folder(command, api_or_dir)
    try:
        receipts, cursor_key = open_receipts(receipts_spec)
    except ReceiptStoreError as exc:
        click.echo(f"toolgen {command}: {exc}", err=True)
        sys.exit(2)
    try:
        return Registry.from_dir(
            folder,
            base_url=base_url,
            receipts=receipts,
            audit=JsonlAuditSink(audit_log) if audit_log else MemoryAuditSink(),
            cursor_key=cursor_key,
            approvals=approvals,
        )
    except (OSError, ValueError) as exc:
        receipts.close()
        click.echo(f"toolgen {command}: cannot load {folder}: {exc}", err=True)
        sys.exit(2)


_EXAMPLE_HOSTS = {"example.com", "example.org", "example.net", "localhost", "127.0.0.1", "::1", "0.0.0.0"}
_EXAMPLE_SUFFIXES = (
    ".example.com",
    ".example.org",
    ".example.net",
    ".example",
    ".test",
    ".invalid",
    ".localhost",
)


def placeholder_base_url(url: str) -> str | None:
    """Why `url` looks like a spec's example server rather than the API to call (a templated URL, a
    reserved example domain, a local address, no host at all), or None when it looks real."""
    if not url:
        return "is empty"
    if "{" in url or "}" in url:
        return "is a templated URL"
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return "is not a valid URL"
    if not host:
        return "names no host (a relative server URL)"
    if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".localhost"):
        return "is a local address"
    if host in _EXAMPLE_HOSTS or host.endswith(_EXAMPLE_SUFFIXES):
        return "is a reserved example domain"
    return None


def startup_warnings(
    registry: Registry,
    *,
    base_url_given: bool,
    tools: list[str] | None = None,
    environ: dict[str, str] | None = None,
) -> list[str]:
    """What an operator should know before the first call: tools whose secrets are not set (they will
    answer `missing_credential`), secrets shorter than `SHORT_SECRET` characters, and a base URL that looks like the spec's example server when
    --base-url was not given. `tools` limits the secret check (default: every tool)."""
    env = dict(os.environ) if environ is None else environ
    out: list[str] = []
    blocked: dict[str, list[str]] = {}  # secret -> tools that cannot be called without it
    for name in tools if tools is not None else registry.tool_names():
        spec = registry.specs.get(name)
        if spec is None or spec.row.mode == "preview":  # a preview sends nothing
            continue
        auth = spec.row.auth
        secrets_ = [a.secret for a in auth]
        if not auth or any(s and env.get(s) for s in secrets_):
            continue
        for secret in secrets_:
            if secret:
                blocked.setdefault(secret, []).append(name)
    if blocked:
        names = sorted(blocked)
        tools_blocked = sorted({t for ts in blocked.values() for t in ts})
        shown = ", ".join(tools_blocked[:5]) + (
            f" and {len(tools_blocked) - 5} more" if len(tools_blocked) > 5 else ""
        )
        out.append(
            f"the secret{'s' if len(names) != 1 else ''} {', '.join(names)} "
            f"{'are' if len(names) != 1 else 'is'} not set: {shown} will answer missing_credential "
            f"(set {' or '.join(names)} in the environment)"
        )
    out += _short_secret_warnings(registry, tools, env)
    if not base_url_given:
        why = placeholder_base_url(registry.base_url)
        if why is not None:
            out.append(
                f"calling {scrub_url(registry.base_url) if registry.base_url else '(no base URL)'}, the "
                f"policy's base URL (from the spec's servers), which {why}; pass --base-url if the "
                "API runs elsewhere"
            )
    return out


#: A secret shorter than this is warned about at start: the runtime redacts every occurrence of every
#: secret in what a call returns, so a short one (a test token "a") garbles answers, and it is guessable.
SHORT_SECRET = 8


def _short_secret_warnings(registry: Registry, tools: list[str] | None, env: dict[str, str]) -> list[str]:
    """One warning per secret the tools use (`tools`: None for all) that is set but shorter than
    `SHORT_SECRET` characters; it names the variable and the length, never the value."""
    short: dict[str, int] = {}
    for name in tools if tools is not None else registry.tool_names():
        spec = registry.specs.get(name)
        for entry in spec.row.auth if spec is not None else ():
            secret = entry.secret or ""
            value = env.get(secret) if secret else None
            if value and len(value) < SHORT_SECRET:
                short[secret] = len(value)
    return [
        f"the secret {secret} is {n} character{'s' if n != 1 else ''} long, which is short: every occurrence "
        "of a secret in an answer or error is replaced by [redacted], so a short one garbles answers (and a "
        "short credential is guessable); set the real credential"
        for secret, n in sorted(short.items())
    ]


def _stores_preview(registry: Registry, tool: str) -> bool:
    """Whether calling `tool` stores (a preview tool) or needs (a record tool) a stored preview."""
    row = registry.specs[tool].row
    record = registry.specs.get(str(row.pair)) if row.mode == "preview" else registry.specs[tool]
    return record is not None and record.row.executes_preview


def _read_args(value: str) -> object:
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        text = Path(value[1:]).read_text(encoding="utf-8")
    else:
        text = value
    return json.loads(text)


@click.command("call")
@click.argument("api_or_dir")
@click.argument("tool")
@click.option(
    "--args",
    "args_text",
    default="{}",
    show_default=True,
    help="Tool arguments as a JSON object; '-' reads stdin, '@FILE' reads a file.",
)
@actor_options("cli", "Comma-separated scopes the actor holds (env: TOOLGEN_SCOPES).")
@click.option("--approve", "preview_id", default=None, help="An approved preview_id (record tools).")
@click.option(
    "--approval-id",
    default=None,
    help="Id of this approval: an approval is spent on one action; a second approval of the same "
    "preview needs its own id.",
)
@registry_options
@click.option(
    "--dialect",
    type=click.Choice(names()),
    default=None,
    help="The catalog the arguments were written against; its argument rewrites are undone first.",
)
def call_command(
    api_or_dir: str,
    tool: str,
    args_text: str,
    scopes: str | None,
    actor_id: str,
    preview_id: str | None,
    approval_id: str | None,
    base_url: str | None,
    receipts_spec: str | None,
    audit_log: Path | None,
    dialect: str | None,
) -> None:
    """Run TOOL of a generated package against its API and print the structured result as JSON."""
    try:
        args = _read_args(args_text)
    except RecursionError:
        click.echo(
            "toolgen call: --args is nested too deeply to read (arguments may nest 64 levels)", err=True
        )
        sys.exit(2)
    except (ValueError, OSError) as exc:
        click.echo(f"toolgen call: --args is not valid JSON: {exc}", err=True)
        sys.exit(2)
    if not isinstance(args, dict):
        click.echo("toolgen call: --args must be a JSON object", err=True)
        sys.exit(2)
    registry = open_registry("call", api_or_dir, base_url, receipts_spec, audit_log)
    with registry:
        if tool not in registry.specs:
            click.echo(
                f"toolgen call: unknown tool {tool!r}; available: {', '.join(registry.tool_names())}",
                err=True,
            )
            sys.exit(2)
        for warning in startup_warnings(registry, base_url_given=base_url is not None, tools=[tool]):
            click.echo(f"toolgen call: warning: {warning}", err=True)
        if isinstance(registry.receipts, MemoryReceiptStore) and _stores_preview(registry, tool):
            click.echo(
                f"toolgen call: warning: {tool}'s record tool executes the stored preview, but the "
                "memory:// store forgets it when this command exits; use a SQLite file or Redis",
                err=True,
            )
        try:
            result = registry.call(
                tool,
                args,
                actor=Actor.of(actor_id, parse_scopes(scopes)),
                approval=Approval(preview_id, approved_by=actor_id, approval_id=approval_id)
                if preview_id
                else None,
                dialect=dialect,
            )
        except Exception as exc:  # noqa: BLE001 - tool failures are data; anything raised here is a bug
            click.echo(f"toolgen call: internal error ({type(exc).__name__})", err=True)
            sys.exit(3)
    click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, sort_keys=True))
    sys.exit(0 if result.ok else 1)
