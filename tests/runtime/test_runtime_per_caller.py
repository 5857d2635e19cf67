"""Per-caller upstream credentials (``auth[].per_caller``): each caller reaches the API as itself.

A real authorization server on loopback (authlib's token endpoint with an RFC 8693 token-exchange
grant) exchanges each caller's access token for one for the API; the loopback tickets API accepts
only tokens that server issued for it, and records who called. Two callers over the real MCP client
and `toolgen serve --http` reach the API with their own exchanged tokens, cached per caller; a
caller without one never borrows another's or the service's for a write; the exchanged tokens never
appear in outputs, logs, audit or receipts. The lookup source (a caller secrets file) is checked the
same way."""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.http_serving import http_server
from tests.support.profiles import examples
from tests.support.runtime_env import mcp_json, tickets_dir

from toolgen.runtime import (
    Actor,
    Approval,
    JsonlAuditSink,
    MemoryAuditSink,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
)
from toolgen.runtime.call.caller_credentials import (
    CallerCredentials,
    CallerSecretsError,
    TokenExchange,
    TokenExchangeClient,
    load_caller_secrets,
)
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.serving.access_tokens import JwtVerifier
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
pytest.importorskip("authlib")
httpx2 = pytest.importorskip("httpx2")

from tests.support.authorization_server import TOKEN_EXCHANGE, Client
from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
UPSTREAM = "https://api.tickets.example.test"
CLIENT_SECRET = "exchange-client-secret-" + secrets.token_hex(4)
SERVICE_TOKEN = "service-token-shared-9c1e"
WRITE_SCOPES = ["ticket:read", "ticket:write"]


@pytest.fixture(scope="module")
def auth_server() -> Iterator[LoopbackAS]:
    clients = {
        "toolgen": Client("toolgen", CLIENT_SECRET, (TOKEN_EXCHANGE,), audiences=(UPSTREAM,)),
        "narrow": Client("narrow", "narrow-secret", (TOKEN_EXCHANGE,), audiences=()),
    }
    with LoopbackAS(RESOURCE, clients) as server:
        yield server


class Upstream:
    """The tickets API accepting the service's token and tokens the authorization server issued for
    it; `callers` lists, per request, who it acted for (``service``, the token's ``sub``, or None)."""

    def __init__(self, auth: LoopbackAS, keys: dict[str, str] | None = None) -> None:
        self.auth, self.keys = auth, keys or {}
        self.callers: list[str | None] = []
        self.server = TicketsServer(accepts=self.accepts)

    def accepts(self, value: str | None) -> bool:
        who = self.who(value)
        self.callers.append(who)
        return who is not None

    def who(self, value: str | None) -> str | None:
        token = (value or "").removeprefix("Bearer ")
        if token == SERVICE_TOKEN:
            return "service"
        if token in self.keys:
            return "key:" + self.keys[token]
        claims = self.auth.verify(token, audience=UPSTREAM)
        if claims is None or claims.get("act", {}).get("sub") != "toolgen":
            return None
        return str(claims["sub"])


@pytest.fixture
def upstream(auth_server: LoopbackAS) -> Iterator[Upstream]:
    api = Upstream(auth_server)
    with api.server:
        yield api


def per_caller_policy(per: dict[str, Any] | None) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    policy = json.loads((tickets_dir() / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((tickets_dir() / "mcp.json").read_text(encoding="utf-8"))

    def visit(row: dict[str, Any]) -> None:
        for entry in row["auth"]:
            entry["per_caller"] = per
        for step in (row.get("composite") or {}).get("steps", []):
            visit(step["row"])

    for row in policy["tools"]:
        visit(row)
    return policy, catalog


def exchange_per_caller(service_secret: str = "never") -> dict[str, Any]:
    return {
        "via": "exchange",
        "audience": UPSTREAM,
        "resource": None,
        "scope": None,
        "service_secret": service_secret,
    }


def make_registry(  # noqa: PLR0913
    auth: LoopbackAS,
    api: Upstream,
    *,
    per: dict[str, Any] | None,
    tmp_path: Path,
    client_id: str = "toolgen",
    secret: str = CLIENT_SECRET,
    clock: ManualClock | None = None,
    lookup: Any = None,
    audit: Any = None,
) -> Registry:
    policy, catalog = per_caller_policy(per)
    clock = clock or ManualClock()
    exchange = TokenExchange(TokenExchangeClient(auth.url + "/token", client_id, secret), clock=clock)
    return Registry(
        policy,
        catalog,
        base_url=api.server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": SERVICE_TOKEN}),
        receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3", clock=clock),
        audit=audit or MemoryAuditSink(),
        cursor_key=b"k" * 32,
        clock=clock,
        caller_credentials=CallerCredentials(exchange=exchange, secrets=lookup),
    )


def caller(auth: LoopbackAS, name: str, scopes: list[str] = WRITE_SCOPES) -> Actor:
    return Actor.of(name, scopes, token=auth.access_token(name, scopes))


def write(reg: Registry, actor: Actor, key: str | None = None) -> Any:
    """Preview and record a follow-up note (a new one each time) as `actor`, approved."""
    args = {
        "ticket_id": "T-102",
        "note": f"Called back by {actor.id} ({secrets.token_hex(4)}).",
        "visibility": "public",
    }
    preview = reg.call("preview_ticket_followup", args, actor=actor)
    assert preview.ok and preview.result is not None, preview.to_json()
    preview_id = preview.result["preview_id"]
    return reg.call(
        "record_ticket_followup",
        {"preview_id": preview_id, "action_id": key or secrets.token_hex(4)},
        actor=actor,
        approval=Approval(preview_id, approved_by="human"),
    )


def test_each_caller_reads_and_writes_with_its_own_exchanged_token(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    reg = make_registry(auth_server, upstream, per=exchange_per_caller(), tmp_path=tmp_path)
    alice, bob = caller(auth_server, "alice"), caller(auth_server, "bob")
    exchanges = len(auth_server.token_requests)
    for actor in (alice, bob, alice, bob):
        assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=actor).ok
    assert write(reg, alice).ok and write(reg, bob).ok
    assert upstream.callers == ["alice", "bob", "alice", "bob", "alice", "bob"]
    assert len(auth_server.token_requests) - exchanges == 2  # one exchange per caller, then the cache
    assert "service" not in upstream.callers


def test_the_cache_is_per_caller_token_and_ends_with_the_exchanged_token(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    clock = ManualClock()
    reg = make_registry(auth_server, upstream, per=exchange_per_caller(), tmp_path=tmp_path, clock=clock)
    alice = caller(auth_server, "alice")
    before = len(auth_server.token_requests)
    assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=alice).ok
    assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=alice).ok
    assert len(auth_server.token_requests) - before == 1
    # a new access token of the same caller is exchanged again (its scopes may differ)
    assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=caller(auth_server, "alice")).ok
    assert len(auth_server.token_requests) - before == 2
    clock.advance(auth_server.exchanged_ttl_s)  # past expires_in (less its margin): exchanged again
    assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=alice).ok
    assert len(auth_server.token_requests) - before == 3
    credential = [e for e in reg.audit.events if e.step == "credential"]  # type: ignore[attr-defined]
    assert [e.detail["source"] for e in credential] == ["exchange", "cache", "exchange", "exchange"]
    assert {e.rule for e in credential} == {"/auth/0/per_caller"} and {e.decision for e in credential} == {
        "allow"
    }


@pytest.mark.parametrize(
    ("service_secret", "read", "write_"),
    [("never", None, None), ("reads", "service", None), ("always", "service", "service")],
)
def test_a_caller_without_a_token_uses_the_service_credential_only_where_the_map_says(
    auth_server: LoopbackAS,
    upstream: Upstream,
    tmp_path: Path,
    service_secret: str,
    read: str | None,
    write_: str | None,
) -> None:
    reg = make_registry(auth_server, upstream, per=exchange_per_caller(service_secret), tmp_path=tmp_path)
    anonymous = Actor.of(
        "carol", WRITE_SCOPES
    )  # authenticated without a JWT (a token file): no subject token
    got = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=anonymous)
    assert got.ok is (read is not None), got.to_json()
    sent = list(upstream.callers)
    assert sent == ([read] if read else [])
    done = write(reg, anonymous)
    assert done.ok is (write_ is not None)
    assert upstream.callers[len(sent) :] == ([write_] if write_ else [])
    if write_ is None:
        assert done.error is not None and done.error.code == "missing_credential"
        assert done.error.details["per_caller"] is True and SERVICE_TOKEN not in json.dumps(done.to_json())
        audit: Any = reg.audit
        refused = [e for e in audit.events if e.call_id == done.call_id and e.step == "credential"]
        assert [(e.decision, e.rule) for e in refused] == [("deny", "/auth/0/per_caller")]


def test_a_refused_exchange_sends_nothing(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    for client_id, secret, status in (("narrow", "narrow-secret", 400), ("toolgen", "wrong-secret", 401)):
        reg = make_registry(
            auth_server,
            upstream,
            per=exchange_per_caller("always"),
            tmp_path=tmp_path,
            client_id=client_id,
            secret=secret,
        )
        result = write(reg, caller(auth_server, "alice"))
        assert result.error is not None and result.error.code == "credential_unavailable", result.to_json()
        assert result.error.retryable is False and result.error.details["status"] == status
        assert upstream.callers == []  # never the service's credential, even with service_secret: always


def test_an_unreachable_token_endpoint_is_retryable_and_sends_nothing(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    policy, catalog = per_caller_policy(exchange_per_caller())
    dead = TokenExchange(TokenExchangeClient("http://127.0.0.1:9/token", "toolgen", CLIENT_SECRET))
    reg = Registry(
        policy,
        catalog,
        base_url=upstream.server.base_url,
        cursor_key=b"k" * 32,
        credentials=StaticCredentials({"TICKETS_TOKEN": SERVICE_TOKEN}),
        caller_credentials=CallerCredentials(exchange=dead),
    )
    result = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=caller(auth_server, "alice"))
    assert (
        result.error is not None and result.error.code == "credential_unavailable" and result.error.retryable
    )
    assert upstream.callers == []


@pytest.fixture
def patched_answer(auth_server: LoopbackAS) -> Iterator[dict[str, Any]]:
    """The token endpoint's answer changed for one test (`LoopbackAS.answer_patch`)."""
    yield auth_server.answer_patch
    auth_server.answer_patch.clear()


@pytest.mark.parametrize(
    "expires_in", [10**400, 2**63, -5, 0, 600.5, "600", True, None], ids=lambda v: str(v)[:12]
)
def test_an_exchange_answer_without_a_usable_lifetime_is_used_once(
    auth_server: LoopbackAS,
    upstream: Upstream,
    tmp_path: Path,
    patched_answer: dict[str, Any],
    expires_in: Any,
) -> None:
    """``expires_in`` missing or not a positive integer: the token is used for this call and not
    cached. One beyond any lifetime (an integer no double holds) is cached for at most a day; never
    an internal error."""
    patched_answer["expires_in"] = expires_in
    reg = make_registry(auth_server, upstream, per=exchange_per_caller(), tmp_path=tmp_path)
    alice = caller(auth_server, "alice")
    before = len(auth_server.token_requests)
    for _ in range(2):
        got = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=alice)
        assert got.ok, got.to_json()
    assert upstream.callers == ["alice", "alice"]
    cached = isinstance(expires_in, int) and not isinstance(expires_in, bool) and expires_in > 0
    assert len(auth_server.token_requests) - before == (1 if cached else 2)


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("issued_token_type", "urn:ietf:params:oauth:token-type:refresh_token"),
        ("issued_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ("issued_token_type", None),
        ("token_type", "N_A"),
        ("token_type", "DPoP"),
        ("token_type", None),
    ],
)
def test_an_exchanged_token_of_a_type_not_asked_for_is_refused(
    auth_server: LoopbackAS,
    upstream: Upstream,
    tmp_path: Path,
    patched_answer: dict[str, Any],
    member: str,
    value: str | None,
) -> None:
    """The exchange asks for an access token (RFC 8693 §2.1 ``requested_token_type``); an answer
    issuing another type (a refresh or ID token, RFC 8693 §2.2.1 ``issued_token_type``, required),
    or one not usable as a bearer token (``token_type``, RFC 6749 §5.1), is never sent to the API."""
    patched_answer[member] = value
    reg = make_registry(auth_server, upstream, per=exchange_per_caller("always"), tmp_path=tmp_path)
    got = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=caller(auth_server, "alice"))
    assert got.error is not None and got.error.code == "credential_unavailable", got.to_json()
    assert got.error.retryable is False and upstream.callers == []
    patched_answer.clear()
    patched_answer["token_type"] = "bearer"  # the guard: the same answer, of the type asked for, is used
    assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=caller(auth_server, "alice")).ok


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["alice", "bob", "carol", None]), st.booleans()), min_size=1, max_size=6
    )
)
def test_no_request_ever_acts_for_another_caller(
    auth_server: LoopbackAS, tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[str | None, bool]]
) -> None:
    """Whatever callers call in whatever order, each request the API receives acts for the caller
    who made it, or for the service on a read of a caller without a token (``service_secret:
    reads``), never for anyone else."""
    api = Upstream(auth_server)
    with api.server:
        reg = make_registry(
            auth_server, api, per=exchange_per_caller("reads"), tmp_path=tmp_path_factory.mktemp("prop")
        )
        tokens = {name: caller(auth_server, name) for name in ("alice", "bob", "carol")}
        for name, writes in calls:
            actor = tokens[name] if name else Actor.of("tokenless", WRITE_SCOPES)
            before = len(api.callers)
            result = (
                write(reg, actor) if writes else reg.call("get_ticket", {"ticket_id": "T-102"}, actor=actor)
            )
            sent = api.callers[before:]
            expected = [name] if name else ([] if writes else ["service"])
            assert sent == expected and result.ok is bool(expected), (name, writes, sent)


def approval_meta(preview_id: str) -> Any:
    """The ``_meta`` of a record call carrying the human's approval of `preview_id`."""
    return {"toolgen/approval": {"preview_id": preview_id, "approved_by": "human"}}


# ------------------------------------------------------------------------------------------------
# the exchanged token never leaves


@pytest.mark.anyio
async def test_two_callers_over_mcp_http_and_the_exchanged_tokens_never_leave(
    auth_server: LoopbackAS,
    upstream: Upstream,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    caplog.set_level(logging.DEBUG)
    audit_log = tmp_path / "audit.jsonl"
    reg = make_registry(
        auth_server, upstream, per=exchange_per_caller(), tmp_path=tmp_path, audit=JsonlAuditSink(audit_log)
    )
    reg.approvals = "client"
    config = auth_server.trusted()
    answers: list[str] = []
    issued_before = len(auth_server.issued)
    async with http_server(reg, verifier=JwtVerifier(config), auth=config.auth_settings()) as url:
        for name in ("alice", "bob"):
            token = auth_server.access_token(name, WRITE_SCOPES)
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                first = await client.call_tool("get_ticket", {"ticket_id": "T-103"})
                assert first.is_error is False, mcp_json(first)
                exchanged = auth_server.issued[-1]
                # plant the caller's exchanged token in what the API answers: the runtime must scrub it
                ticket = upstream.server.state.tickets["T-103"]
                ticket["assignee"] = f"echo {exchanged} and {token}"
                echoed = await client.call_tool("get_ticket", {"ticket_id": "T-103"})
                ticket["assignee"] = None
                assert echoed.is_error is False and mcp_json(echoed)["assignee"].count("[redacted]") == 2
                preview = await client.call_tool(
                    "preview_ticket_followup",
                    {"ticket_id": "T-103", "note": f"from {name}", "visibility": "public"},
                )
                preview_id = mcp_json(preview)["preview_id"]
                record = await client.call_tool(
                    "record_ticket_followup",
                    {"preview_id": preview_id, "action_id": f"a-{name}"},
                    meta=approval_meta(preview_id),
                )
                assert record.is_error is False, mcp_json(record)
                answers += [json.dumps(mcp_json(r)) for r in (first, echoed, preview, record)]
    assert upstream.callers == ["alice", "alice", "alice", "bob", "bob", "bob"]
    exchanged_tokens = auth_server.issued[issued_before:]
    assert len(exchanged_tokens) == 2  # one per caller
    reg.audit.close()  # type: ignore[attr-defined]
    reg.close()
    out, err = capfd.readouterr()
    receipts = b"".join(p.read_bytes() for p in tmp_path.glob("receipts.sqlite3*"))
    places = {
        "answers": "\n".join(answers),
        "audit": audit_log.read_text(encoding="utf-8"),
        "logs": caplog.text + out + err,
    }
    for planted in exchanged_tokens:
        for where, text in places.items():
            assert planted not in text, where
            assert planted.split(".")[2] not in text, where  # not even its signature
        assert planted.encode() not in receipts and planted.split(".")[2].encode() not in receipts
    credential = [json.loads(line) for line in places["audit"].splitlines() if '"credential"' in line]
    assert {(r["actor"], r["detail"]["source"]) for r in credential} >= {
        (f"jwt:{auth_server.issuer}#alice", "exchange"),  # each caller is its issuer's subject
        (f"jwt:{auth_server.issuer}#bob", "exchange"),
    }


# ------------------------------------------------------------------------------------------------
# lookup: the caller's own secret by principal


def secrets_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "callers.yaml"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_lookup_by_principal(auth_server: LoopbackAS, tmp_path: Path) -> None:
    api = Upstream(auth_server, keys={"alice-key-1": "alice", "bob-key-2": "bob"})
    lookup = load_caller_secrets(
        secrets_file(
            tmp_path, "callers:\n  alice: {TICKETS_TOKEN: alice-key-1}\n  bob: {TICKETS_TOKEN: bob-key-2}\n"
        )
    )
    assert "alice-key-1" not in repr(lookup)
    per = {"via": "lookup", "audience": None, "resource": None, "scope": None, "service_secret": "never"}
    with api.server:
        reg = make_registry(auth_server, api, per=per, tmp_path=tmp_path, lookup=lookup)
        for name in ("alice", "bob"):
            actor = Actor.of(name, WRITE_SCOPES)
            assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=actor).ok
            assert write(reg, actor).ok
        dave = write(reg, Actor.of("dave", WRITE_SCOPES))
        assert dave.error is not None and dave.error.code == "missing_credential"
    assert api.callers == ["key:alice", "key:alice", "key:bob", "key:bob"]


@pytest.mark.parametrize(
    ("text", "mode", "what"),
    [
        ("callers:\n  alice: {TICKETS_TOKEN: k}\n", 0o640, "chmod 600"),
        ("callers:\n  alice: {TICKETS_TOKEN: 12}\n", 0o600, ":2:26:"),
        ("people:\n  alice: {TICKETS_TOKEN: k}\n", 0o600, "`callers:` alone"),
        ("callers:\n  alice: {A: k}\n  alice: {A: j}\n", 0o600, ":3:3: duplicate key"),
    ],
)
def test_bad_caller_secrets_files_are_refused(tmp_path: Path, text: str, mode: int, what: str) -> None:
    with pytest.raises(CallerSecretsError, match=what.replace("`", ".")) as caught:
        load_caller_secrets(secrets_file(tmp_path, text, mode))
    assert "k}" not in str(caught.value)


def test_a_caller_secrets_file_behind_a_symlink_is_judged_by_the_file_it_names(tmp_path: Path) -> None:
    """A symlink's own mode (0777) says nothing: the file it names must be private. A link to a
    group-readable file is refused; a link to a mode-600 file (the layout of a mounted secret
    volume, ``callers.yaml -> ..data/callers.yaml``) is read."""
    data = tmp_path / "..data"
    data.mkdir()
    target = secrets_file(data, "callers:\n  alice: {TICKETS_TOKEN: alice-key-1}\n", 0o640)
    link = tmp_path / "callers.yaml"
    link.symlink_to(target)
    with pytest.raises(CallerSecretsError, match="chmod 600") as caught:
        load_caller_secrets(link)
    assert "alice-key-1" not in str(caught.value)
    target.chmod(0o600)
    assert load_caller_secrets(link).get("alice", "TICKETS_TOKEN") == "alice-key-1"


# ------------------------------------------------------------------------------------------------
# what `toolgen serve --http` warns at start


def test_serve_warns_of_shared_write_credentials_and_unsourced_schemes(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    from toolgen.cli.serve import shared_write_warnings

    shared = make_registry(auth_server, upstream, per=None, tmp_path=tmp_path)
    lines = shared_write_warnings(shared, many=True)
    assert len(lines) == 1 and "'oauth'" in lines[0] and "record_ticket_followup" in lines[0]
    assert shared_write_warnings(shared, many=False) == []  # one caller: nobody to confuse
    own = make_registry(auth_server, upstream, per=exchange_per_caller(), tmp_path=tmp_path / "own")
    assert shared_write_warnings(own, many=True) == []
    always = make_registry(
        auth_server, upstream, per=exchange_per_caller("always"), tmp_path=tmp_path / "all"
    )
    assert len(shared_write_warnings(always, many=True)) == 1
    own.caller_credentials = None
    (unsourced,) = shared_write_warnings(own, many=True)
    assert "token_exchange" in unsourced and "missing_credential" in unsourced


# ------------------------------------------------------------------------------------------------
# `toolgen serve --http --workers 2 --authorization-server`, a real process


def serve_process(tmp_path: Path, package: Path, upstream: Upstream, config: Path) -> subprocess.Popen[str]:
    """`toolgen serve --http --workers 2 --authorization-server` of `package`, upstream `upstream`."""
    env = dict(os.environ, TICKETS_TOKEN=SERVICE_TOKEN, TOOLGEN_EXCHANGE_SECRET=CLIENT_SECRET)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgen",
            "serve",
            str(package),
            "--base-url",
            upstream.server.base_url,
            "--receipts",
            str(tmp_path / "r.sqlite3"),
            "--http",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--authorization-server",
            str(config),
            "--approvals",
            "client",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    return proc


@pytest.mark.long
@pytest.mark.anyio
async def test_the_serve_command_with_two_workers_acts_for_each_caller(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    import shutil
    import signal

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from tests.runtime.test_runtime_identity import served_url

    package = tmp_path / "tickets"
    shutil.copytree(tickets_dir(), package)
    policy, _ = per_caller_policy(exchange_per_caller())
    (package / "policy.json").write_text(json.dumps(policy, indent=2), encoding="utf-8")
    config = tmp_path / "auth.yaml"
    config.write_text(
        f"issuer: {auth_server.issuer}\njwks_uri: {auth_server.url}/jwks\nresource: {RESOURCE}\n"
        f"token_exchange:\n  token_endpoint: {auth_server.url}/token\n  client_id: toolgen\n"
        "  client_secret_env: TOOLGEN_EXCHANGE_SECRET\n",
        encoding="utf-8",
    )
    proc = serve_process(tmp_path, package, upstream, config)
    try:
        url, lines = await served_url(proc)
        assert "JWT access tokens of" in lines[-1] and CLIENT_SECRET not in "".join(lines)
        for name in ("alice", "bob", "alice", "bob"):
            token = auth_server.access_token(name, WRITE_SCOPES)
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                args = {
                    "ticket_id": "T-104",
                    "note": f"by {name} {secrets.token_hex(3)}",
                    "visibility": "public",
                }
                preview = mcp_json(await client.call_tool("preview_ticket_followup", args))
                record = await client.call_tool(
                    "record_ticket_followup",
                    {"preview_id": preview["preview_id"], "action_id": secrets.token_hex(4)},
                    meta=approval_meta(preview["preview_id"]),
                )
                assert record.is_error is False, mcp_json(record)
        assert upstream.callers == ["alice", "bob", "alice", "bob"]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    for token in auth_server.issued:
        assert token not in out + err


def test_a_failing_secret_resolver_sends_nothing(
    auth_server: LoopbackAS, upstream: Upstream, tmp_path: Path
) -> None:
    class Broken:
        def get(self, principal: str, secret: str) -> str | None:
            raise ConnectionError("vault unreachable")

    per = {"via": "lookup", "audience": None, "resource": None, "scope": None, "service_secret": "always"}
    reg = make_registry(auth_server, upstream, per=per, tmp_path=tmp_path, lookup=Broken())
    result = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=Actor.of("alice", WRITE_SCOPES))
    assert result.error is not None and result.error.code == "credential_unavailable", result.to_json()
    assert result.error.retryable is True and upstream.callers == []  # the service's secret never stands in


@pytest.mark.parametrize(
    "token",
    ["abc\r\nX-Injected: 1", "tok\u00e9n", "a\x00b", " ", "x" * 70_000, ["abc"], 7],
    ids=["crlf", "non-ascii", "nul", "space", "huge", "list", "number"],
)
def test_an_exchanged_token_that_is_no_header_value_is_refused(
    auth_server: LoopbackAS,
    upstream: Upstream,
    tmp_path: Path,
    patched_answer: dict[str, Any],
    token: Any,
) -> None:
    """An ``access_token`` that cannot be sent as an RFC 6750 bearer token (a line break that would
    end the header, a character outside its ``b64token`` alphabet, one longer than the answer's
    bound) is ``credential_unavailable``, not retryable, nothing sent; never an internal error."""
    patched_answer["access_token"] = token
    reg = make_registry(auth_server, upstream, per=exchange_per_caller("always"), tmp_path=tmp_path)
    got = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=caller(auth_server, "alice"))
    assert got.error is not None and got.error.code == "credential_unavailable", got.to_json()
    assert got.error.retryable is False and upstream.callers == []
