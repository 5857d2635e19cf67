"""`toolgen describe` attacked as a hostile user and a hostile model would: maps in every layout a
person saves (CRLF, a byte order mark, a symlink, a read-only file), recordings aimed at the map, and
answers or servers that echo the API key. Each test tries to make a run corrupt, lose or leak
something; a run that cannot draft must write nothing and say why."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from tests.support.review_project import Invoke, cli
from tests.support.writer_server import WriterModelServer

from toolgen.scaffold.describe_edit import Expansion, splice
from toolgen.yaml_text import plain_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[2]
MARK = "# decide [examples-unreviewed]"
_MISSING = [name for name in ("openai",) if importlib.util.find_spec(name) is None]
needs_sdks = pytest.mark.skipif(bool(_MISSING), reason=f"the provider SDKs are not installed: {_MISSING}")

__all__ = ["cli"]


def _answer(prompt: str) -> str:
    tools = [t["tool"] for t in json.loads(prompt)["tools"]]
    return json.dumps({"tools": [{"tool": t, "examples": [f"could you {t.replace('_', ' ')} for me"],
                                  "use_when": None, "not_for": None} for t in tools]})


@pytest.fixture
def tickets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder, name in (("specs", "tickets.yaml"), ("intent_maps", "tickets.yaml")):
        (tmp_path / folder).mkdir(exist_ok=True)
        shutil.copy(ROOT / folder / name, tmp_path / folder / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return tmp_path / "intent_maps" / "tickets.yaml"


@pytest.fixture
def tape(tickets: Path, cli: Invoke, tmp_path: Path) -> Path:
    """A recorded run over the tickets map (the map is put back as it was)."""
    before = tickets.read_bytes()
    path = tmp_path / "tape.json"
    with WriterModelServer(_answer) as server:
        result = cli("describe", str(tickets), "--provider", "openai-compatible", "--model", "m", "--base-url",
                     server.base_url("openai-compatible"), "--record", str(path))
    assert result.exit_code == 0, result.stderr
    tickets.write_bytes(before)
    return path


@needs_sdks
@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_line_endings_and_the_byte_order_mark_are_kept(tickets: Path, tape: Path, cli: Invoke, newline: bytes,
                                                        bom: bytes) -> None:
    plain = tickets.read_bytes()
    tickets.write_bytes(bom + plain.replace(b"\n", newline))
    assert cli("describe", str(tickets), "--replay", str(tape)).exit_code == 0
    drafted = tickets.read_bytes()
    assert drafted.startswith(bom + b"#") and drafted.count(MARK.encode()) == 5
    assert b"\n" not in drafted.replace(newline, b"")  # every line ends as the map's lines do
    tickets.write_bytes(plain)
    assert cli("describe", str(tickets), "--replay", str(tape)).exit_code == 0
    assert tickets.read_bytes().replace(b"\n", newline) == drafted[len(bom):]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_inside_a_value_does_not_shift_the_lines(separator: str) -> None:
    """YAML 1.2 breaks lines at LF, CRLF and CR only; U+2028, U+2029, U+0085 are not line breaks of the
    map's lines (`str.splitlines` breaks at them), so a value holding one leaves every intent writable."""
    text = ("toolgen: 1\nspec: s.yaml\ntools:\n  a:\n    operation: getA\n"
            f"    description: \"one{separator}two\"\n  b:\n    operation: getB\n")
    new, skipped = splice(text, {k: Expansion(("find the thing for me",)) for k in "ab"}, "review")
    assert skipped == {}
    data = plain_yaml(read_yaml(new))
    assert data["tools"]["a"]["description"] == plain_yaml(read_yaml(text))["tools"]["a"]["description"]
    assert data["tools"]["a"]["examples"] == data["tools"]["b"]["examples"] == ["find the thing for me"]
