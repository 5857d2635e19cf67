"""Runtime hardening, round 2: the smaller trust defects, attacked over real loopback servers.

- an actor's scopes given as one string are whole scope names, never a substring test;
- ``--receipts`` URLs never reach a message with their password, and a malformed one is exit 2;
- ``toolgen approve`` escapes every control, bidi and line-separator character it prints;
- a tool the actor may not see is refused before its arguments are validated (Registry and CLI);
- a credential echoed by the API is scrubbed in every form it can come back in;
- a replay is shaped with the current policy (a ``redact:`` added later hides replayed data);
- the output budget holds exactly, its truncation marker included.

How arguments become the request (dialect decoding, unions, header parameters) is tested in
`test_runtime_hardening_requests.py`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.policy_rows import typed_row
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import READER, WRITER, error_code, load_package, stored_preview, tickets_dir

from toolgen.cli import main
from toolgen.cli.call import display_receipts
from toolgen.cli.terminal import terminal_safe
from toolgen.runtime import Actor, MemoryAuditSink, Registry, SqliteReceiptStore, StaticCredentials
from toolgen.runtime.identity import permits
from toolgen.testing.tickets_server import TicketsServer

FOLLOWUP, PREVIEW = "record_ticket_followup", "preview_ticket_followup"
NOTE = {"ticket_id": "T-102", "note": "Called the customer back.", "visibility": "public"}


def _package() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return load_package("tickets")


# -- scopes ------------------------------------------------------------------------------------------


def test_scopes_given_as_one_string_are_whole_names() -> None:
    row = typed_row({"permission": ["customers:write"]})
    for given_as in ("not customers:writer", "customers:writer", "customers:write:x", "rs:wr"):
        actor = Actor("someone", given_as)  # type: ignore[arg-type]
        assert "customers:write" not in actor.scopes
        assert not permits(row, actor.scopes) and not permits(row, given_as)
        assert not permits(row, Actor.of("someone", given_as).scopes)
    assert Actor("ops", "customers:read customers:write").scopes == {"customers:read", "customers:write"}  # type: ignore[arg-type]
    assert permits(row, "customers:read customers:write")
    assert Actor.of("ops", "admin").scopes == {"admin"}  # not {"a", "d", "m", "i", "n"}
    with pytest.raises(TypeError):
        Actor.of("ops", [b"customers:write"])  # type: ignore[list-item]


def test_a_scope_string_is_split_at_spaces_only() -> None:
    """RFC 6749 §3.3 separates scope tokens by SP (%x20) alone: a scope name with another white
    space inside (NBSP, a tab, U+2028) is one name, never the scope it starts with."""
    row = typed_row({"permission": ["customers:write"]})
    for sep in ("\u00a0", "\t", "\n", "\u2028", "\u3000", "\x0b"):
        given_as = f"customers:read customers:write{sep}limited"
        assert not permits(row, given_as), repr(given_as)
        assert "customers:write" not in Actor.of("someone", given_as).scopes
    assert permits(row, "  customers:read   customers:write ")


def test_a_string_scoped_actor_is_refused_on_the_call_path(server: TicketsServer) -> None:
    policy, catalog = _package()
    reg = Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        cursor_key=b"k" * 32,
    )
    with reg:
        sneaky = Actor("mallory", "not ticket:writer ticket:read")  # type: ignore[arg-type]
        result = reg.call(PREVIEW, NOTE, actor=sneaky)
        assert error_code(result) == "permission_denied", result.to_json()
        assert PREVIEW not in reg.visible_tools(sneaky)


# -- receipts URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "redsi://:PW-s3cr3t@localhost:6379/0",
        "redis://:PW-s3cr3t@[::1/0",
        "redis://u:PW-s3cr3t@localhost:notaport/0",
        "redis://:PW/s3cr3t@host/0",
        "rediss://user:PW-s3cr3t@127.0.0.1:1/0?ssl_cert_reqs=none",
    ],
)
def test_a_bad_receipts_url_is_exit_2_and_never_prints_its_password(url: str) -> None:
    out = CliRunner().invoke(
        main, ["call", str(tickets_dir()), "get_ticket", "--args", '{"ticket_id": "T-1"}', "--receipts", url]
    )
    assert out.exit_code == 2, (out.exit_code, out.output)
    assert "PW" not in out.output and "s3cr3t" not in out.output, out.output
    assert "Traceback" not in out.output and "cannot open the receipt store" in out.output


@settings(max_examples=examples(300), deadline=None)
@given(
    user=st.text(st.characters(codec="ascii", exclude_characters="@"), max_size=8),
    password=st.text(st.characters(codec="utf-8", exclude_characters="@"), min_size=1, max_size=24),
    host=st.sampled_from(["localhost:6379", "[::1", "[::1]:6379", "h:p", "", "x@y"]),
    tail=st.sampled_from(["", "/0", "/0?db=1", "#f", "?q=a@b"]),
    scheme=st.sampled_from(["redis", "rediss", "redsi", "http", "sqlite"]),
)
def test_display_receipts_never_shows_a_password(
    user: str, password: str, host: str, tail: str, scheme: str
) -> None:
    url = f"{scheme}://{user}:{password}@{host}{tail}"
    shown = display_receipts(url)
    if len(password) >= 3 and password not in url.replace(f":{password}@", "", 1):
        assert password not in shown, (url, shown)


# -- toolgen approve -----------------------------------------------------------------------------------

UNSAFE = "\u009b31m\u0085\u2028\u202e\u2066\x1b[2J\x7f\u200b"
RAW = [c for c in UNSAFE if not c.isprintable()]


def test_terminal_safe_escapes_every_control_bidi_and_separator() -> None:
    shown = terminal_safe("a\nb" + UNSAFE)
    assert shown.startswith("a\nb")
    assert len(RAW) == 8 and all(c not in shown for c in RAW)
    assert json.loads(terminal_safe(json.dumps({"k": UNSAFE}, ensure_ascii=False))) == {"k": UNSAFE}


def test_approve_prints_no_raw_control_or_bidi_character(server: TicketsServer, tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    policy, catalog = _package()
    reg = Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=SqliteReceiptStore(path),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
        approvals="issued",
    )
    with reg:
        pid = stored_preview(reg, dict(NOTE, note="Refund " + UNSAFE + " done"))
    for extra in ([], ["--format", "json"]):
        out = CliRunner().invoke(
            main,
            [
                "approve",
                str(tickets_dir()),
                FOLLOWUP,
                pid,
                "--actor",
                WRITER.id,
                "--by",
                "alice\u202e",
                "--receipts",
                str(path),
                "--base-url",
                server.base_url,
                "--yes",
                *extra,
            ],
        )
        assert out.exit_code == 0, out.output
        raw = [c for c in RAW if c in out.output]
        assert not raw, (raw, out.output)
        assert "\\u202e" in out.output and "\\u009b" in out.output
        if extra:
            issued = json.loads(out.stdout.strip().splitlines()[-1])
            assert issued["request"]["body"]["note"] == "Refund " + UNSAFE + " done"  # same value, escaped


# -- hidden tools ----------------------------------------------------------------------------------------

#: arguments that are wrong for the tool's schema in every way a validator would describe
WRONG_ARGS: dict[str, Any] = {"ticket_id": 5, "note": ["x"], "visibility": "secret", "extra": True}


def _says_nothing_of_the_schema(error: dict[str, Any]) -> None:
    text = json.dumps(error)
    assert error["code"] == "permission_denied", text
    for word in ("visibility", "note", "ticket_id", "extra", "pointer", "enum", "public"):
        assert word not in text, (word, text)


def test_a_hidden_tool_is_refused_before_its_arguments_are_validated(server: TicketsServer) -> None:
    policy, catalog = _package()
    audit = MemoryAuditSink()
    reg = Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        audit=audit,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        cursor_key=b"k" * 32,
    )
    with reg:
        for tool in (PREVIEW, FOLLOWUP, "record_ticket_delete"):
            for args in (WRONG_ARGS, {}, {"preview_id": 7}, [1, 2]):
                result = reg.call(tool, args, actor=READER)
                assert result.error is not None
                _says_nothing_of_the_schema(result.error.to_json()["error"])
        steps = [(e.step, e.decision) for e in audit.events]
        assert ("validate", "deny") not in steps and ("permission", "deny") in steps
        allowed = reg.call(PREVIEW, WRONG_ARGS, actor=WRITER)  # a visible tool still validates
        assert error_code(allowed) == "invalid_arguments"


def test_cli_call_refuses_a_hidden_tool_before_validating() -> None:
    out = CliRunner().invoke(
        main,
        [
            "call",
            str(tickets_dir()),
            PREVIEW,
            "--args",
            json.dumps(WRONG_ARGS),
            "--scopes",
            "ticket:read",
            "--receipts",
            "memory://",
            "--base-url",
            "http://127.0.0.1:9",
        ],
    )
    assert out.exit_code == 1, out.output
    _says_nothing_of_the_schema(json.loads(out.stdout[out.stdout.index("{") :])["error"])


# -- credential echoes ------------------------------------------------------------------------------------

BASIC_PAIR = "svc-user:Pa55/w+rd=Z9!&<'"  # & < ' change under HTML escaping
BEARER = "tkt-live-9d1e2f3a4b5c6d7e"


def _echo_registry(recorder: RecordingServer, kind: str, secret: str) -> Registry:
    policy, catalog = _package()
    for row in policy["tools"]:
        row["auth"] = [
            {
                "in": "header",
                "kind": kind,
                "name": "Authorization",
                "scheme": kind,
                "secret": "S",
                "scopes": [],
                "per_caller": None,
            }
        ]
        row["retry"] = {"max_attempts": 1, "backoff_ms": 0, "deadline_ms": row["timeout_ms"], "on": []}
    return Registry(
        policy,
        list(catalog),
        base_url=recorder.base_url + "/v1",
        audit=MemoryAuditSink(),
        credentials=StaticCredentials({"S": secret}),
        cursor_key=b"k" * 32,
    )


def _echoes(secret: str, kind: str) -> dict[str, bytes]:
    """The ways an API may send a secret back, each as body bytes."""
    import base64
    from urllib.parse import quote

    pair = base64.b64encode(secret.encode("utf-8")).decode("ascii")
    shown = pair if kind == "basic" else secret
    return {
        "raw": secret.encode("utf-8"),
        "base64 of the pair": pair.encode("ascii"),
        "base64 unpadded": pair.rstrip("=").encode("ascii"),
        "header value": (("Basic " if kind == "basic" else "Bearer ") + shown).encode("utf-8"),
        "percent-encoded": quote(secret, safe="").encode("ascii"),
        "percent-encoded lower": re.sub(
            "%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")
        ).encode("ascii"),
        "json-escaped": json.dumps(secret).encode("ascii")[1:-1].replace(b"/", b"\\/"),
        "json unicode escapes": "".join(f"\\u{ord(c):04x}" for c in secret).encode("ascii"),
        "utf-16-le": secret.encode("utf-16-le"),
        "utf-16-be": secret.encode("utf-16-be"),
        "utf-16 with bom": secret.encode("utf-16"),
        "utf-32-le": secret.encode("utf-32-le"),
        "html-escaped": html.escape(secret).encode("utf-8"),
        "html-escaped, decimal references": html.escape(secret)
        .replace("&#x27;", "&#39;")
        .replace("&quot;", "&#34;")
        .encode("utf-8"),
        "html-escaped, quotes as is": html.escape(secret, quote=False).encode("utf-8"),
    }


def _leaks(text: str, secret: str, kind: str) -> list[str]:
    import base64
    from urllib.parse import quote

    pair = base64.b64encode(secret.encode("utf-8")).decode("ascii").rstrip("=")
    looks = {
        "raw": secret,
        "nul-spread": "\x00".join(secret),
        "json nul-spread": "\\u0000".join(secret),
        "percent": quote(secret, safe=""),
        "percent-lower": re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")),
        "html": html.escape(secret, quote=False),
    }
    if kind == "basic":
        looks["base64"] = pair
    return [name for name, look in looks.items() if look and look in text]


@pytest.fixture
def echo_server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


@pytest.mark.parametrize("kind,secret", [("basic", BASIC_PAIR), ("bearer", BEARER)])
@pytest.mark.parametrize("ctype", ["text/plain", "text/plain; charset=utf-16", "application/json", ""])
@pytest.mark.parametrize("status", [200, 400])
def test_an_echoed_credential_is_scrubbed_in_every_form(
    echo_server: RecordingServer, kind: str, secret: str, ctype: str, status: int
) -> None:
    reg = _echo_registry(echo_server, kind, secret)
    with reg:
        for name, echo in _echoes(secret, kind).items():
            body = b'{"id": "T-1", "subject": "' + echo + b'"}' if "json" in ctype else b"you sent: " + echo
            if "utf-16" in ctype and "utf-16" not in name and "32" not in name:
                body = body.decode("latin-1").encode("utf-16")
            echo_server.reply("GET", "/v1/tickets/", status=status, body=body, content_type=ctype or "x/none")
            result = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
            seen = json.dumps(result.to_json(), ensure_ascii=False) + json.dumps(
                [e.detail for e in reg.audit.events],  # type: ignore[attr-defined]
                ensure_ascii=False,
            )
            assert not _leaks(seen, secret, kind), (
                name,
                ctype,
                status,
                _leaks(seen, secret, kind),
                seen[:600],
            )


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    secret=st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x2FF, exclude_categories=["Cc", "Cs"]),
        min_size=10,
        max_size=30,
    ),
    kind=st.sampled_from(["basic", "bearer"]),
    form=st.sampled_from(sorted(_echoes("x", "basic"))),
    ctype=st.sampled_from(["text/plain", "application/json", "text/html", "application/octet-stream"]),
)
def test_scrubbing_holds_for_any_secret(
    echo_server: RecordingServer, secret: str, kind: str, form: str, ctype: str
) -> None:
    reg = _echo_registry(echo_server, kind, secret)
    with reg:
        echo = _echoes(secret, kind)[form]
        echo_server.reply(
            "GET",
            "/v1/tickets/",
            status=200,
            body=b'"' + echo + b'"' if "json" in ctype else echo,
            content_type=ctype,
        )
        result = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
        seen = json.dumps(result.to_json(), ensure_ascii=False)
        assert not _leaks(seen, secret, kind), (form, ctype, seen[:400])


# -- the output budget ----------------------------------------------------------------------------------


def test_a_page_whose_one_item_exceeds_the_budget_holds_it_exactly(echo_server: RecordingServer) -> None:
    policy, catalog = _package()
    for row in policy["tools"]:
        row["output"]["max_bytes"] = 10_000
    reg = Registry(
        policy,
        list(catalog),
        base_url=echo_server.base_url + "/v1",
        audit=MemoryAuditSink(),
        credentials=StaticCredentials({"TICKETS_TOKEN": "t" * 20}),
        cursor_key=b"k" * 32,
    )
    big = {"id": "T-1", "subject": "word " * 5000, "status": "open", "priority": "low", "updated_at": "x"}
    echo_server.reply("GET", "/v1/tickets$", body={"data": [big, dict(big, id="T-2")], "has_more": True})
    with reg:
        page = reg.call("list_tickets", {}, actor=READER)
    assert page.ok and page.result is not None, page.to_json()
    size = len(json.dumps(page.result, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    assert size <= 10_000 and page.result["_truncated"]["shortened_items"] == 1, size
    assert page.result["items"][0]["id"] == "T-1" and page.result["next_cursor"]


@settings(max_examples=examples(200), deadline=None)
@given(
    texts=st.lists(
        st.tuples(
            st.sampled_from(["word ", "wörd € ", "x", '😀" ']), st.integers(0, 4000), st.text(max_size=30)
        ).map(lambda t: t[0] * t[1] + t[2]),
        min_size=1,
        max_size=3,
    ),
    max_bytes=st.integers(400, 12_000),
    cursor=st.text("abc", min_size=0, max_size=200),
)
def test_fit_page_never_exceeds_its_budget(texts: list[str], max_bytes: int, cursor: str) -> None:
    from toolgen.runtime.call.shaping import compact_size, fit_page

    items = [{"id": i, "text": "a " + t} for i, t in enumerate(texts)]
    page, _ = fit_page(items, max_bytes, lambda k: cursor or None)
    assert compact_size(page) <= max_bytes, (compact_size(page), max_bytes, page.get("_truncated"))
    assert page["items"] and page["items"][0]["id"] == 0


# -- replays under a newer policy ---------------------------------------------------------------------


def test_a_replay_is_shaped_with_the_current_redact_policy(server: TicketsServer, tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"

    def registry(redact: list[str]) -> Registry:
        policy, catalog = _package()
        for row in policy["tools"]:
            if row["tool"] == FOLLOWUP:
                row["output"]["redact"] = redact
        return Registry(
            policy,
            list(catalog),
            base_url=server.base_url,
            receipts=SqliteReceiptStore(path),
            credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
            cursor_key=b"k" * 32,
        )

    with registry([]) as before:
        pid = stored_preview(before, NOTE)
        first = before.call(FOLLOWUP, {"preview_id": pid, "action_id": "a-1"}, actor=WRITER, approval=pid)
        assert first.ok and first.result is not None, first.to_json()
        assert first.result["visibility"] == "public"
    with registry(["visibility", "ticket_id"]) as after:  # a rebuild added redact paths
        again = after.call(FOLLOWUP, {"preview_id": pid, "action_id": "a-1"}, actor=WRITER, approval=pid)
    assert again.ok and again.replayed, again.to_json()
    assert again.result is not None
    assert again.result["visibility"] == "[redacted]" and again.result["ticket_id"] == "[redacted]"
    assert again.result["id"] == first.result["id"]
    assert server.side_effects["addFollowup"] == 1
