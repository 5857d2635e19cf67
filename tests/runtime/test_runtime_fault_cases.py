"""Runtime assertions of the shared fault cases (../shared/cases/*/EXPECTED.md, "Runtime:" lines):
03 path/body name collision, 08 OAS 3.0 nullable input, 15 optional fields under strict mode,
19 readOnly in request bodies, 24 operations without parameters.

Each case's spec is built with an include-everything intent map (`toolgen build INTENT --out DIR`),
then its tools run through the runtime against a recording loopback server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record, preview_tool_of
from tests.support.runtime_env import SHARED

from toolgen.runtime import Actor, Approval, MemoryReceiptStore, Registry
from toolgen.runtime.call.nulls import normalise_nulls
from toolgen.runtime.call.request import build_request

CASES = SHARED / "cases"
pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="../shared/cases is not available")


def _build(case: str, out_root: Path) -> Path:
    from toolgen.cli import main

    spec = next(CASES.glob(f"{case}-*")) / "spec.yaml"
    intent = out_root / f"{case}.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {spec.resolve()}\napi: {{name: case{case}}}\ninclude: [{{match: "*"}}]\n'
    )
    out = out_root / f"case{case}"
    result = CliRunner().invoke(main, ["build", str(intent), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cases")
    return {case: _build(case, root) for case in ("03", "08", "15", "19", "24")}


class Secrets:
    def get(self, name: str) -> str | None:
        return f"secret-for-{name}"


@pytest.fixture
def make(recorder: RecordingServer) -> Iterator[Any]:
    regs: list[Registry] = []

    def factory(folder: Path) -> Registry:
        reg = Registry.from_dir(
            folder, base_url=recorder.base_url, credentials=Secrets(), receipts=MemoryReceiptStore()
        )
        regs.append(reg)
        return reg

    yield factory
    for reg in regs:
        reg.close()


def _tool(reg: Registry, operation_id: str, mode: str) -> str:
    for name, spec in reg.specs.items():
        if spec.row.operation_id == operation_id and spec.row.mode == mode:
            return name
    raise AssertionError(f"no {mode} tool for {operation_id}: {reg.tool_names()}")


def _record(reg: Registry, operation_id: str, args: dict[str, Any], key: str = "k-1") -> Any:
    record = _tool(reg, operation_id, "record")
    row = reg.row_json(record)
    preview_args = dict(args)
    idem = row.get("idempotency")
    call_args = dict(args)
    if idem:
        call_args[idem["arg"]] = key
    actor = Actor.of("t", row["permission"])
    preview = reg.call(
        row["pair"], preview_args, actor=Actor.of("t", reg.row_json(row["pair"])["permission"])
    )
    assert preview.ok and preview.result is not None, preview.to_json()
    return call_record(reg, record, call_args, actor=actor, approval=Approval(preview.result["preview_id"]))


def _arg_for(reg: Registry, tool: str, location: str, wire: str) -> str:
    for b in reg.row_json(tool)["request"]["bindings"]:
        if b["in"] == location and b["name"] == wire:
            return str(b["arg"])
    raise AssertionError(f"{tool} has no binding ({location}, {wire})")


def test_03_path_and_body_id_go_to_their_own_places(
    built: dict[str, Path], make: Any, recorder: RecordingServer
) -> None:
    reg = make(built["03"])
    record = _tool(reg, "replaceWidget", "record")
    path_id, body_id = _arg_for(reg, record, "path", "id"), _arg_for(reg, record, "body", "id")
    query_label, body_label = _arg_for(reg, record, "query", "label"), _arg_for(reg, record, "body", "label")
    assert len({path_id, body_id, query_label, body_label}) == 4
    res = _record(reg, "replaceWidget", {path_id: 7, body_id: 8, body_label: "a", query_label: None})
    assert res.ok, res.to_json()
    sent = recorder.last
    assert (sent.method, sent.path, sent.raw_query) == ("PUT", "/widgets/7", "")
    assert sent.json() == {"id": 8, "label": "a"}
    res = _record(
        reg, "replaceWidget", {path_id: 7, body_id: 8, body_label: "a", query_label: "b"}, key="k-2"
    )
    assert res.ok
    assert recorder.last.query == [("label", "b")] and recorder.last.json() == {"id": 8, "label": "a"}


def test_08_nullable_required_is_sent_optional_null_is_omitted(
    built: dict[str, Path], make: Any, recorder: RecordingServer
) -> None:
    reg = make(built["08"])
    record = _tool(reg, "createItem", "record")
    spec = reg.specs[record]
    key = spec.key_arg
    base = {key: "k"} if key else {}
    # the arguments are validated where the model writes them: the preview tool of a record executing it
    checked = reg.specs[preview_tool_of(reg, record) or record]
    own = base if checked is spec else {}
    assert checked.input_validator.is_valid(
        normalise_nulls({"title": "t", "note": None, **own}, checked.input_schema, checked.send_null)
    )
    missing_note = call_record(
        reg,
        record,
        {"title": "t", **base},
        actor=Actor.of("t", spec.row.permission),
        approval=Approval("sha256:irrelevant"),
    )
    assert missing_note.error is not None and missing_note.error.code == "invalid_arguments"
    assert missing_note.error.details["pointer"] == "/note"
    region = _arg_for(reg, record, "query", "region")
    res = _record(reg, "createItem", {"title": "t", "note": None, "price": None, "tags": None, region: None})
    assert res.ok, res.to_json()
    assert recorder.last.raw_query == ""
    assert recorder.last.body == b'{"title":"t","note":null}'


def test_15_openai_nulls_are_omitted_recursively(
    built: dict[str, Path], make: Any, recorder: RecordingServer
) -> None:
    reg = make(built["15"])
    record = _tool(reg, "extractWebPage", "record")
    depth = _arg_for(reg, record, "query", "depth")
    res = _record(
        reg, "extractWebPage", {"urls": "https://a.test", "includeImages": None, "options": None, depth: None}
    )
    assert res.ok, res.to_json()
    assert (recorder.last.method, recorder.last.path, recorder.last.raw_query) == ("POST", "/extract", "")
    assert recorder.last.json() == {"urls": "https://a.test"}
    res = _record(
        reg,
        "extractWebPage",
        {
            "urls": ["https://a.test"],
            "options": {"timeoutMs": None, "userAgent": "x"},
            "includeImages": None,
            depth: None,
        },
        key="k-2",
    )
    assert res.ok, res.to_json()
    assert recorder.last.json() == {"urls": ["https://a.test"], "options": {"userAgent": "x"}}


def test_19_read_only_fields_are_never_forwarded(
    built: dict[str, Path], make: Any, recorder: RecordingServer
) -> None:
    reg = make(built["19"])
    record = _tool(reg, "updateProject", "record")
    props = reg.specs[record].input_schema["properties"]
    assert "id" not in props and "senderId" not in props and "createdAt" not in props
    project_id = _arg_for(reg, record, "path", "projectId")
    # through the runtime: an undeclared readOnly field is rejected before anything is sent
    smuggled = reg.call(
        record,
        {project_id: 1, "name": "n", "id": 5},
        actor=Actor.of("t", reg.row_json(record)["permission"]),
        approval=Approval("sha256:x"),
    )
    assert smuggled.error is not None and smuggled.error.code == "invalid_arguments"
    assert recorder.requests == []
    # bypassing validation: the request builder forwards only bound arguments
    built_req = build_request(
        reg.row(record), {project_id: 1, "name": "n", "id": 5, "senderId": 9}, base_url=recorder.base_url
    )
    assert built_req.body_view == {"name": "n"}
    res = _record(reg, "updateProject", {project_id: 1, "name": "n"})
    assert res.ok and recorder.last.json() == {"name": "n"} and recorder.last.path == "/projects/1"


@pytest.mark.parametrize("arguments", [{}, None])
def test_24_no_parameter_operations(
    built: dict[str, Path], make: Any, recorder: RecordingServer, arguments: Any
) -> None:
    reg = make(built["24"])
    for op in ("getHealth", "getCurrentUser"):
        tool = _tool(reg, op, "read")
        res = call_record(reg, tool, arguments, actor=Actor.of("t", reg.row_json(tool)["permission"]))
        assert res.ok, res.to_json()
        sent = recorder.last
        assert sent.method == "GET" and sent.raw_query == "" and sent.body == b""
        if op == "getCurrentUser":
            secret = reg.row_json(tool)["auth"][0]["secret"]
            assert sent.header("Authorization") == f"Bearer secret-for-{secret}"
        else:
            assert sent.header("Authorization") is None
