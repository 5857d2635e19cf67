"""The excerpt of a 2xx answer that cannot be read, attacked: it must never show a secret of the call
or a member the output policy redacts, however the body is written and whenever it is shown (the
first call, a replay under a newer policy, a composite's step).

- A charset in which one character takes more than four bytes (UTF-7 writes each character alone
  in five, ``+AHQ-``; ISO-2022-JP's escape sequences spell no character at all) made the excerpt's
  decoded window end inside a secret: the scrub saw only its start and let it through.
- A replay is redacted with the current policy's paths (docs/runtime.md "Outputs"): an excerpt
  stored before a rebuild added ``output.redact`` was replayed as it was.
- A composite step's excerpt was shown in its ``steps[].warning`` though the composite's own
  ``output.redact`` hides members of that step's answer.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.runtime.test_runtime_accepted_writes import ACTOR, TOKEN, accepted_package
from tests.support.fault_server import Fault, FaultServer
from tests.support.raw_answer_server import RawAnswerServer
from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.runtime import Approval, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call import credentials as creds
from toolgen.runtime.call.response_body import excerpt


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return accepted_package(tmp_path_factory.mktemp("accepted-writes"))


@pytest.fixture(scope="module")
def server() -> Iterator[RawAnswerServer]:
    with RawAnswerServer() as srv:
        yield srv


def _utf7_each(text: str) -> bytes:
    """`text` in UTF-7 with every character in its own shifted run (five bytes each)."""
    return b"".join(b"+" + base64.b64encode(c.encode("utf-16-be")).rstrip(b"=") + b"-" for c in text)


def _iso2022_padded(text: str, pad: int) -> bytes:
    """`text` in ISO-2022-JP (ASCII) after `pad` escape sequences and with one between every two
    characters: no escape sequence decodes to a character."""
    esc = b"\x1b(B"
    return b"x" + esc * pad + esc.join(c.encode("ascii") for c in text) + b"tail"


def _forms() -> list[str]:
    return creds.echo_forms(["Bearer " + TOKEN, TOKEN])


def _leaks(shown: str) -> bool:
    """Whether `shown` holds the token or a start of it six characters or longer."""
    return any(TOKEN[:n] in shown for n in range(6, len(TOKEN) + 1))


@pytest.mark.parametrize(
    "charset,bodies",
    [
        ("utf-7", [_utf7_each("a" * n + TOKEN) for n in range(150, 200)]),
        ("iso-2022-jp", [_iso2022_padded(TOKEN, n) for n in range(0, 400, 1)]),
    ],
)
def test_an_excerpt_never_ends_inside_a_secret_whatever_the_bytes_per_character(
    charset: str, bodies: list[bytes]
) -> None:
    forms = _forms()
    headers = httpx.Headers({"content-type": f"application/json; charset={charset}"})
    for body in bodies:
        shown = excerpt(creds.scrub_bytes(body, forms), headers, forms)
        assert not _leaks(shown), (len(body), shown)


def test_a_write_answered_in_utf7_shows_no_start_of_the_secret(
    package: Path, server: RawAnswerServer
) -> None:
    reg = Registry.from_dir(
        package,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        credentials=StaticCredentials({"JIRA_TOKEN": TOKEN}),
        cursor_key=b"k" * 32,
    )
    try:
        for n in (166, 172, 178):
            server.answer(201, _utf7_each("a" * n + TOKEN), content_type="application/json; charset=utf-7")
            res = reg.call("record_create_component", {"name": "Comp", "action_id": f"u7-{n}"}, actor=ACTOR)
            text = json.dumps(res.to_json(), ensure_ascii=False)
            assert res.ok and res.warnings, text[:600]
            assert not _leaks(text), text
    finally:
        reg.close()


def test_an_excerpt_of_a_long_utf7_run_is_read_in_bounded_time() -> None:
    """One shifted UTF-7 run over the whole 8 MiB cap: decoding it chunk by chunk would decode the
    run again on every chunk (minutes); the excerpt decodes at most twice the body."""
    started = time.perf_counter()
    shown = excerpt(
        b"+" + b"AHQ" * (8 * 1024 * 1024 // 3),
        httpx.Headers({"content-type": "text/plain; charset=utf-7"}),
        _forms(),
    )
    assert time.perf_counter() - started < 5 and len(shown) <= 201, shown


def test_a_replayed_excerpt_obeys_a_redact_policy_a_rebuild_added(
    package: Path, server: RawAnswerServer
) -> None:
    policy = json.loads((package / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((package / "mcp.json").read_text(encoding="utf-8"))
    store = MemoryReceiptStore()
    credentials = StaticCredentials({"JIRA_TOKEN": TOKEN})
    args = {"name": "Comp", "action_id": "redact-later"}
    server.answer(
        201,
        b'{"id": "10000", "name": "Comp", "self": "https://internal.example/lead-ssn-078-05-1120',
        content_type="application/json",
    )
    with Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=store,
        credentials=credentials,
        cursor_key=b"k" * 32,
    ) as before:
        first = before.call("record_create_component", args, actor=ACTOR)
    assert first.ok and "078-05-1120" in json.dumps(first.to_json()), first.to_json()
    hidden = copy.deepcopy(policy)
    row = next(r for r in hidden["tools"] if r["tool"] == "record_create_component")
    row["output"]["redact"] = [*row["output"].get("redact", []), "self"]  # a rebuild hides `self`
    sent = server.requests
    with Registry(
        hidden,
        catalog,
        base_url=server.base_url,
        receipts=store,
        credentials=credentials,
        cursor_key=b"k" * 32,
    ) as after:
        again = after.call("record_create_component", args, actor=ACTOR)
    text = json.dumps(again.to_json(), ensure_ascii=False)
    assert again.ok and again.replayed and server.requests == sent, text
    assert "078-05-1120" not in text, f"a replay showed what the current policy redacts: {text}"


def test_a_composite_step_excerpt_obeys_the_composite_redact_policy() -> None:
    """The composite hides ``note.internal`` (a member of its write step's answer); the step answers
    201 with JSON cut short that holds it."""
    policy, catalog = (
        json.loads((tickets_dir() / name).read_text(encoding="utf-8")) for name in ("policy.json", "mcp.json")
    )
    row = next(r for r in policy["tools"] if r["tool"] == "record_escalate_ticket")
    row["output"]["redact"] = [*row["output"]["redact"], "note.internal"]
    answer = b'{"id": "F-1", "internal": "escalation-desk-pin-90210", "note": "Customer waiting."'
    with FaultServer(honours_keys=False) as fault:
        fault.route(
            "GET",
            r"^/v1/tickets/T-[0-9]+$",
            body={
                "id": "T-102",
                "subject": "Printer on fire",
                "status": "open",
                "priority": "high",
                "created_at": "2025-02-01T11:00:00Z",
            },
        )
        fault.route(
            "POST", r"^/v1/tickets/T-[0-9]+/followups$", status=201, body=lambda req, n: {"id": f"F-{n}"}
        )
        fault.script(
            "POST",
            r"^/v1/tickets/T-[0-9]+/followups$",
            Fault("reply", status=201, body=answer, content_type="application/json", write=True),
        )
        with Registry(
            policy,
            catalog,
            base_url=fault.base_url + "/v1",
            receipts=MemoryReceiptStore(),
            credentials=StaticCredentials({"TICKETS_TOKEN": "tok"}),
            cursor_key=b"k" * 32,
        ) as reg:
            args = {"ticket_id": "T-102", "reason": "Customer waiting."}
            shown = reg.call("preview_escalate_ticket", args, actor=WRITER)
            assert shown.ok and shown.result is not None, shown.to_json()
            pid = str(shown.result["preview_id"])
            res = reg.call(
                "record_escalate_ticket",
                {"preview_id": pid, "action_id": "esc-pin"},
                actor=WRITER,
                approval=Approval(pid),
            )
            text = json.dumps(res.to_json(), ensure_ascii=False)
            assert res.ok and "cannot be read" in text, text
            assert "90210" not in text, f"a step's excerpt showed a member the composite redacts: {text}"


# --------------------------------------------------------------------------------------------------
# a 2xx write whose body does not come whole within the timeout is done, as one cut short is


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_write_answered_2xx_with_a_body_slower_than_its_timeout_is_done(package: Path, mode: str) -> None:
    """The API answers 200 and then one byte of its body every 50 ms: its status says the write was
    done, as with a body cut short by a closed connection; the receipt is completed, and a replay
    sends nothing."""
    with FaultServer(honours_keys=False) as fault:
        fault.route("POST", r"^/rest/api/3/component$", status=201, body={"id": "10000"})
        fault.script("POST", r"^/rest/api/3/component$", Fault.trickle(0.05, part="body"))
        store = MemoryReceiptStore()
        reg = Registry.from_dir(
            package,
            base_url=fault.base_url,
            receipts=store,
            credentials=StaticCredentials({"JIRA_TOKEN": TOKEN}),
            cursor_key=b"k" * 32,
        )
        args = {"name": "Comp", "action_id": f"slow-{mode}"}
        try:
            started = time.monotonic()
            if mode == "sync":
                res = reg.call("record_create_component", args, actor=ACTOR, timeout_ms=400)
            else:
                res = asyncio.run(reg.acall("record_create_component", args, actor=ACTOR, timeout_ms=400))
            elapsed = time.monotonic() - started
            assert res.ok and res.status == 200 and res.warnings, res.to_json()
            assert elapsed < 5, elapsed
            receipt = store.get("jira/record_create_component", args["action_id"])
            assert receipt is not None and receipt.state == "completed", receipt
            writes = len(fault.requests)
            again = reg.call("record_create_component", args, actor=ACTOR)
            assert again.ok and again.replayed and len(fault.requests) == writes, again.to_json()
        finally:
            reg.close()


def test_a_replayed_composite_record_withholds_its_steps_excerpts_under_a_newer_redact_policy() -> None:
    """Stored while the composite redacted nothing (its step's excerpt shown), replayed after a
    rebuild added ``output.redact``: the replay shows no excerpt, as a new call would not."""
    policy, catalog = (
        json.loads((tickets_dir() / name).read_text(encoding="utf-8")) for name in ("policy.json", "mcp.json")
    )
    row = next(r for r in policy["tools"] if r["tool"] == "record_escalate_ticket")
    row["output"]["redact"] = []
    hidden = copy.deepcopy(policy)
    next(r for r in hidden["tools"] if r["tool"] == "record_escalate_ticket")["output"]["redact"] = [
        "note.internal"
    ]
    answer = b'{"id": "F-1", "internal": "escalation-desk-pin-90210", "note": "Customer waiting."'
    store = MemoryReceiptStore()
    with FaultServer(honours_keys=False) as fault:
        fault.route(
            "GET",
            r"^/v1/tickets/T-[0-9]+$",
            body={
                "id": "T-102",
                "subject": "Printer on fire",
                "status": "open",
                "priority": "high",
                "created_at": "2025-02-01T11:00:00Z",
            },
        )
        fault.route(
            "POST", r"^/v1/tickets/T-[0-9]+/followups$", status=201, body=lambda req, n: {"id": f"F-{n}"}
        )
        fault.script(
            "POST",
            r"^/v1/tickets/T-[0-9]+/followups$",
            Fault("reply", status=201, body=answer, content_type="application/json", write=True),
        )
        args = {"ticket_id": "T-102", "reason": "Customer waiting."}
        results = []
        for table in (policy, hidden):
            with Registry(
                table,
                catalog,
                base_url=fault.base_url + "/v1",
                receipts=store,
                credentials=StaticCredentials({"TICKETS_TOKEN": "tok"}),
                cursor_key=b"k" * 32,
            ) as reg:
                shown = reg.call("preview_escalate_ticket", args, actor=WRITER)
                assert shown.ok and shown.result is not None, shown.to_json()
                pid = str(shown.result["preview_id"])
                results.append(
                    reg.call(
                        "record_escalate_ticket",
                        {"preview_id": pid, "action_id": "esc-later"},
                        actor=WRITER,
                        approval=Approval(pid),
                    )
                )
        first, again = results
        assert first.ok and "90210" in json.dumps(first.to_json()), first.to_json()
        text = json.dumps(again.to_json(), ensure_ascii=False)
        assert again.ok and again.replayed and "cannot be read" in text, text
        assert "90210" not in text, f"a replay showed a step's excerpt the current policy withholds: {text}"
