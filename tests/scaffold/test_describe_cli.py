"""`toolgen describe` and `toolgen init --describe` from the command line: the providers' official SDKs
against a loopback server speaking their wire formats, recorded, then replayed offline byte for byte."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import copy_example
from tests.support.describe_writers import with_toolsets, writer_options
from tests.support.review_project import Invoke, cli, project
from tests.support.writer_server import WriterModelServer

from toolgen.yaml_text import plain_yaml, read_yaml

_MISSING = [
    name
    for name in ("openai", "anthropic", "google.genai")
    if importlib.util.find_spec(name.split(".")[0]) is None or importlib.util.find_spec(name) is None
]
needs_sdks = pytest.mark.skipif(bool(_MISSING), reason=f"the provider SDKs are not installed: {_MISSING}")

ROOT = Path(__file__).resolve().parents[2]
MARK = "# decide [examples-unreviewed]"
KEYS = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}

__all__ = ["cli", "project"]


def _answer(prompt: str) -> str:
    data = json.loads(prompt)
    if "toolsets" in data:
        names = [t["toolset"] for t in data["toolsets"]]
        return json.dumps(
            {"toolsets": [{"toolset": t, "examples": [f"anything the {t} group does for me"]} for t in names]}
        )
    tools = [t["tool"] for t in data["tools"]]
    return json.dumps(
        {
            "tools": [
                {
                    "tool": t,
                    "examples": [
                        f"could you {t.replace('_', ' ')} for me",
                        f"I want to {t.replace('_', ' ')} right now",
                    ],
                    "use_when": None,
                    "not_for": None,
                }
                for t in tools
            ]
        }
    )


@pytest.fixture
def tickets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    intent_map = copy_example(tmp_path, "tickets", "tickets.yaml")
    monkeypatch.chdir(tmp_path)
    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    return intent_map


def test_without_a_writer_describe_says_so_and_writes_nothing(tickets: Path, cli: Invoke) -> None:
    before = tickets.read_bytes()
    result = cli("describe", str(tickets))
    assert result.exit_code == 0, result.stderr
    assert "no writer configured" in result.stderr and "5 intents" in result.stderr
    assert tickets.read_bytes() == before


@needs_sdks
@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-compatible"])
def test_each_provider_drafts_records_and_replays(
    tickets: Path, cli: Invoke, provider: str, tmp_path: Path
) -> None:
    before = tickets.read_text(encoding="utf-8")
    tape = tmp_path / "describe.json"
    with WriterModelServer(_answer) as server:
        result = cli(
            "describe",
            str(tickets),
            "--provider",
            provider,
            "--model",
            "m-1",
            "--base-url",
            server.base_url(provider),
            "--record",
            str(tape),
            "--batch",
            "2",
        )
        sent = [body for bodies in server.requests.values() for body in bodies]
    assert result.exit_code == 0, result.stderr
    assert len(sent) == 3 and "drafted search expansions for 5 intents in 3 requests" in result.stderr
    # every request asks for the answer's JSON Schema through the provider's structured output
    from toolgen.scaffold.describe import answer_schema

    schema = json.dumps(answer_schema(3), sort_keys=True)
    assert all(schema in json.dumps(body, sort_keys=True) for body in sent)
    drafted = tickets.read_text(encoding="utf-8")
    assert drafted.count(MARK) == 5 and f"drafted by {provider} m-1" in drafted
    data = plain_yaml(read_yaml(drafted))
    assert data["tools"]["list_tickets"]["examples"] == [
        "could you list tickets for me",
        "I want to list tickets right now",
    ]
    # offline: the server is gone; the recording answers, and the map comes out the same
    tickets.write_text(before, encoding="utf-8")
    replayed = cli("describe", str(tickets), "--replay", str(tape), "--batch", "2")
    assert replayed.exit_code == 0, replayed.stderr
    assert tickets.read_text(encoding="utf-8") == drafted
    # a request that differs from the recording (other batches) is refused, and nothing is written
    tickets.write_text(before, encoding="utf-8")
    differs = cli("describe", str(tickets), "--replay", str(tape), "--batch", "3")
    assert differs.exit_code == 2 and "differs from the recording" in differs.stderr
    assert tickets.read_text(encoding="utf-8") == before


@needs_sdks
def test_toolset_examples_are_drafted_recorded_and_replayed(
    tickets: Path, cli: Invoke, tmp_path: Path
) -> None:
    """A toolset without `examples` is drafted in a request of its own after the tools'; the
    recording replays offline to the same map, and then nothing lacks expansions."""
    with_toolsets(tickets)
    before = tickets.read_text(encoding="utf-8")
    tape = tmp_path / "describe.json"
    with WriterModelServer(_answer) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible"), model="m-1"),
            "--record",
            str(tape),
        )
    assert result.exit_code == 0, result.stderr
    assert "drafted search expansions for 5 intents and 1 toolset in 2 requests" in result.stderr
    assert "toolsets.reading" in result.stderr
    drafted = tickets.read_text(encoding="utf-8")
    assert drafted.count(MARK) == 6
    data = plain_yaml(read_yaml(drafted))
    assert data["toolsets"]["reading"]["examples"] == ["anything the reading group does for me"]
    tickets.write_text(before, encoding="utf-8")
    replayed = cli("describe", str(tickets), "--replay", str(tape))
    assert replayed.exit_code == 0, replayed.stderr
    assert tickets.read_text(encoding="utf-8") == drafted
    left = cli("describe", str(tickets))
    assert left.exit_code == 0 and "0 intents of" in left.stderr, left.stderr
    assert tickets.read_text(encoding="utf-8") == drafted


@needs_sdks
def test_a_hand_written_cassette_replays(tickets: Path, cli: Invoke, tmp_path: Path) -> None:
    """A cassette in the eval cassettes' exchange format, written by hand: its request body is what
    the SDK sends for the prompt, and its answer the Chat Completions JSON a server would send."""
    from toolgen.scaffold.describe import SYSTEM, answer_schema, prompt_for

    with WriterModelServer(_answer) as server:
        cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--max-tools",
            "1",
        )
        (body,) = server.requests["chat"]
    tickets.write_text((ROOT / "intent_maps" / "tickets.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert body["messages"][0]["content"] == SYSTEM
    assert body["response_format"]["json_schema"]["schema"] == answer_schema(3)
    prompt = body["messages"][1]["content"]
    assert json.loads(prompt)["tools"][0]["tool"] == "get_ticket" and prompt == prompt_for(
        _plan_first(tickets), 3
    )
    answer = {
        "tools": [
            {
                "tool": "get_ticket",
                "examples": ["show me ticket T-102 please"],
                "use_when": None,
                "not_for": "listing many tickets; use list_tickets",
            }
        ]
    }
    reply = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps(answer)},
            }
        ],
    }
    cassette = {
        "writer": {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
        "exchanges": [
            {
                "request": {
                    "method": "POST",
                    "path": "/v1/chat/completions",
                    "body": json.dumps(body, separators=(",", ":")),
                },
                "response": {"status": 200, "content_type": "application/json", "body": json.dumps(reply)},
            }
        ],
    }
    tape = tmp_path / "hand.json"
    tape.write_text(json.dumps(cassette), encoding="utf-8")
    result = cli("describe", str(tickets), "--replay", str(tape), "--max-tools", "1")
    assert result.exit_code == 0, result.stderr
    data = plain_yaml(read_yaml(tickets.read_text(encoding="utf-8")))
    assert data["tools"]["get_ticket"]["examples"] == ["show me ticket T-102 please"]
    assert data["tools"]["get_ticket"]["not_for"] == "listing many tickets; use list_tickets"


def _plan_first(path: Path) -> Any:
    from toolgen.compile.intent import load_intent_map
    from toolgen.compile.load import load_spec
    from toolgen.scaffold.describe import DescribeOptions, plan_describe

    loaded = load_intent_map(path)
    return plan_describe(load_spec(loaded.spec_path()), loaded, DescribeOptions(max_tools=1)).todo  # type: ignore[arg-type]


def test_describe_refuses_a_missing_key_and_both_tapes(
    tickets: Path, cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = cli("describe", str(tickets), "--provider", "anthropic", "--model", "m")
    assert result.exit_code == 2 and "set ANTHROPIC_API_KEY" in result.stderr
    both = cli(
        "describe",
        str(tickets),
        "--provider",
        "openai",
        "--model",
        "m",
        "--record",
        "a.json",
        "--replay",
        "b.json",
    )
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    Path("bad.json").write_text(
        json.dumps(
            {"writer": {"provider": "openai", "model": "m"}, "exchanges": [{"request": {"method": "POST"}}]}
        ),
        encoding="utf-8",
    )
    bad = cli("describe", str(tickets), "--replay", "bad.json")
    assert bad.exit_code == 2 and "not a describe cassette" in bad.stderr


def test_init_without_describe_is_unchanged_and_with_it_says_there_is_no_writer(
    project: Path, cli: Invoke
) -> None:
    plain = cli("init", "specs/widgets.yaml", "--name", "gizmos", "--no-project")
    assert plain.exit_code == 0, plain.stderr
    first = (project / "intent_maps" / "gizmos.yaml").read_bytes()
    again = cli("init", "specs/widgets.yaml", "--name", "gizmos", "--no-project", "--force", "--describe")
    assert again.exit_code == 0, again.stderr
    assert "no writer configured" in again.stderr
    assert (project / "intent_maps" / "gizmos.yaml").read_bytes() == first
    options_only = cli(
        "init",
        "specs/widgets.yaml",
        "--name",
        "gizmos",
        "--no-project",
        "--force",
        "--provider",
        "openai",
        "--model",
        "m",
    )
    assert options_only.exit_code == 0 and "with --describe only" in options_only.stderr
    assert (project / "intent_maps" / "gizmos.yaml").read_bytes() == first


@needs_sdks
def test_init_describe_drafts_a_map_that_builds_and_lints_with_the_marks(
    project: Path, cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with WriterModelServer(_answer) as server:
        result = cli(
            "init",
            "specs/widgets.yaml",
            "--name",
            "gizmos",
            "--describe",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.base_url("openai"),
        )
    assert result.exit_code == 0, result.stderr
    text = (project / "intent_maps" / "gizmos.yaml").read_text(encoding="utf-8")
    marks = text.count(MARK)
    assert marks > 0
    assert cli("build", "gizmos", "-q").exit_code == 0
    lint = cli("lint", "--strict", "intent_maps/gizmos.yaml")
    assert lint.exit_code == 1
    assert lint.stdout.count("error[examples-unreviewed]") == marks
