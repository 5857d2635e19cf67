"""`toolgen describe` attacked as a hostile user and a hostile model would: maps in every layout a
person saves (CRLF, a byte order mark, a symlink, a read-only file), recordings aimed at the map, and
answers or servers that echo the API key. Each test tries to make a run corrupt, lose or leak
something; a run that cannot draft must write nothing and say why."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import copy_example
from tests.support.describe_writers import writer_options
from tests.support.profiles import examples
from tests.support.review_project import Invoke, cli, project
from tests.support.writer_server import WriterModelServer

from toolgen.scaffold.describe_edit import Expansion, splice
from toolgen.testing.loopback import LoopbackServer
from toolgen.yaml_text import plain_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[2]
MARK = "# decide [examples-unreviewed]"
_MISSING = [name for name in ("openai",) if importlib.util.find_spec(name) is None]
needs_sdks = pytest.mark.skipif(bool(_MISSING), reason=f"the provider SDKs are not installed: {_MISSING}")

__all__ = ["cli", "project"]


def _answer(prompt: str) -> str:
    tools = [t["tool"] for t in json.loads(prompt)["tools"]]
    return json.dumps(
        {
            "tools": [
                {
                    "tool": t,
                    "examples": [f"could you {t.replace('_', ' ')} for me"],
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
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return intent_map


@pytest.fixture
def tape(tickets: Path, cli: Invoke, tmp_path: Path) -> Path:
    """A recorded run over the tickets map (the map is put back as it was)."""
    before = tickets.read_bytes()
    path = tmp_path / "tape.json"
    with WriterModelServer(_answer) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--record",
            str(path),
        )
    assert result.exit_code == 0, result.stderr
    tickets.write_bytes(before)
    return path


@needs_sdks
@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_line_endings_and_the_byte_order_mark_are_kept(
    tickets: Path, tape: Path, cli: Invoke, newline: bytes, bom: bytes
) -> None:
    plain = tickets.read_bytes()
    tickets.write_bytes(bom + plain.replace(b"\n", newline))
    assert cli("describe", str(tickets), "--replay", str(tape)).exit_code == 0
    drafted = tickets.read_bytes()
    assert drafted.startswith(bom + b"#") and drafted.count(MARK.encode()) == 5
    assert b"\n" not in drafted.replace(newline, b"")  # every line ends as the map's lines do
    tickets.write_bytes(plain)
    assert cli("describe", str(tickets), "--replay", str(tape)).exit_code == 0
    assert tickets.read_bytes().replace(b"\n", newline) == drafted[len(bom) :]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_inside_a_value_does_not_shift_the_lines(separator: str) -> None:
    """YAML 1.2 breaks lines at LF, CRLF and CR only; U+2028, U+2029, U+0085 are not line breaks of the
    map's lines (`str.splitlines` breaks at them), so a value holding one leaves every intent writable."""
    text = (
        "toolgen: 1\nspec: s.yaml\ntools:\n  a:\n    operation: getA\n"
        f'    description: "one{separator}two"\n  b:\n    operation: getB\n'
    )
    new, skipped = splice(text, {k: Expansion(("find the thing for me",)) for k in "ab"}, "review")
    assert skipped == {}
    data = plain_yaml(read_yaml(new))
    assert data["tools"]["a"]["description"] == plain_yaml(read_yaml(text))["tools"]["a"]["description"]
    assert data["tools"]["a"]["examples"] == data["tools"]["b"]["examples"] == ["find the thing for me"]


@needs_sdks
def test_the_map_is_replaced_atomically_keeping_its_mode_its_symlink_and_other_files(
    tickets: Path, tape: Path, cli: Invoke
) -> None:
    folder = tickets.parent
    (folder / "tickets.yaml.tmp").write_text("my own notes\n", encoding="utf-8")
    real = folder / "real.yaml"
    tickets.rename(real)
    tickets.symlink_to("real.yaml")
    os.chmod(real, 0o640)
    result = cli("describe", str(tickets), "--replay", str(tape))
    assert result.exit_code == 0, result.stderr
    assert tickets.is_symlink() and real.read_text(encoding="utf-8").count(MARK) == 5
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert (folder / "tickets.yaml.tmp").read_text(encoding="utf-8") == "my own notes\n"
    assert sorted(p.name for p in folder.iterdir()) == ["real.yaml", "tickets.yaml", "tickets.yaml.tmp"]


@needs_sdks
def test_a_read_only_map_is_refused_before_the_writer_is_asked(
    tickets: Path, tape: Path, cli: Invoke
) -> None:
    before = tickets.read_bytes()
    os.chmod(tickets, 0o444)
    result = cli("describe", str(tickets), "--replay", str(tape))
    assert result.exit_code == 2 and "is read-only" in result.stderr and "tickets.yaml" in result.stderr
    assert tickets.read_bytes() == before and stat.S_IMODE(tickets.stat().st_mode) == 0o444


@needs_sdks
def test_a_map_changed_while_drafting_is_not_overwritten(tickets: Path, cli: Invoke) -> None:
    """Another run (or an editor) saves the map while the model answers: the run writes nothing."""
    edited = tickets.read_text(encoding="utf-8") + "# saved by someone else meanwhile\n"

    def answer(prompt: str) -> str:
        tickets.write_text(edited, encoding="utf-8")
        return _answer(prompt)

    with WriterModelServer(answer) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
        )
    assert result.exit_code == 2 and "changed while" in result.stderr and "run again" in result.stderr
    assert tickets.read_text(encoding="utf-8") == edited


@needs_sdks
@pytest.mark.parametrize("target", ["map", "spec", "folder"])
def test_a_recording_aimed_at_the_map_the_spec_or_a_folder_is_refused_before_anything_is_sent(
    tickets: Path, cli: Invoke, target: str
) -> None:
    spec = tickets.parent.parent / "specs" / "tickets.yaml"
    (tickets.parent.parent / "folder").mkdir()
    path = {"map": tickets, "spec": spec, "folder": tickets.parent.parent / "folder"}[target]
    before = {p: p.read_bytes() for p in (tickets, spec)}
    with WriterModelServer(_answer) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--record",
            str(path),
        )
        sent = server.requests["chat"]
    assert result.exit_code == 2 and "--record" in result.stderr and "nothing was written" in result.stderr
    assert sent == [] and {p: p.read_bytes() for p in (tickets, spec)} == before


KEY = "sk-test-0123456789abcdefSECRET"


class EchoServer(LoopbackServer):
    """A provider that echoes the credential it was sent: in an error (`status` 401) or in the answer,
    as a request of every tool (200), the way a careless proxy or a hostile endpoint would."""

    def __init__(self, status: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                sent = self.headers.get("authorization") or ""
                if status != 200:
                    payload: Any = {
                        "error": {
                            "message": f"Incorrect API key provided: {sent}",
                            "type": "invalid_request_error",
                        }
                    }
                else:
                    tools = [t["tool"] for t in json.loads(body["messages"][-1]["content"])["tools"]]
                    answer = {
                        "tools": [
                            {
                                "tool": t,
                                "examples": [f"use the key {sent} now"],
                                "use_when": f"always {sent}",
                                "not_for": None,
                            }
                            for t in tools
                        ]
                    }
                    payload = {
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
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(HTTPServer(("127.0.0.1", 0), Handler))

    def base_url(self) -> str:
        address: Any = self.httpd.server_address
        return f"http://{address[0]!s}:{address[1]}/v1"


@needs_sdks
@pytest.mark.parametrize("status", [401, 200])
def test_the_api_key_is_never_printed_recorded_or_written(
    tickets: Path, cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    tape = tmp_path / "tape.json"
    with EchoServer(status) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url()),
            "--record",
            str(tape),
        )
    assert result.exit_code == (2 if status != 200 else 0), result.stderr
    assert KEY not in result.stderr and KEY not in result.stdout
    assert KEY not in tickets.read_text(encoding="utf-8")
    if status == 200:
        recorded = tape.read_text(encoding="utf-8")
        assert KEY not in recorded and "authorization" not in recorded.lower()
        assert "[redacted API key]" in recorded


def test_an_intent_with_a_merge_key_is_written_or_left_out_never_a_crash() -> None:
    text = (
        "toolgen: 1\nspec: s.yaml\ntools:\n  a: &base\n    operation: getA\n    effect: read\n"
        "  b:\n    <<: *base\n    operation: getB\n"
    )
    new, skipped = splice(text, {k: Expansion(("find the thing for me",)) for k in "ab"}, "review")
    data = plain_yaml(read_yaml(new))
    assert (
        data["tools"]["b"]["examples"] == ["find the thing for me"] and data["tools"]["b"]["effect"] == "read"
    )
    assert skipped == {} and data["tools"]["a"]["examples"] == ["find the thing for me"]
    # `a` alone: its requests would reach `b` through the merge, so it is left out
    new, skipped = splice(text, {"a": Expansion(("find the thing for me",))}, "review")
    assert new == text and set(skipped) == {"a"}


@pytest.mark.parametrize(
    "given",
    ["    examples: []\n", "    use_when: null\n", "    not_for:\n", "    examples: []\n    use_when: ~\n"],
)
def test_an_empty_expansion_field_is_filled_not_lost(given: str) -> None:
    """An intent whose `examples` is empty or whose `use_when` / `not_for` is null has no expansions:
    it is drafted, and each drafted field is written (none reported drafted but left out)."""
    text = f"toolgen: 1\nspec: s.yaml\ntools:\n  a:\n    operation: getA\n{given}    effect: read\n"
    draft = Expansion(("find the thing for me",), "when the thing is wanted", "other things")
    new, skipped = splice(text, {"a": draft}, "review")
    assert skipped == {}
    data = plain_yaml(read_yaml(new))["tools"]["a"]
    assert data == {"operation": "getA", "effect": "read", **draft.fields()}


@pytest.mark.parametrize("end", ["...\n", "... # the end\n# after the document\n"])
def test_a_document_end_marker_after_the_last_intent_stays_after_it(end: str) -> None:
    """Drafted lines go above the map's ``...``: below it they are outside the document (the map
    was left undrafted, its intents reported as aliased)."""
    text = f'---\ntoolgen: 1\nspec: s.yaml\ninclude:\n  - {{match: "*"}}\ntools:\n  a:\n    operation: getA\n{end}'
    drafts = {"a": Expansion(("find the thing for me",)), "b": Expansion(("look up a b for me",))}
    new, skipped = splice(text, drafts, "review", refs={"b": "getB"})
    assert skipped == {} and new.endswith(end)
    data = plain_yaml(read_yaml(new))
    assert data["tools"]["a"]["examples"] == ["find the thing for me"]
    assert data["examples"] == {"getB": ["look up a b for me"]}


@pytest.mark.parametrize("problem", ["key", "both tapes", "record onto the draft"])
def test_init_describe_refuses_a_writer_it_cannot_use_before_writing_the_draft(
    project: Path, cli: Invoke, monkeypatch: pytest.MonkeyPatch, problem: str
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    args = {
        "key": ["--provider", "anthropic", "--model", "m"],
        "both tapes": ["--provider", "openai", "--model", "m", "--record", "a.json", "--replay", "b.json"],
        "record onto the draft": [
            "--provider",
            "openai",
            "--model",
            "m",
            "--record",
            "intent_maps/gizmos.yaml",
        ],
    }[problem]
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    project_file = (project / "toolgen.yaml").read_bytes()
    result = cli("init", "specs/widgets.yaml", "--name", "gizmos", "--describe", *args)
    assert result.exit_code == 2 and "nothing was written" in result.stderr
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*")) == before
    assert (project / "toolgen.yaml").read_bytes() == project_file


@needs_sdks
def test_init_describe_says_the_draft_was_written_when_the_writer_fails(
    project: Path, cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with EchoServer(401) as server:
        result = cli(
            "init",
            "specs/widgets.yaml",
            "--name",
            "gizmos",
            "--describe",
            *writer_options(server.base_url()),
        )
    assert result.exit_code == 2 and "nothing was written" not in result.stderr
    assert "without search expansions" in result.stderr and "toolgen describe" in result.stderr
    assert MARK not in (project / "intent_maps" / "gizmos.yaml").read_text(encoding="utf-8")


@needs_sdks
@pytest.mark.parametrize(
    "args",
    [
        ["--provider", "anthropic"],
        ["--model", "other"],
        ["--provider", "openai-compatible", "--model", "m", "--base-url", "http://x/v1"],
    ],
)
def test_a_replay_refuses_a_writer_other_than_the_recorded_one(
    tickets: Path, tape: Path, cli: Invoke, args: list[str]
) -> None:
    """A writer named beside ``--replay`` that is not the recorded one is refused, not ignored (the
    review mark would name a writer the user did not choose)."""
    before = tickets.read_bytes()
    result = cli("describe", str(tickets), "--replay", str(tape), *args)
    assert result.exit_code == 2 and "recorded" in result.stderr and str(tape) in result.stderr
    assert tickets.read_bytes() == before


@needs_sdks
def test_a_recording_of_an_unknown_provider_names_the_file(tickets: Path, tape: Path, cli: Invoke) -> None:
    data = json.loads(tape.read_text(encoding="utf-8"))
    data["writer"]["provider"] = "bogus"
    tape.write_text(json.dumps(data), encoding="utf-8")
    result = cli("describe", str(tickets), "--replay", str(tape))
    assert (
        result.exit_code == 2 and f"{tape}: " in result.stderr and "unknown provider 'bogus'" in result.stderr
    )


@needs_sdks
def test_an_answer_of_thousands_of_items_does_not_flood_the_terminal(tickets: Path, cli: Invoke) -> None:
    def flood(prompt: str) -> str:
        tools = [t["tool"] for t in json.loads(prompt)["tools"]]
        return json.dumps(
            {
                "tools": [
                    {"tool": tools[0], "examples": [f"request {i} of many" for i in range(5000)]},
                    *({"tool": f"other_{i}"} for i in range(3000)),
                ]
            }
        )

    with WriterModelServer(flood) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--max-tools",
            "1",
        )
    assert result.exit_code == 0, result.stderr[-500:]
    assert len(result.stderr.splitlines()) < 60 and "and 7,947 more dropped from the answers" in result.stderr
    assert tickets.read_text(encoding="utf-8").count(MARK) == 1


@st.composite
def _layouts(draw: st.DrawFn) -> str:
    """An intent map as people save them: LF or CRLF, comments at any indentation, blank lines,
    trailing spaces, block scalars of every chomping, flow members, a last line without a break."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    pad = st.sampled_from(["", " ", "   "])
    lines = [
        "toolgen: 1",
        "spec: s.yaml" + draw(pad),
        "tools:" + draw(st.sampled_from(["", "  # the tools"])),
    ]
    for n in range(draw(st.integers(1, 4))):
        lines += [f"  t{n}:", f"    operation: op{n}" + draw(pad)]
        lines += draw(
            st.lists(
                st.sampled_from(
                    [
                        "    effect: read",
                        "    description: >-\n      folded text\n      more",
                        "    output: {fields: [id]}",
                        "    summary: |\n      clipped",
                        "    note: |-\n      stripped\n",
                        "    tags:\n    - a\n    - b",
                        "    hide: [a,\n           b]",
                        "    text: plain text\n      continued",
                        "# a comment at column 0",
                        "      # a deep comment",
                        "",
                        "  # a comment at the intents' indentation",
                    ]
                ),
                max_size=5,
                unique=True,
            )
        )
    lines += draw(st.sampled_from([[], ["# the end"], [""], ["examples: {}"]]))
    text = newline.join(line.replace("\n", newline) for line in lines)
    return text + draw(st.sampled_from(["", newline]))


@settings(max_examples=examples(200), deadline=None)
@given(_layouts(), st.sets(st.integers(0, 3)))
def test_any_layout_is_drafted_by_adding_lines_only(text: str, chosen: set[int]) -> None:
    root = read_yaml(text)
    keys = [k for k in root["tools"] if int(k[1:]) in chosen and "examples" not in root["tools"][k]]
    drafts = {k: Expansion((f"find the {k} thing for me",), "when it is asked") for k in keys}
    new, skipped = splice(text, drafts, "review")
    data, old = plain_yaml(read_yaml(new)), plain_yaml(root)
    for key, draft in drafts.items():
        if key not in skipped:
            old["tools"][key].update(draft.fields())
    assert data == old
    newline = "\r\n" if "\r\n" in text else "\n"
    kept = iter(new.split(newline))
    assert all(any(line == other for other in kept) for line in text.split(newline))  # only lines added
    assert new.count(MARK) == len(drafts) - len(skipped)
    assert "\n" not in new.replace(newline, "") if newline == "\r\n" else "\r" not in new


def test_an_intent_left_out_says_why_and_what_to_do() -> None:
    """A block scalar that keeps its trailing lines (``|+``) as an intent's last member cannot take
    lines after it: the reason names it (not only aliases) and says to write the expansions by hand."""
    text = "toolgen: 1\nspec: s.yaml\ntools:\n  a:\n    operation: getA\n    description: |+\n      kept\n\n"
    new, skipped = splice(text, {"a": Expansion(("find the thing for me",))}, "review")
    assert new == text and "|+" in skipped["a"] and "by hand" in skipped["a"]


@needs_sdks
def test_a_password_in_the_base_url_is_not_recorded(tickets: Path, cli: Invoke, tmp_path: Path) -> None:
    tape = tmp_path / "tape.json"
    with WriterModelServer(_answer) as server:
        url = server.base_url("openai-compatible").replace("http://", "http://user:hunter2-secret@")
        result = cli(
            "describe",
            str(tickets),
            *writer_options(url),
            "--record",
            str(tape),
        )
    assert result.exit_code == 0, result.stderr
    recorded = json.loads(tape.read_text(encoding="utf-8"))
    assert "hunter2-secret" not in json.dumps(recorded) and "user@" not in json.dumps(recorded)
    assert recorded["writer"]["base_url"] == server.base_url("openai-compatible")


@needs_sdks
def test_two_runs_at_once_draft_the_map_once(tickets: Path) -> None:
    """Two `toolgen describe` processes on one map, their requests answered only when both have
    asked: one writes its draft, the other finds the map changed and writes nothing."""
    both = threading.Barrier(2, timeout=60)

    def answer(prompt: str) -> str:
        both.wait()
        return _answer(prompt)

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "generator"), os.environ.get("PYTHONPATH", "")]),
    }
    with WriterModelServer(answer) as server:
        command = [
            sys.executable,
            "-m",
            "toolgen",
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--max-tools",
            "1",
        ]
        runs = [subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outcomes = sorted((run.wait(timeout=120), run.stderr.read() if run.stderr else "") for run in runs)
    assert [code for code, _ in outcomes] == [0, 2], outcomes
    assert "changed while the writer drafted" in outcomes[1][1]
    assert tickets.read_text(encoding="utf-8").count(MARK) == 1


def test_an_intent_merged_into_tools_from_elsewhere_is_left_out_never_a_crash() -> None:
    text = "toolgen: 1\nx-shared: &shared\n  b:\n    operation: getB\ntools:\n  <<: *shared\n  a:\n    operation: getA\n"
    new, skipped = splice(text, {k: Expansion(("find the thing for me",)) for k in "ab"}, "review")
    assert set(skipped) == {"b"} and "by hand" in skipped["b"]
    data = plain_yaml(read_yaml(new))
    assert (
        data["tools"]["a"]["examples"] == ["find the thing for me"] and "examples" not in data["tools"]["b"]
    )


def test_top_level_examples_made_of_a_merge_only_are_left_alone() -> None:
    text = 'toolgen: 1\ndefaults: &e\n  getA: ["open a thing now"]\nexamples:\n  <<: *e\n'
    new, skipped = splice(text, {"b": Expansion(("find the thing for me",))}, "review", refs={"b": "getB"})
    assert new == text and "by hand" in skipped["b"]


@pytest.mark.parametrize("source", ["/dev/zero", "big"])
def test_a_recording_that_never_ends_or_is_too_big_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    from toolgen.evals import writers

    path = Path(source)
    if source == "big":
        monkeypatch.setattr(writers, "MAX_CASSETTE_BYTES", 1_000)
        path = tmp_path / "big.json"
        path.write_text(
            json.dumps(
                {"writer": {"provider": "openai", "model": "m"}, "exchanges": [], "padding": "x" * 2_000}
            ),
            encoding="utf-8",
        )
    elif not path.exists():
        pytest.skip("no /dev/zero here")
    with pytest.raises(ValueError, match=r"regular file|bytes"):
        writers.Cassette.read(path)


def _record_into(tickets: Path, cli: Invoke, path: Path) -> tuple[Any, list[Any]]:
    """A describe run over `tickets` recorded into `path`: (the result, the requests the model got)."""
    with WriterModelServer(_answer) as server:
        result = cli(
            "describe",
            str(tickets),
            *writer_options(server.base_url("openai-compatible")),
            "--record",
            str(path),
        )
        return result, list(server.requests["chat"])


@needs_sdks
def test_an_existing_recording_is_replaced_atomically_keeping_its_mode(
    tickets: Path, cli: Invoke, tmp_path: Path
) -> None:
    """The recording is written to a new file beside it and renamed over it: a second name of the old
    file (a hard link) still reads the old bytes, the mode stays, and no temporary file is left."""
    from toolgen.evals.writers import Cassette

    path = tmp_path / "tape.json"
    path.write_text("an earlier recording\n", encoding="utf-8")
    path.chmod(0o640)
    os.link(path, tmp_path / "earlier.json")
    result, sent = _record_into(tickets, cli, path)
    assert result.exit_code == 0, result.stderr
    assert len(Cassette.read(path).exchanges) == len(sent) > 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert (tmp_path / "earlier.json").read_text(encoding="utf-8") == "an earlier recording\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@needs_sdks
def test_a_new_recording_is_an_ordinary_file(tickets: Path, cli: Invoke, tmp_path: Path) -> None:
    """A recording that did not exist gets the mode a new file gets (0666 less the umask), not the
    temporary file's 0600."""
    umask = os.umask(0o022)
    try:
        result, _ = _record_into(tickets, cli, tmp_path / "new" / "tape.json")
    finally:
        os.umask(umask)
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "new" / "tape.json").stat().st_mode) == 0o644


@needs_sdks
@pytest.mark.parametrize("points_to", ["a file", "nothing"])
def test_a_recording_that_is_a_symbolic_link_is_refused_before_anything_is_sent(
    tickets: Path, cli: Invoke, tmp_path: Path, points_to: str
) -> None:
    """A ``--record`` path that is a symbolic link is refused: the recording would otherwise land
    wherever the link points (a file of someone else's, outside the project)."""
    target = tmp_path / "elsewhere.txt"
    if points_to == "a file":
        target.write_text("not a recording\n", encoding="utf-8")
    link = tmp_path / "tape.json"
    link.symlink_to(target)
    before = tickets.read_bytes()
    result, sent = _record_into(tickets, cli, link)
    assert result.exit_code == 2, result.stderr
    assert "--record" in result.stderr and "symbolic link" in result.stderr, result.stderr
    assert sent == [] and link.is_symlink() and tickets.read_bytes() == before
    if points_to == "a file":
        assert target.read_text(encoding="utf-8") == "not a recording\n"
    else:
        assert not target.exists()
