"""Writes shaped like Jira Cloud's, end to end against Prism: each success answer is declared as an
object, and the mock answers with the operation's example, a JSON string or a number (as Jira
answers ``createComponent``, ``addGadget``, ``createCustomFieldOption``). Each write, previewed,
approved and recorded, is a known success: ``ok`` with a warning, its receipt completed, and a
same-key retry replays it without sending. The spec is ours (`tests/fixtures/accepted_writes/`,
its provenance in ``info.description``); slow, as it starts Prism (Node).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.build import REPO, build

from toolgen.runtime import Actor, Approval, MemoryReceiptStore, Registry, StaticCredentials

pytestmark = pytest.mark.slow

SPEC = REPO / "tests" / "fixtures" / "accepted_writes" / "jira-shaped.yaml"
INTENTS = """auth: {basicAuth: {secret: JIRA_BASIC}}
tools:
  create_component: {operation: createComponent, effect: write, approval: required, permission: [project:admin],
                     idempotency: {key: action_id, send_as: none}, description: Create a project component.}
  add_gadget: {operation: addGadget, effect: write, approval: required, permission: [dashboard:write],
               idempotency: {key: action_id, send_as: none}, description: Add a gadget to a dashboard.}
  create_custom_field_option: {operation: createCustomFieldOption, effect: write, approval: required,
                               permission: [field:admin], idempotency: {key: action_id, send_as: none},
                               description: Add an option to a select custom field.}
"""
ACTOR = Actor.of("agent", ["project:admin", "dashboard:write", "field:admin"])
WRITES = [
    ("create_component", {"name": "Backend", "project": "PROJ"}),
    ("add_gadget", {"dashboardId": 10000, "moduleKey": "com.atlassian.plugins.atlassian-connect-plugin"}),
    ("create_custom_field_option", {"fieldId": "customfield_10000", "value": "Scranton"}),
]


def _prism_binary() -> str | None:
    env = os.environ.get("TOOLGEN_PRISM")
    cache = Path(os.environ.get("TOOLGEN_CORPUS_CACHE") or Path.home() / ".cache" / "toolgen-corpus")
    found = env or str(cache / "node_modules" / ".bin" / "prism")
    return found if Path(found).exists() or shutil.which(found) else None


@pytest.fixture(scope="module")
def prism_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _prism_binary()
    if binary is None:
        pytest.skip("Prism is not installed (benchmarks/corpus.py --install-prism)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [binary, "mock", str(SPEC), "-p", str(port), "-h", "127.0.0.1"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        while "Prism is listening" not in log.read_text(encoding="utf-8", errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(encoding="utf-8")[-800:]
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory, prism_url: str) -> Iterator[Registry]:
    out = build(tmp_path_factory.mktemp("jira-shaped"), SPEC, INTENTS, name="jira", emit="mcp,policy").out
    reg = Registry.from_dir(
        out,
        base_url=prism_url,
        receipts=MemoryReceiptStore(),
        cursor_key=b"k" * 32,
        credentials=StaticCredentials({"JIRA_BASIC": "user@example.com:api-token"}),
    )
    yield reg
    reg.close()


@pytest.mark.parametrize("tool,args", WRITES, ids=[w[0] for w in WRITES])
def test_a_write_prism_answers_with_a_string_or_number_is_a_known_success(
    registry: Registry, tool: str, args: dict[str, object]
) -> None:
    shown = registry.call(f"preview_{tool}", args, actor=ACTOR)
    assert shown.ok and shown.result is not None, shown.to_json()
    pid = str(shown.result["preview_id"])
    first = registry.call(
        f"record_{tool}", {"preview_id": pid, "action_id": f"{tool}-1"}, actor=ACTOR, approval=Approval(pid)
    )
    assert first.ok and first.status in (200, 201) and first.warnings, first.to_json()
    assert first.result is not None and first.result["_unreadable_body"]["excerpt"], first.to_json()
    receipt = registry.receipts.get(f"jira/record_{tool}", f"{tool}-1")
    assert receipt is not None and receipt.state == "completed", receipt
    again = registry.call(
        f"record_{tool}", {"preview_id": pid, "action_id": f"{tool}-1"}, actor=ACTOR, approval=Approval(pid)
    )
    assert again.replayed and again.result == first.result and again.warnings == first.warnings, (
        again.to_json()
    )
