"""Tools by identity: what a caller's scopes let it see (tools/list, search_tools, exported
catalogs) and call, over MCP Streamable HTTP with bearer tokens (the real SDK client and server on
loopback, the loopback tickets API upstream), and the `toolgen serve --http` process. The token files
are tested in `test_runtime_token_files.py`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.http_serving import http_server
from tests.support.policy_rows import typed_row
from tests.support.profiles import examples
from tests.support.runtime_env import READER, WRITER, mcp_json, tickets_dir
from tests.support.token_files import SCOPES, TOKENS, write_token_file

from toolgen.cli import main
from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials, ToolIndex
from toolgen.runtime.identity import filter_catalog, permits
from toolgen.runtime.serving.mcp_http import StaticTokenVerifier, load_token_file, serve_http, token_sha256
from toolgen.search.tool import SEARCH_TOOL_NAME, SEARCH_TOOL_OUTPUT_SCHEMA, mcp_search_tool
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

TOOLGEN = str(Path(sys.executable).parent / "toolgen")
READ_TOOLS = ["get_ticket", "get_ticket_history", "get_ticket_view", "list_tickets"]
WRITE_TOOLS = [
    "preview_escalate_ticket",
    "preview_ticket_followup",
    "record_escalate_ticket",
    "record_ticket_followup",
]
DELETE_TOOLS = ["preview_ticket_delete", "record_ticket_delete"]


def policy_and_catalog() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    folder = tickets_dir()
    return (
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
    )


def make_registry(server: TicketsServer, *, deferred: tuple[str, ...] = ()) -> Registry:
    policy, catalog = policy_and_catalog()
    for row in policy["tools"]:
        if row["tool"] in deferred:
            row["loading"] = "deferred"
    return Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


@pytest.fixture
def token_verifier(tmp_path: Path) -> StaticTokenVerifier:
    return load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]


@asynccontextmanager
async def connect(url: str, token: str | None, mode: str = "auto") -> AsyncIterator[Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error is True, result
    assert result.structured_content is None  # an error never claims to be a result
    return dict(mcp_json(result)["error"])


# ------------------------------------------------------------------------------------------------
# the rule and catalogs cut down to it


@given(st.sets(st.sampled_from((*SCOPES, "other:scope"))), st.sets(st.sampled_from(SCOPES)))
def test_permits_is_all_of_the_rows_scopes(held: set[str], required: set[str]) -> None:
    assert permits(typed_row({"permission": sorted(required)}), held) is (required <= held)
    assert permits(typed_row({}), held) is True


@settings(max_examples=examples(60), deadline=None)
@given(st.sets(st.sampled_from(READ_TOOLS + WRITE_TOOLS + DELETE_TOOLS)))
def test_filter_catalog_drops_exactly_the_hidden_tools_in_every_dialect(hidden: set[str]) -> None:
    for dialect in ("mcp", "openai", "anthropic", "gemini"):
        document = json.loads((tickets_dir() / f"{dialect}.json").read_text(encoding="utf-8"))
        before = json.dumps(document)
        kept = filter_catalog(document, hidden)
        names = [e["function"]["name"] if "function" in e else e["name"] for e in document]
        assert [e["function"]["name"] if "function" in e else e["name"] for e in kept] == [
            n for n in names if n not in hidden
        ]
        assert json.dumps(document) == before  # the input is not modified


def test_filter_catalog_groups_and_foreign_entries() -> None:
    """Namespaces are filtered inside and dropped when emptied; entries that are no tool of the
    package (a hosted tool_search entry, the search meta-tool) stay."""
    document = {
        "tools": [
            {
                "type": "namespace",
                "name": "tickets",
                "tools": [
                    {"type": "function", "name": "get_ticket"},
                    {"type": "function", "name": "record_ticket_delete"},
                ],
            },
            {
                "type": "namespace",
                "name": "danger",
                "tools": [{"type": "function", "name": "record_ticket_delete"}],
            },
            {"type": "namespace", "name": "empty", "tools": []},
            {"type": "tool_search"},
            {"name": SEARCH_TOOL_NAME},
        ]
    }
    kept = filter_catalog(document, {"record_ticket_delete"})
    assert kept == {
        "tools": [
            {"type": "namespace", "name": "tickets", "tools": [{"type": "function", "name": "get_ticket"}]},
            {"type": "namespace", "name": "empty", "tools": []},
            {"type": "tool_search"},
            {"name": SEARCH_TOOL_NAME},
        ]
    }


def scope_sets() -> Iterator[frozenset[str]]:
    for n in range(len(SCOPES) + 1):
        for combo in combinations(SCOPES, n):
            yield frozenset(combo)


def test_registry_search_and_catalog_command_agree_on_what_a_caller_sees() -> None:
    """One rule for tools/list, search and exported catalogs, for every set of the package's scopes."""
    with Registry.from_dir(tickets_dir()) as reg:
        index = ToolIndex.from_registry(reg)
        for held in scope_sets():
            actor = Actor("someone", held)
            visible = reg.visible_tools(actor)
            assert visible == sorted(n for n in reg.tool_names() if permits(reg.row(n), held))
            assert [e["name"] for e in reg.visible_catalog(actor)] == visible
            found = {
                hit.tool
                for q in ("ticket", "delete a ticket", "add a note", "history")
                for hit in index.search(q, scopes=held, limit=50)
            }
            assert found <= set(visible)
            for dialect in ("mcp", "openai", "anthropic", "gemini"):
                out = CliRunner().invoke(
                    main,
                    ["catalog", str(tickets_dir()), "--dialect", dialect, "--scopes", ",".join(sorted(held))],
                )
                assert out.exit_code == 0, out.output
                names = [
                    e["function"]["name"] if "function" in e else e["name"] for e in json.loads(out.output)
                ]
                assert sorted(names) == visible, (dialect, held)


def test_catalog_command_bad_input() -> None:
    out = CliRunner().invoke(main, ["catalog", "no-such-api", "--scopes", "a"])
    assert out.exit_code == 2 and "no-such-api" in out.output
    out = CliRunner().invoke(main, ["catalog", str(tickets_dir())])
    assert out.exit_code == 2 and "--scopes" in out.output


def test_unknown_tool_error_lists_only_visible_tools(registry: Registry) -> None:
    res = registry.call("no_such_tool", {}, actor=READER)
    assert res.error is not None and res.error.code == "unknown_tool"
    assert res.error.details["available"] == READ_TOOLS


def test_refuse_hidden_says_nothing_about_the_schema(registry: Registry, server: TicketsServer) -> None:
    refused = registry.refuse_hidden("record_ticket_delete", READER)
    assert refused is not None and refused.error is not None
    assert refused.error.code == "permission_denied"
    assert set(refused.error.details) == {"missing", "required"}
    assert registry.refuse_hidden("get_ticket", READER) is None
    assert registry.refuse_hidden("no_such_tool", READER) is None
    events = [(e.step, e.decision, e.code) for e in registry.audit.events if e.tool == "record_ticket_delete"]  # type: ignore[attr-defined]
    assert ("permission", "deny", "permission_denied") in events
    assert server.requests_for("DELETE") == []


# ------------------------------------------------------------------------------------------------
# MCP over Streamable HTTP, real SDK client and server on loopback


@pytest.mark.anyio
async def test_http_tokens_see_different_tool_lists_in_both_protocol_eras(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    registry = make_registry(server)
    expected = {
        "reader": READ_TOOLS,
        "writer": sorted(READ_TOOLS + WRITE_TOOLS),
        "admin": sorted(READ_TOOLS + WRITE_TOOLS + DELETE_TOOLS),
    }
    catalog = {e["name"]: e for e in policy_and_catalog()[1]}
    async with http_server(registry, verifier=token_verifier) as url:
        for mode in ("auto", "legacy"):
            for actor, (token, _) in TOKENS.items():
                async with connect(url, token, mode) as client:
                    listed = await client.list_tools()
                    assert [t.name for t in listed.tools] == expected[actor], (mode, actor)
                    for tool in listed.tools:
                        assert tool.input_schema == catalog[tool.name]["inputSchema"]
                    if mode == "auto":
                        assert client.protocol_version == "2026-07-28"
                        assert listed.cache_scope == "private" and listed.ttl_ms > 0
                    else:
                        assert client.protocol_version == "2025-11-25"
        async with connect(url, TOKENS["reader"][0]) as client:
            ok = await client.call_tool("get_ticket", {"ticket_id": "T-102"})
            assert ok.is_error is False and ok.structured_content["id"] == "T-102"
    events = [e for e in registry.audit.events if e.tool == "get_ticket"]  # type: ignore[attr-defined]
    assert events and {e.actor for e in events} == {"reader"}


@pytest.mark.anyio
async def test_http_forged_or_missing_token_gets_401_and_nothing(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    from mcp.shared.exceptions import MCPError

    registry = make_registry(server)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "record_ticket_delete", "arguments": {"ticket_id": "T-100", "action_id": "a"}},
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    async with http_server(registry, verifier=token_verifier) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            for auth in (
                None,
                "Bearer forged-token",
                f"Bearer {token_sha256(TOKENS['admin'][0])}",
                f"Basic {TOKENS['admin'][0]}",
                f"Bearer {TOKENS['admin'][0]}x",
                "Bearer",
            ):
                for body in (listing, call):
                    sent = dict(headers, **({"Authorization": auth} if auth else {}))
                    response = await http.post(url, json=body, headers=sent)
                    assert response.status_code == 401, (auth, response.text)
                    challenge = response.headers["www-authenticate"]
                    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
                    assert "ticket" not in response.text
        with pytest.raises(BaseException) as caught:
            async with connect(url, "forged-token") as client:
                await client.list_tools()
        assert any(isinstance(e, MCPError) for e in leaves(caught.value)), repr(caught.value)
    assert server.state.requests == []
    assert [e for e in registry.audit.events if e.tool == "record_ticket_delete"] == []  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_http_hidden_tool_called_by_name_is_permission_denied(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    from mcp.shared.exceptions import MCPError

    registry = make_registry(server)
    async with http_server(registry, verifier=token_verifier) as url:
        async with connect(url, TOKENS["reader"][0]) as client:
            for args in ({"ticket_id": "T-100", "action_id": "d-1"}, {"ticket_id": 12, "bogus": True}, {}):
                denied = await client.call_tool("record_ticket_delete", args)
                error = error_of(denied)
                assert error["code"] == "permission_denied"
                assert error["details"] == {"missing": ["ticket:delete"], "required": ["ticket:delete"]}
                text = denied.content[0].text
                assert denied.structured_content is None
                assert "inputSchema" not in text and "pointer" not in text and "action_id" not in text
            preview = await client.call_tool(
                "preview_ticket_followup", {"ticket_id": "T-100", "note": "x", "visibility": "public"}
            )
            assert error_of(preview)["code"] == "permission_denied"
            with pytest.raises(MCPError):
                await client.call_tool("no_such_tool", {})
        async with connect(url, TOKENS["admin"][0]) as client:
            preview = await client.call_tool("preview_ticket_delete", {"ticket_id": "T-100"})
            assert preview.is_error is False
    assert server.side_effects["deleteTicket"] == 0 and server.requests_for("DELETE") == []
    denies = [
        e
        for e in registry.audit.events  # type: ignore[attr-defined]
        if e.tool == "record_ticket_delete" and e.decision == "deny"
    ]
    assert len(denies) == 3 and {e.actor for e in denies} == {"reader"}


@pytest.mark.anyio
async def test_http_search_tools_respects_scopes_and_returns_full_definitions(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    registry = make_registry(server)
    catalog = {e["name"]: e for e in policy_and_catalog()[1]}
    async with http_server(registry, verifier=token_verifier, search_tool=True) as url:
        async with connect(url, TOKENS["reader"][0]) as client:
            listed = await client.list_tools()
            assert SEARCH_TOOL_NAME in [t.name for t in listed.tools]
            meta = next(t for t in listed.tools if t.name == SEARCH_TOOL_NAME)
            # the kernel's entry (no deferred row here: no toolset named), as the build writes it
            assert meta.model_dump(by_alias=True, exclude_none=True, mode="json") == mcp_search_tool([])
            found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "delete a ticket", "limit": 10})
            assert found.is_error is False
            jsonschema.validate(found.structured_content, SEARCH_TOOL_OUTPUT_SCHEMA)
            names = [t["name"] for t in found.structured_content["tools"]]
            assert names and set(names) <= set(READ_TOOLS)
            assert {h["tool"] for h in found.structured_content["hits"]} <= set(names)
            bad = await client.call_tool(SEARCH_TOOL_NAME, {"query": "", "limit": 0})
            assert error_of(bad)["code"] == "invalid_arguments" and error_of(bad)["details"]["pointer"] in (
                "/query",
                "/limit",
            )
            missing = await client.call_tool(SEARCH_TOOL_NAME, {})
            assert error_of(missing)["details"]["pointer"] == "/query"
        async with connect(url, TOKENS["admin"][0]) as client:
            found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "delete a ticket", "limit": 1})
            tools = found.structured_content["tools"]
            assert [t["name"] for t in tools] == ["preview_ticket_delete", "record_ticket_delete"]
            assert [h["tool"] for h in found.structured_content["hits"]] == ["record_ticket_delete"]
            for tool in tools:
                expected = catalog[tool["name"]]
                assert tool == expected  # name, title, description, inputSchema, outputSchema, annotations


@pytest.mark.anyio
async def test_http_deferred_tools_are_searched_not_listed_and_still_callable(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    deferred = ("get_ticket_history", "list_tickets", "preview_ticket_delete", "record_ticket_delete")
    registry = make_registry(server, deferred=deferred)
    async with http_server(registry, verifier=token_verifier) as url:  # search_tool=None: auto
        async with connect(url, TOKENS["admin"][0]) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            assert not set(deferred) & set(listed)
            assert SEARCH_TOOL_NAME in listed and "get_ticket" in listed
            found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "show me all the tickets"})
            assert "list_tickets" in [t["name"] for t in found.structured_content["tools"]]
            page = await client.call_tool("list_tickets", {})
            assert page.is_error is False and page.structured_content["items"], page
        async with connect(url, TOKENS["reader"][0]) as client:
            found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "delete a ticket", "limit": 20})
            assert not {t["name"] for t in found.structured_content["tools"]} & set(DELETE_TOOLS)
            denied = await client.call_tool("record_ticket_delete", {"ticket_id": "T-101", "action_id": "z"})
            assert error_of(denied)["code"] == "permission_denied"
    assert server.requests_for("GET", "/tickets") and server.requests_for("DELETE") == []


@pytest.mark.anyio
async def test_http_pluggable_verifier_as_oauth_resource_server(server: TicketsServer) -> None:
    """A deployment's own TokenVerifier plus AuthSettings: the actor is the token's subject, and a
    401 points to the Protected Resource Metadata (RFC 9728), which the server serves."""
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

    class Introspecting:
        async def verify_token(self, token: str) -> AccessToken | None:
            if token == "opaque-alice":
                return AccessToken(
                    token=token, client_id="agent-app", scopes=["ticket:read"], subject="alice"
                )
            return None

    auth = AuthSettings(
        issuer_url="https://auth.example.test",
        resource_server_url="https://mcp.example.test/mcp",
        validate_token_resource=False,
        required_scopes=[],
    )
    registry = make_registry(server)
    async with http_server(registry, verifier=Introspecting(), auth=auth) as url:
        async with connect(url, "opaque-alice") as client:
            assert [t.name for t in (await client.list_tools()).tools] == READ_TOOLS
            assert (await client.call_tool("get_ticket", {"ticket_id": "T-103"})).is_error is False
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert response.status_code == 401
            assert (
                'resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"'
                in response.headers["www-authenticate"]
            )
            origin = url.removesuffix("/mcp")
            metadata = (await http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["authorization_servers"] == ["https://auth.example.test"]
    assert {e.actor for e in registry.audit.events if e.tool == "get_ticket"} == {"alice"}  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_http_no_auth_serves_the_fixed_actor_and_needs_it_explicitly(server: TicketsServer) -> None:
    registry = make_registry(server)
    with pytest.raises(ValueError, match="token verifier"):
        await serve_http(registry, port=0)
    async with http_server(registry, actor=WRITER) as url, connect(url, None) as client:
        assert [t.name for t in (await client.list_tools()).tools] == sorted(READ_TOOLS + WRITE_TOOLS)
        denied = await client.call_tool("record_ticket_delete", {"ticket_id": "T-100", "action_id": "n"})
        assert error_of(denied)["code"] == "permission_denied"


# ------------------------------------------------------------------------------------------------
# the `toolgen serve --http` process


def serve_process(tmp_path: Path, server: TicketsServer, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, TICKETS_TOKEN=server.token)
    env.pop("TOOLGEN_SCOPES", None)
    return subprocess.Popen(
        [
            TOOLGEN,
            "serve",
            str(tickets_dir()),
            "--base-url",
            server.base_url,
            "--receipts",
            str(tmp_path / "r.sqlite3"),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


async def served_url(proc: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The URL a `toolgen serve --http` process says it serves, read from its stderr (within 30 s),
    and the stderr lines up to and including the one that says it."""
    assert proc.stderr is not None
    lines: list[str] = []
    with anyio.fail_after(30):
        while True:
            line = await anyio.to_thread.run_sync(proc.stderr.readline)
            assert line, "the server exited before serving"
            lines.append(line)
            if "serving MCP on " in line:
                return line.split("serving MCP on ", 1)[1].split()[0], lines


@pytest.mark.anyio
async def test_cli_serve_http_reports_its_url_serves_and_stops_cleanly(
    server: TicketsServer, tmp_path: Path
) -> None:
    tokens = write_token_file(tmp_path / "tokens.yaml")
    proc = serve_process(
        tmp_path, server, "--http", "127.0.0.1:0", "--tokens", str(tokens), "--search-tool", "always"
    )
    try:
        url, _ = await served_url(proc)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with connect(url, TOKENS["writer"][0]) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            assert listed == sorted([*READ_TOOLS, *WRITE_TOOLS, SEARCH_TOOL_NAME])
            ok = await client.call_tool("get_ticket", {"ticket_id": "T-105"})
            assert ok.is_error is False
        proc.send_signal(signal.SIGTERM)
        _, err = await anyio.to_thread.run_sync(partial(proc.communicate, timeout=30))
        assert proc.returncode == 0, err
        assert "stopped" in err
        for token, _ in TOKENS.values():
            assert token not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--http", "127.0.0.1:0"], "--http needs --tokens"),
        (["--http", "nonsense"], "HOST:PORT"),
        (["--http", "127.0.0.1:0", "--no-auth", "--tokens", "t.yaml"], "exclude each other"),
        (["--http", "127.0.0.1:0", "--tokens", "t.yaml", "--scopes", "ticket:read"], "drop --scopes"),
        (["--tokens", "t.yaml"], "apply to --http only"),
        (["--http", "127.0.0.1:0", "--tokens", "bad.yaml"], "bad.yaml:2:5: unknown key 'who'"),
    ],
)
def test_cli_serve_http_bad_input_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    """In-process (the command refuses before it serves anything); the real process is the next test's."""
    (tmp_path / "bad.yaml").write_text("tokens:\n  - who: x\n", encoding="utf-8")
    write_token_file(tmp_path / "t.yaml")
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["serve", str(tickets_dir()), "--receipts", "memory://", *args])
    assert result.exit_code == 2, result.output
    assert says in result.stderr


def test_cli_serve_http_bad_input_exits_2_from_a_real_process(tmp_path: Path) -> None:
    write_token_file(tmp_path / "t.yaml")
    env = dict(os.environ)
    env.pop("TOOLGEN_SCOPES", None)
    proc = subprocess.run(
        [
            TOOLGEN,
            "serve",
            str(tickets_dir()),
            "--receipts",
            "memory://",
            "--http",
            "127.0.0.1:0",
            "--tokens",
            "t.yaml",
            "--scopes",
            "ticket:read",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "drop --scopes" in proc.stderr


def test_cli_serve_http_no_auth_warns_loudly(server: TicketsServer, tmp_path: Path) -> None:
    proc = serve_process(tmp_path, server, "--http", "127.0.0.1:0", "--no-auth", "--scopes", "ticket:read")
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "serving MCP on " in line:
                break
        text = "".join(seen)
        assert "WARNING: --no-auth" in text and "NO AUTHENTICATION" in text
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_search_tool_definition_is_a_valid_mcp_tool() -> None:
    import mcp_types as types

    from toolgen.dialects.mcp import check_mcp_catalog

    entry = mcp_search_tool(["issues", "pulls"])
    tool = types.Tool.model_validate(entry)
    assert (
        tool.name == "search_tools"
        and tool.annotations is not None
        and tool.annotations.read_only_hint is True
    )
    assert entry["inputSchema"]["required"] == ["query"]
    assert set(entry["inputSchema"]["properties"]) == {"query", "limit"}
    assert check_mcp_catalog([entry]) == [] and check_mcp_catalog([mcp_search_tool([])]) == []


def test_parse_address_defaults_to_loopback_and_refuses_bare_ipv6() -> None:
    import click

    from toolgen.cli.serve import parse_address

    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address(":8080") == ("127.0.0.1", 8080)
    assert parse_address("8080") == ("127.0.0.1", 8080)
    assert parse_address("[::1]:8080") == ("::1", 8080)
    for bad in ("::1", "host", "host:", "127.0.0.1:65536", "127.0.0.1:-1"):
        with pytest.raises(click.BadParameter):
            parse_address(bad)


@pytest.mark.anyio
async def test_fixed_actor_server_lists_by_identity_and_serves_search(server: TicketsServer) -> None:
    """The stdio server's handlers, in process: the same list, search and refusal rules."""
    from mcp import Client

    from toolgen.runtime.serving.mcp_server import build_server

    registry = make_registry(server)
    async with Client(build_server(registry, READER, search_tool=True)) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == sorted([*READ_TOOLS, SEARCH_TOOL_NAME])
        found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "add a follow-up note to a ticket"})
        assert not {t["name"] for t in found.structured_content["tools"]} & set(WRITE_TOOLS)
        denied = await client.call_tool("record_ticket_followup", {"ticket_id": "T-1", "note": 5})
        assert error_of(denied)["code"] == "permission_denied"
    async with Client(build_server(registry, WRITER)) as client:  # no deferred row: no meta-tool
        from mcp.shared.exceptions import MCPError

        assert SEARCH_TOOL_NAME not in [t.name for t in (await client.list_tools()).tools]
        with pytest.raises(MCPError):
            await client.call_tool(SEARCH_TOOL_NAME, {"query": "x"})
    policy, catalog = policy_and_catalog()
    policy["tools"][0] = dict(policy["tools"][0], tool=SEARCH_TOOL_NAME)
    catalog = [
        dict(e, name=SEARCH_TOOL_NAME) if e["name"] == policy_and_catalog()[0]["tools"][0]["tool"] else e
        for e in catalog
    ]
    with pytest.raises(ValueError, match="search meta-tool"):
        build_server(Registry(policy, list(catalog)), READER, search_tool=True)
    with pytest.raises(ValueError, match="exactly one"):
        build_server(registry, None)


@pytest.mark.anyio
async def test_http_responses_do_not_wait_for_delayed_acks(
    server: TicketsServer, token_verifier: StaticTokenVerifier
) -> None:
    """The listening socket is created by toolgen (to report the bound port); asyncio disables Nagle's
    algorithm only on sockets that say they are TCP. Without it every answer written in two parts
    (headers, then body) waits for the client's delayed ACK: about 40 ms per request on Linux."""
    import statistics
    import time

    registry = make_registry(server)
    async with http_server(registry, verifier=token_verifier) as url, httpx2.AsyncClient(timeout=30) as http:
        elapsed = []
        for _ in range(21):
            start = time.perf_counter()
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            elapsed.append(time.perf_counter() - start)
            assert response.status_code == 401
    assert statistics.median(elapsed) < 0.035, (
        f"median {statistics.median(elapsed) * 1000:.1f} ms per request"
    )
