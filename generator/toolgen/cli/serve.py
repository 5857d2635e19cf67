"""`toolgen serve API_OR_DIR`: serve the tools of a generated package over MCP (stdio or Streamable HTTP).

Input: a generated package (folder or API name of the project file), who the caller is, and the
receipt store. Output: an MCP server until the client disconnects (stdio) or until SIGINT/SIGTERM
(``--http``), then exit 0.

- stdio (default): one caller, the actor of ``--actor``/``--scopes`` (`toolgen.runtime.serving.mcp_server`).
- ``--http HOST:PORT``: Streamable HTTP at ``http://HOST:PORT/mcp`` (`toolgen.runtime.serving.mcp_http`);
  each request's caller is the actor of its bearer token, from ``--tokens FILE`` (SHA-256 of each
  token, actor, scopes). Without a token file it refuses to start unless ``--no-auth`` (then every
  request is the ``--actor``/``--scopes`` actor, with a warning). ``PORT`` 0 takes a free port; the
  bound URL is printed on stderr (``toolgen serve: serving MCP on http://...``).
- ``--workers N`` (with ``--http``): N worker processes accept from one listening socket, supervised
  (a worker that dies is replaced; `toolgen.runtime.serving.workers`). They share receipts, previews, issued
  approvals and cursor keys through the receipt store, so ``memory://`` is refused; any request may
  land on any worker (the transport is stateless).
- ``--approvals issued|elicit|client``: with ``elicit``, as ``issued`` plus approvals asked in the
  protocol (`toolgen.runtime.serving.elicit`: MCP 2026-07-28 clients get an ``input_required`` elicitation
  showing the exact request); with ``issued`` (the default over HTTP) a record call's approval must
  be an ``approval_id`` issued by ``toolgen approve`` on the same receipt store (``--receipts``); with
  ``client`` (the default over stdio, where the host application is the caller) the ``_meta``
  approval is taken as given.

Exit codes: 0 stopped; 2 bad input (package, receipt store, token file — located —, address, option
combination, the MCP SDK not installed: the ``mcp`` extra); 3 internal error. Warnings on stderr at start-up: secrets that are not set, a base URL
that looks like the spec's example server (`toolgen.cli.call.startup_warnings`), a ``search.json``
the served meta-tool's index would not use (`toolgen.runtime.serving.search_tools.index_warnings`: e.g. one
with no documents for a package with tools; the index then analyses the package), a token file
readable by every user.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import anyio
import click

from ..runtime.call.caller_credentials import (
    CallerCredentials,
    CallerSecretsError,
    TokenExchange,
    load_caller_secrets,
)
from ..runtime.serving.access_tokens import (
    AuthorizationServer,
    AuthorizationServerError,
    JwtVerifier,
    load_authorization_server,
)
from ..runtime.serving.loading import parse_scopes
from ..runtime.serving.mcp_http import (
    StaticTokenVerifier,
    TokenFileError,
    is_loopback,
    listen,
    load_token_file,
    serve_http,
)
from ..runtime.serving.mcp_server import serve_stdio
from ..runtime.serving.registry import Actor, Registry
from ..runtime.serving.search_tools import has_deferred, index_warnings
from ..runtime.serving.workers import supervise
from ..runtime.stores import DEFAULT_RECEIPTS_PATH, MemoryReceiptStore, receipts_scheme
from ..runtime.telemetry import export_asked, install_sdk
from .call import open_registry, startup_warnings
from .exits import EXTRA_HINT
from .options import actor_options, registry_options

SEARCH_TOOL_CHOICES = {"auto": None, "always": True, "never": False}


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPV6]:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1) → (host, port); raises
    `click.BadParameter` otherwise."""
    host, sep, port_text = value.rpartition(":")
    if not sep and value.isdigit():
        host, sep, port_text = "", ":", value
    bare_ipv6 = ":" in host and not (host.startswith("[") and host.endswith("]"))
    if not sep or bare_ipv6 or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise click.BadParameter(
            f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080, :0)", param_hint="--http"
        )
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port_text)


@click.command("serve")
@click.argument("api_or_dir")
@actor_options(
    "mcp", "Comma-separated scopes of the served actor over stdio or --no-auth (env: TOOLGEN_SCOPES)."
)
@registry_options
@click.option(
    "--http",
    "http_address",
    default=None,
    metavar="HOST:PORT",
    help="Serve MCP over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT 0: any free port).",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(path_type=Path),
    default=None,
    help="With --http: the token file (YAML/JSON: actor, sha256 of the token, scopes per token).",
)
@click.option(
    "--authorization-server",
    "auth_server_file",
    type=click.Path(path_type=Path),
    default=None,
    help="With --http: accept the JWT access tokens of this OAuth authorization server (a YAML "
    "file: issuer, jwks_uri, resource, algorithms, leeway_s, scope_claim, scope_map, "
    "token_exchange).",
)
@click.option(
    "--caller-secrets",
    "caller_secrets_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Per-caller secrets for `per_caller: {via: lookup}` schemes (a YAML file: callers: "
    "{ACTOR: {SECRET_NAME: value}}).",
)
@click.option(
    "--no-auth",
    is_flag=True,
    default=False,
    help="With --http: serve without tokens, every caller as --actor/--scopes (unsafe off loopback).",
)
@click.option(
    "--approvals",
    type=click.Choice(["issued", "elicit", "client"]),
    default=None,
    help="Where approvals come from: issued (only an approval_id issued by `toolgen approve` on the same "
    "receipt store), elicit (as issued, and MCP 2026-07-28 clients are asked in the protocol: the "
    "user approves the exact request in an elicitation) or client (the caller's _meta is taken as "
    "given). Default: issued with --http, client over stdio.",
)
@click.option(
    "--search-tool",
    type=click.Choice(sorted(SEARCH_TOOL_CHOICES)),
    default="auto",
    show_default=True,
    help="Serve the search_tools meta-tool: when the package has deferred tools, always, or never.",
)
@click.option(
    "--otel",
    is_flag=True,
    default=False,
    help="Export traces and the duration metric over OTLP (the otel extra; also on when OTEL_* asks).",
)
@click.option(
    "--workers",
    type=int,
    default=1,
    show_default=True,
    help="With --http: worker processes serving one address (they share state through --receipts, "
    "which must not be memory://).",
)
def serve_command(
    api_or_dir: str,
    scopes: str | None,
    actor_id: str,
    base_url: str | None,
    receipts_spec: str | None,
    audit_log: Path | None,
    http_address: str | None,
    tokens_file: Path | None,
    auth_server_file: Path | None,
    caller_secrets_file: Path | None,
    no_auth: bool,
    approvals: str | None,
    search_tool: str,
    otel: bool,
    workers: int,
) -> None:
    """Serve the tools of a generated package as an MCP server, over stdio or Streamable HTTP."""
    _require_mcp()
    _start_telemetry(otel, workers)
    search = SEARCH_TOOL_CHOICES[search_tool]
    if workers < 1:
        _bad(f"--workers must be at least 1, not {workers}")
    if http_address is None:
        if tokens_file is not None or no_auth or auth_server_file is not None:
            _bad("--tokens, --authorization-server and --no-auth apply to --http only")
        if workers != 1:
            _bad("--workers applies to --http only (stdio serves one client)")
        registry = open_registry(
            "serve", api_or_dir, base_url, receipts_spec, audit_log, _registry_mode(approvals or "client")
        )
        registry.caller_credentials = _caller_credentials(None, caller_secrets_file)
        _warn_startup(registry, base_url, search)
        anyio.run(_stdio, registry, Actor.of(actor_id, parse_scopes(scopes)), search, approvals == "elicit")
        return
    try:
        host, port = parse_address(http_address)
    except click.BadParameter as exc:
        _bad(exc.format_message())
    verifier, server = _token_source(tokens_file, auth_server_file, no_auth, scopes)
    if workers > 1 and _scheme(receipts_spec) == "memory":
        _bad(
            f"--workers {workers} needs a receipt store the workers share (a SQLite file, redis://, "
            "postgresql://), not memory://"
        )
    elicit = approvals == "elicit"
    callers = _caller_credentials(server, caller_secrets_file)
    registry = open_registry(
        "serve", api_or_dir, base_url, receipts_spec, audit_log, _registry_mode(approvals or "issued")
    )
    registry.caller_credentials = callers
    _warn_startup(registry, base_url, search)
    many = server is not None or len({t.actor for t in getattr(verifier, "tokens", ())}) > 1
    for warning in shared_write_warnings(registry, many=many):
        click.echo(f"toolgen serve: warning: {warning}", err=True)
    if registry.approvals == "client":
        click.echo(
            "toolgen serve: warning: --approvals client over HTTP: any token holder with a write's scopes "
            "can approve its own previews",
            err=True,
        )
    elif isinstance(registry.receipts, MemoryReceiptStore):
        click.echo(
            "toolgen serve: warning: --approvals issued with a memory:// receipt store: `toolgen approve` "
            "cannot reach it, so no approval-gated write can be approved",
            err=True,
        )
    if not is_loopback(host):
        click.echo(
            f"toolgen serve: warning: listening on {host}, beyond this machine: bearer tokens travel in "
            "clear text over plain HTTP; put a TLS-terminating proxy in front",
            err=True,
        )
    actor = None
    if no_auth:
        actor = Actor.of(actor_id, parse_scopes(scopes))
        click.echo(
            "toolgen serve: WARNING: --no-auth: anyone who can reach "
            f"{host}:{port} calls the tools as actor {actor.id!r} with scopes "
            f"[{', '.join(sorted(actor.scopes))}]; never expose this beyond a trusted machine",
            err=True,
        )

    def ready(url: str) -> None:
        who = (
            f"{len(verifier.tokens)} token(s)"
            if isinstance(verifier, StaticTokenVerifier)
            else f"JWT access tokens of {server.issuer} for {server.resource}"
            if server is not None
            else "NO AUTHENTICATION"
        )
        many = f"{workers} workers, " if workers > 1 else ""
        click.echo(f"toolgen serve: serving MCP on {url} (Streamable HTTP, {many}{who})", err=True)

    if workers > 1:
        registry.close()  # each worker opens its own store connection after the fork
        try:
            sock = listen(host, port)
        except OSError as exc:
            _bad(f"cannot listen on {http_address}: {exc.strerror or exc}")
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        ready(f"http://{shown}:{bound}/mcp")

        def worker() -> int:
            own = open_registry(
                "serve", api_or_dir, base_url, receipts_spec, audit_log, _registry_mode(approvals or "issued")
            )
            own.caller_credentials = callers
            anyio.run(_http, own, verifier, actor, host, port, search, None, sock, elicit, server)
            return 0

        code = supervise(workers, worker, log=lambda line: click.echo(f"toolgen serve: {line}", err=True))
        sock.close()
        click.echo("toolgen serve: stopped", err=True)
        sys.exit(code)
    try:
        anyio.run(_http, registry, verifier, actor, host, port, search, ready, None, elicit, server)
    except OSError as exc:
        _bad(f"cannot listen on {http_address}: {exc.strerror or exc}")
    click.echo("toolgen serve: stopped", err=True)


async def _stdio(registry: Registry, actor: Actor, search: bool | None, elicit: bool) -> None:
    await serve_stdio(registry, actor, search_tool=search, elicit=elicit)


async def _http(
    registry: Registry,
    verifier: StaticTokenVerifier | JwtVerifier | None,
    actor: Actor | None,
    host: str,
    port: int,
    search: bool | None,
    ready: Callable[[str], None] | None,
    sock: socket.socket | None = None,
    elicit: bool = False,
    server: AuthorizationServer | None = None,
) -> None:
    auth = server.auth_settings() if server is not None else None
    await serve_http(
        registry,
        verifier=verifier,
        auth=auth,
        actor=actor,
        host=host,
        port=port,
        search_tool=search,
        on_ready=ready,
        sock=sock,
        elicit=elicit,
        settle_heap=True,
    )


def _token_source(
    tokens_file: Path | None, auth_server_file: Path | None, no_auth: bool, scopes: str | None
) -> tuple[StaticTokenVerifier | JwtVerifier | None, AuthorizationServer | None]:
    """The token verifier of ``--tokens`` or ``--authorization-server`` (None with ``--no-auth``) and
    the authorization server; exit 2 unless exactly one source is given, when ``--scopes`` comes with
    tokens, or on a bad file (located). Prints the token file's warnings."""
    given = (("--tokens", tokens_file), ("--authorization-server", auth_server_file), ("--no-auth", no_auth))
    sources = [name for name, value in given if value]
    if len(sources) > 1:
        _bad(f"{' and '.join(sources)} exclude each other: give one token source")
    if not sources:
        _bad(
            "--http needs --tokens FILE or --authorization-server FILE (callers and their scopes); "
            "--no-auth serves without authentication"
        )
    if not no_auth and scopes is not None:
        _bad(f"with {sources[0]} each token's scopes apply: drop --scopes")
    if auth_server_file is not None:
        try:
            server = load_authorization_server(auth_server_file)
        except AuthorizationServerError as exc:
            _bad(str(exc))
        return JwtVerifier(server), server
    if tokens_file is None:
        return None, None
    try:
        verifier, warnings = load_token_file(tokens_file)
    except TokenFileError as exc:
        _bad(str(exc))
    for warning in warnings:
        click.echo(f"toolgen serve: warning: {warning}", err=True)
    return verifier, None


def _caller_credentials(
    server: AuthorizationServer | None, secrets_file: Path | None
) -> CallerCredentials | None:
    """Where callers' own credentials come from: the authorization server's token-exchange client
    (``token_exchange:`` of ``--authorization-server``) and ``--caller-secrets``; exit 2 on a bad
    caller secrets file."""
    exchange = TokenExchange(server.exchange) if server is not None and server.exchange is not None else None
    secrets = None
    if secrets_file is not None:
        try:
            secrets = load_caller_secrets(secrets_file)
        except CallerSecretsError as exc:
            _bad(str(exc))
    return CallerCredentials(exchange, secrets) if exchange is not None or secrets is not None else None


def shared_write_warnings(registry: Registry, *, many: bool) -> list[str]:
    """With several callers (`many`), one line per security scheme whose writes act for every caller
    with one shared credential (no ``per_caller``, or ``service_secret: always``), naming the write
    tools; and one per ``per_caller`` scheme whose source this server lacks."""
    if not many:
        return []
    shared: dict[str, list[str]] = {}
    unsourced: dict[str, str] = {}
    sources = registry.caller_credentials
    for name, spec in sorted(registry.specs.items()):
        for entry in spec.row.auth:
            per = entry.per_caller
            source = (
                None
                if sources is None
                else sources.exchange
                if per and per.via == "exchange"
                else sources.secrets
            )
            if per is not None and source is None:
                unsourced[entry.scheme] = per.via
            if spec.mutating and (per is None or per.service_secret == "always"):
                shared.setdefault(entry.scheme, []).append(name)
    lines = [
        f"writes of scheme {scheme!r} use one shared credential for every caller "
        f"({', '.join(tools[:4])}{', ...' if len(tools) > 4 else ''}): each caller acts as the service; "
        "declare `per_caller:` for it in the intent map's `auth:`"
        for scheme, tools in shared.items()
    ]
    lines += [
        f"scheme {scheme!r} takes each caller's own credential (via {via}), and this server has no "
        + ("token_exchange in --authorization-server" if via == "exchange" else "--caller-secrets")
        + ": its calls answer missing_credential"
        for scheme, via in unsourced.items()
    ]
    return lines


def _registry_mode(approvals: str) -> str:
    """The registry's approvals mode for ``--approvals``: ``elicit`` is ``issued`` with approvals
    asked in the protocol (the server issues one when the user approves)."""
    return "issued" if approvals == "elicit" else approvals


def _scheme(receipts_spec: str | None) -> str | None:
    """The kind of receipt store ``--receipts`` (or its environment default) names; None if unknown
    (open_registry then reports it)."""
    text = receipts_spec or os.environ.get("TOOLGEN_RECEIPTS") or str(DEFAULT_RECEIPTS_PATH)
    try:
        return receipts_scheme(text)
    except ValueError:
        return None


def _warn_startup(registry: Registry, base_url: str | None, search: bool | None) -> None:
    """`startup_warnings`, and when the meta-tool is served (`search`: None = when tools are deferred)
    a ``search.json`` its index would not use (`toolgen.runtime.serving.search_tools.index_warnings`)."""
    warnings = [*startup_warnings(registry, base_url_given=base_url is not None)]
    if has_deferred(registry) if search is None else search:
        warnings += [f"[{w.code}] {w}" for w in index_warnings(registry)]
    for warning in warnings:
        click.echo(f"toolgen serve: warning: {warning}", err=True)


def _start_telemetry(otel: bool, workers: int) -> None:
    """Install OpenTelemetry's SDK when `--otel` or the ``OTEL_*`` environment asks for export
    (`toolgen.runtime.telemetry.install_sdk`); exit 2 naming the ``otel`` extra when it is missing,
    or with more than one worker."""
    if not export_asked(otel, os.environ):
        return
    if workers != 1:
        _bad(
            "--otel (or the OTEL_* environment) serves with --workers 1 only: each worker would export alone"
        )
    try:
        install_sdk()
    except ImportError as exc:
        _bad(
            f"exporting traces needs OpenTelemetry's SDK and OTLP exporter ({type(exc).__name__}: {exc}); "
            "install the otel extra: " + EXTRA_HINT.format(extra="otel")
        )


def _require_mcp() -> None:
    """Exit 2, naming the ``mcp`` extra, when the MCP SDK cannot be imported (it is optional: `toolgen
    build`, `call` and the runtime work without it; serving needs it)."""
    for module in ("mcp", "mcp_types"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            _bad(
                f"serving needs the MCP SDK, and the {module!r} package is not installed "
                f"({type(exc).__name__}: {exc}); install the mcp extra: " + EXTRA_HINT.format(extra="mcp")
            )


def _bad(message: str) -> NoReturn:
    click.echo(f"toolgen serve: {message}", err=True)
    sys.exit(2)
