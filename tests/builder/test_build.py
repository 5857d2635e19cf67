"""`toolgen build`: the golden record, --check, atomic writes, determinism, located errors, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REAL, REPO, build, run, spec_with_body_ref

from toolgen.builder.build import build_project
from toolgen.builder.output_files import check_outputs
from toolgen.builder.project import load_project

TICKETS_SPEC = REPO / "specs" / "tickets.yaml"
needs_shared = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/specs/real is not available")


@needs_shared
def test_generated_tree_matches_inputs() -> None:
    """generated/ is the golden record of the whole repo: it must equal what the inputs produce."""
    project = load_project(REPO / "toolgen.yaml")
    outputs, builds = build_project(project)
    drifts = check_outputs(outputs)
    message = "".join(d.diff for d in drifts[:3])
    assert not drifts, f"generated/ is stale; refresh with `toolgen build` and commit:\n{message}"
    assert {b.name for b in builds} == {"tickets", "github", "stripe"}
    github = next(b for b in builds if b.name == "github")
    assert len(github.ir.covered) >= 15
    assert any(t.policy.effect == "destructive" for t in github.ir.tools)


def _copy_project(tmp: Path) -> Path:
    root = tmp / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "intent_maps").mkdir()
    shutil.copy(TICKETS_SPEC, root / "specs" / "tickets.yaml")
    shutil.copy(REPO / "intent_maps" / "tickets.yaml", root / "intent_maps" / "tickets.yaml")
    (root / "toolgen.yaml").write_text(
        "toolgen: 1\napis:\n  - {name: tickets, intent_map: intent_maps/tickets.yaml, out: generated/tickets}\n"
    )
    return root


def _in(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_reports_stale_extra_and_missing_files(tmp_path: Path) -> None:
    """The stale check runs as a real process; the builds around it in-process (`_here`)."""
    root = _copy_project(tmp_path)
    assert _here(root, "build", "-q").returncode == 0
    assert _here(root, "build", "--check", "-q").returncode == 0
    policy = root / "generated" / "tickets" / "POLICY.md"
    lines = policy.read_text().splitlines(keepends=True)
    gated = next(i for i, line in enumerate(lines) if line.startswith("| `record_ticket_delete`"))
    lines[gated] = lines[gated].replace("**required**", "never", 1)
    policy.write_text("".join(lines))
    (root / "generated" / "tickets" / "stray.txt").write_text("x")
    (root / "generated" / "tickets" / "REPORT.md").unlink()
    proc = _in(root, "build", "--check")
    assert proc.returncode == 1
    assert "--- a/generated/tickets/POLICY.md" in proc.stderr and "+| `record_ticket_delete`" in proc.stderr
    assert "extra file generated/tickets/stray.txt" in proc.stderr
    assert "missing file generated/tickets/REPORT.md" in proc.stderr
    refused = _here(root, "build", "-q")  # toolgen never deletes a file it did not write
    assert refused.returncode == 2 and "stray.txt" in refused.stderr
    (root / "generated" / "tickets" / "stray.txt").unlink()
    assert _here(root, "build", "-q").returncode == 0
    assert _here(root, "build", "--check", "-q").returncode == 0


def test_failed_build_writes_nothing(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    assert _here(root, "build", "-q").returncode == 0
    before = {p: p.read_bytes() for p in (root / "generated").rglob("*") if p.is_file()}
    intent = root / "intent_maps" / "tickets.yaml"
    intent.write_text(
        intent.read_text()
        .replace("operation: getTicketHistory", "operation: getTicketHistroy")
        .replace("timeout_ms: 5000", "timeout_ms: 4000")
    )
    proc = _in(root, "build")
    assert proc.returncode == 2
    assert "intent_maps/tickets.yaml:" in proc.stderr and "getTicketHistory" in proc.stderr  # did-you-mean
    assert "nothing was written" in proc.stderr
    after = {p: p.read_bytes() for p in (root / "generated").rglob("*") if p.is_file()}
    assert after == before
    assert not [p for p in root.rglob("*.tmp")]


def test_two_processes_with_different_hash_seeds_are_byte_identical(tmp_path: Path) -> None:
    trees = []
    for seed in ("1", "4242"):
        out = tmp_path / f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgen",
                "build",
                str(REPO / "intent_maps" / "tickets.yaml"),
                "--out",
                str(out),
                "-q",
            ],
            check=False,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        trees.append({p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert trees[0] == trees[1]
    text = b"".join(trees[0].values()).decode()
    assert str(tmp_path) not in text and str(REPO) not in text  # no absolute paths


def test_generated_package_imports_and_describes_itself(tmp_path: Path) -> None:
    out = tmp_path / "tickets_pkg"
    result = run("build", str(REPO / "intent_maps" / "tickets.yaml"), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import tickets_pkg as p; m = p.argument_model('preview_ticket_followup');"
                "r = p.argument_model('record_ticket_followup');"
                "print(p.API, len(p.TOOL_NAMES), sorted(m.model_fields), sorted(r.model_fields))"
            ),
        ],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["tickets", "10"]
    assert "'note'" in proc.stdout and "['action_id', 'preview_id']" in proc.stdout


def test_spec_override_by_flag_and_env(tmp_path: Path) -> None:
    intent = tmp_path / "m.yaml"
    intent.write_text(
        "toolgen: 1\nspec: missing.yaml\ntools:\n  get_ticket: {operation: getTicket, effect: read}\n"
    )
    result = run("build", str(intent), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "spec file not found" in result.output and "m.yaml:2:" in result.output
    result = run("build", str(intent), "--out", str(tmp_path / "o"), "--spec", str(TICKETS_SPEC), "-q")
    assert result.exit_code == 0, result.output
    root = _copy_project(tmp_path)
    (root / "specs" / "tickets.yaml").rename(root / "elsewhere.yaml")
    assert _here(root, "build", "-q").returncode == 2
    env = {**os.environ, "TOOLGEN_SPEC_TICKETS": str(root / "elsewhere.yaml")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", "build", "-q"],
        check=False,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def test_intent_map_errors_are_located_with_hints(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS_SPEC,
        """tools:
  get_ticket:
    operation: getTicket
    efect: read
  list_tickets:
    operation: listTickets
    effect: reed
""",
        expect=2,
    )
    out = built.result.output
    assert "api.yaml:7:5" in out and "unknown key `efect`" in out and "did you mean `effect`?" in out
    assert "api.yaml:10:5" in out and "'reed'" in out
    assert not (tmp_path / "out").exists()


def test_unknown_output_field_lists_the_available_ones(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS_SPEC,
        """tools:
  get_ticket:
    operation: getTicket
    effect: read
    output: {fields: [id, subjct]}
""",
        expect=2,
    )
    assert "output-field-unknown" in built.result.output and "'subjct'" in built.result.output
    assert "subject" in built.result.output


def test_swagger2_builds_with_findings_located_in_the_2_0_file(tmp_path: Path) -> None:
    spec = REAL / "petstore-swagger2.json"
    if not spec.exists():
        pytest.skip("shared specs not available")
    built = build(tmp_path, spec)
    assert "uploadFile" in {row["operation"]["id"] for row in built.json("policy.json")["tools"]}
    again = run("build", str(tmp_path / "api.yaml"), "--out", str(tmp_path / "again"), "--emit", "policy")
    assert again.exit_code == 0, again.output
    assert "(Swagger 2.0, read as OpenAPI 3.0.3)" in again.output
    # the header parameter `api_key` of DELETE /pet/{petId}, where the 2.0 text has it
    assert (
        "petstore-swagger2.json:279:11 (#/paths/~1pet~1{petId}/delete/parameters/0): info[param-credential]"
        in again.output
    )


def test_external_ref_is_refused_with_location(tmp_path: Path) -> None:
    spec = spec_with_body_ref(tmp_path, "other.yaml#/components/schemas/A", "ext.yaml")
    built = build(
        tmp_path, spec, "tools:\n  a: {operation: createA, effect: write, approval: never}\n", expect=2
    )
    assert "ref-external" in built.result.output and "ext.yaml:10:" in built.result.output


def test_yaml_syntax_error_in_spec_is_located(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("openapi: 3.0.3\ninfo: {title: t, version: '1'\npaths: {}\n")
    built = build(tmp_path, spec, expect=2)
    assert "yaml-syntax" in built.result.output and "bad.yaml:3:" in built.result.output


def test_hostile_description_cannot_inject_code(tmp_path: Path) -> None:
    import json

    canary = tmp_path / "canary"
    payload = f'x"""\n\'\'\'\nimport os; os.system("touch {canary}")\n{{{{ 1 }}}} ${{x}} \\ \u2028 \r'
    spec = tmp_path / "evil.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": payload, "version": "1"},
                "paths": {
                    "/a": {
                        "get": {
                            "operationId": "getA",
                            "summary": payload,
                            "parameters": [
                                {
                                    "name": "q",
                                    "in": "query",
                                    "description": payload,
                                    "schema": {"type": "string", "enum": [payload, "class", "None"]},
                                }
                            ],
                            "responses": {"200": {"description": "ok"}},
                        }
                    }
                },
            }
        )
    )
    build(tmp_path, spec, emit="openai,anthropic,mcp,policy,report,python")
    proc = subprocess.run(
        [sys.executable, "-c", "import out, out.models; print(out.MCP_TOOLS[0]['title'])"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert not canary.exists()
    assert "touch" in proc.stdout  # the text survives, as data


def test_external_file_refs_bundled_when_allowed(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "models.yaml").write_text("""components:
  schemas:
    A:
      type: object
      required: [name]
      properties:
        name: {type: string, maxLength: 10}
        tag: {$ref: '#/components/schemas/Tag'}
    Tag: {type: string, enum: [x, y]}
""")
    spec = spec_with_body_ref(tmp_path, "common/models.yaml#/components/schemas/A", "ext.yaml")
    refused = build(
        tmp_path, spec, "tools:\n  a: {operation: createA, effect: write, approval: never}\n", expect=2
    )
    assert "allow_external_refs" in refused.result.output
    built = build(
        tmp_path,
        spec,
        "allow_external_refs: true\ntools:\n  a: {operation: createA, effect: write, approval: never}\n",
    )
    props = built.tool("mcp", "record_a")["inputSchema"]["properties"]
    assert props["name"]["maxLength"] == 10 and props["tag"]["enum"] == ["x", "y"]


@pytest.mark.parametrize("where", ["inputs", "parent", "dot", "dotdot", "foreign", "file"])
def test_output_folder_that_would_lose_data_is_refused(tmp_path: Path, where: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(TICKETS_SPEC, work / "tickets.yaml")
    intent = work / "intent.yaml"
    intent.write_text(
        "toolgen: 1\nspec: tickets.yaml\ntools:\n  get_ticket: {operation: getTicket, effect: read}\n"
    )
    out = {
        "inputs": work,
        "parent": tmp_path,
        "dot": Path("."),
        "dotdot": Path(".."),
        "foreign": work / "mine",
        "file": work / "afile",
    }[where]
    if where == "foreign":
        out.mkdir()
        (out / "notes.txt").write_text("keep me")
    if where == "file":
        out.write_text("keep me")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    if where == "inputs":  # one as a real process; the others in-process (an exception would fail the test)
        proc = subprocess.run(
            [sys.executable, "-m", "toolgen", "build", str(intent), "--out", str(out)],
            check=False,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
        )
    else:
        proc = _here(work, "build", str(intent), "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "out-unsafe" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    said = {
        "inputs": "output folder . is the working directory",
        "dot": "output folder . is the working directory",
        "dotdot": "output folder .. holds the working directory",
        "parent": "holds the working directory",
        "foreign": "holds files toolgen did not write: notes.txt",
        "file": "is an existing file",
    }[where]
    assert said in proc.stderr, proc.stderr


def test_rebuilding_a_toolgen_folder_replaces_it(tmp_path: Path) -> None:
    intent = REPO / "intent_maps" / "tickets.yaml"
    out = tmp_path / "gen"
    assert run("build", str(intent), "--out", str(out), "-q").exit_code == 0
    (out / "__pycache__").mkdir()
    assert run("build", str(intent), "--out", str(out), "-q", "--emit", "openai,policy").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["POLICY.md", "openai.json", "policy.json", "search.json"]


def test_spec_location_and_working_directory_do_not_change_the_output(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    assert _here(root, "build", "-q").returncode == 0
    moved = tmp_path / "elsewhere" / "copy.yaml"
    moved.parent.mkdir()
    shutil.copy(TICKETS_SPEC, moved)
    env = {**os.environ, "TOOLGEN_SPEC_TICKETS": str(moved)}
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", "build", "--check"],
        check=False,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    # a single intent map: --spec NAME=PATH and TOOLGEN_SPEC_<NAME> apply too
    intent = root / "intent_maps" / "tickets.yaml"
    bad = run("build", str(intent), "--out", str(tmp_path / "o"), "--spec", "tickets=nowhere.yaml")
    assert bad.exit_code == 2 and "nowhere.yaml" in bad.output


@pytest.mark.parametrize("array", [{"type": "array", "prefixItems": []}, {"type": "array", "items": []}])
def test_empty_tuple_forms_are_dropped_not_emitted(tmp_path: Path, array: dict[str, Any]) -> None:
    """JSON Schema 2020-12 requires a non-empty `prefixItems`; an empty tuple (3.1 `prefixItems: []`,
    or the draft-04 `items: []`) constrains nothing, so it is dropped with a warning and every
    catalog stays conformant (it once failed the build with an internal error)."""
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/x": {
                        "get": {
                            "operationId": "getX",
                            "responses": {
                                "200": {
                                    "description": "ok",
                                    "content": {"application/json": {"schema": array}},
                                }
                            },
                        }
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    built = build(tmp_path, spec)
    assert "prefixItems" not in json.dumps(built.tool("mcp", "get_x")["outputSchema"])


def _unsafe_project(tmp: Path, lint: str = "") -> Path:
    """The tickets project with a destructive intent that needs no approval and an undeclared scope."""
    root = _copy_project(tmp)
    intent = root / "intent_maps" / "tickets.yaml"
    text = intent.read_text()
    start = text.index("  ticket_delete:")
    end = text.index("  get_ticket_history:")
    block = (
        text[start:end]
        .replace("approval: required", "approval: never")
        .replace("ticket:delete", "ticket:purge")
    )
    intent.write_text(text[:start] + block + text[end:])
    if lint:
        (root / "toolgen.yaml").write_text((root / "toolgen.yaml").read_text() + lint)
    return root


def _here(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`toolgen ARGS` in-process, in `root` (faster than a subprocess; same exit code and stderr)."""
    cwd = Path.cwd()
    os.chdir(root)
    try:
        result = run(*args)
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def test_build_prints_lint_errors_and_fails(tmp_path: Path) -> None:
    """A destructive intent with `approval: never` and a scope the spec does not declare: the build
    prints both findings, located, exits 1 and writes nothing (with or without --check)."""
    root = _unsafe_project(tmp_path)
    for args in (
        ["build"],
        ["build", "--check"],
        ["build", "intent_maps/tickets.yaml", "--out", "generated/tickets"],
    ):
        proc = _here(root, *args)
        assert proc.returncode == 1, proc.stderr
        assert "intent_maps/tickets.yaml:" in proc.stderr
        assert "error[destructive-without-approval]" in proc.stderr, proc.stderr
        assert "error[scope-unknown]" in proc.stderr, proc.stderr
        assert "nothing was written" in proc.stderr
        assert not (root / "generated").exists()


def test_build_honours_configured_severities(tmp_path: Path) -> None:
    """`lint.severity` in toolgen.yaml applies to the build: the two findings demoted to warnings
    build (exit 0), are printed and reach REPORT.md; `off` drops a finding altogether."""
    root = _unsafe_project(
        tmp_path, "lint:\n  severity: {destructive-without-approval: warning, scope-unknown: off}\n"
    )
    proc = _here(root, "build")
    assert proc.returncode == 0, proc.stderr
    assert "warning[destructive-without-approval]" in proc.stderr
    assert "scope-unknown" not in proc.stderr
    assert "1 warning," in proc.stderr and "1 warnings" not in proc.stderr
    report = (root / "generated" / "tickets" / "REPORT.md").read_text()
    assert "destructive-without-approval" in report and "scope-unknown" not in report


def test_single_map_project_and_check_agree(tmp_path: Path) -> None:
    """One set of inputs, one set of bytes: the project build, one API of it by name, the intent map
    on its own (from the root and from elsewhere) and --check agree byte for byte."""
    root = _copy_project(tmp_path)
    assert _here(root, "build", "-q").returncode == 0
    project = root / "generated" / "tickets"
    golden = {p.name: p.read_bytes() for p in project.iterdir()}
    single = _here(root, "build", "intent_maps/tickets.yaml", "--out", "single/tickets", "-q")
    assert single.returncode == 0, single.stderr
    assert {p.name: p.read_bytes() for p in (root / "single" / "tickets").iterdir()} == golden
    elsewhere = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            "build",
            str(root / "intent_maps" / "tickets.yaml"),
            "--out",
            str(tmp_path / "other"),
            "-q",
        ],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "other").iterdir()} == golden
    shutil.rmtree(project)
    assert (
        _here(root, "build", "intent_maps/tickets.yaml", "--out", "generated/tickets", "-q").returncode == 0
    )
    assert _here(root, "build", "--check", "-q").returncode == 0
    named = _here(root, "build", "tickets", "--check")
    assert named.returncode == 0 and "(1 API)" in named.stderr, named.stderr
    assert _here(root, "build", "--api", "tickets", "--check", "-q").returncode == 0
    unknown = _here(root, "build", "nope")
    assert unknown.returncode == 2 and "no API named 'nope'" in unknown.stderr


def test_absolute_spec_path_never_reaches_generated_files(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    intent = root / "intent_maps" / "tickets.yaml"
    spec = (root / "specs" / "tickets.yaml").resolve()
    intent.write_text(intent.read_text().replace("spec: ../specs/tickets.yaml", f"spec: {spec}"))
    outside = tmp_path / "elsewhere" / "tickets-api.yaml"
    outside.parent.mkdir()
    shutil.copy(spec, outside)
    assert _here(root, "build", "-q").returncode == 0
    env = {**os.environ, "TOOLGEN_SPEC_TICKETS": str(outside)}
    assert (
        subprocess.run(
            [sys.executable, "-m", "toolgen", "build", "intent_maps/tickets.yaml", "--out", "single", "-q"],
            check=False,
            cwd=root,
            env=env,
            timeout=300,
        ).returncode
        == 0
    )
    for folder in (root / "generated" / "tickets", root / "single"):
        for path in folder.iterdir():
            text = path.read_text(encoding="utf-8")
            assert str(tmp_path) not in text, path.name
    assert "`specs/tickets.yaml`" in (root / "generated" / "tickets" / "POLICY.md").read_text()


def test_a_build_with_the_collector_paused_equals_one_without(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equivalence the paused collector is kept under (benchmarks/results/speed_tricks.md): a
    build that pauses the cyclic garbage collector (and runs the Python package's stage with it,
    frozen heap and larger thresholds) writes the bytes of a build that leaves the collector alone.
    Stripe's slice: a JSON spec (its duplicate-key pass), recursive schemas, every artifact, the
    package formatted in this process."""
    import contextlib
    import gc

    import toolgen.builder.build as build_module

    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    intent = REPO / "intent_maps" / "stripe.yaml"
    assert gc.isenabled()
    paused = build_module.build_api(intent, REPO / "generated" / "stripe", base=REPO)
    assert gc.isenabled() and gc.get_freeze_count() == 0  # restored
    monkeypatch.setattr(build_module, "gc_paused", contextlib.nullcontext)
    plain = build_module.build_api(intent, REPO / "generated" / "stripe", base=REPO)
    assert set(paused.files) >= {"policy.json", "models.py", "openai.json"}
    assert paused.files == plain.files
    assert [d.render() for d in paused.diagnostics] == [d.render() for d in plain.diagnostics]
