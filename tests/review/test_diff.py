"""`toolgen diff`: two generated trees built with `toolgen build INTENT --out DIR` from the clean
widgets map and from changed.yaml (one change of every risky kind), compared both ways; the git mode
(`git show`, no checkout) in a scratch repository; Markdown and JSON output; --fail-on."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REVIEW_FIXTURE as FIXTURE
from tests.support.policy_rows import record_row

from toolgen.builder.project import Artifact
from toolgen.policy.format import FixedValue, NarrowedArg

EMIT: tuple[Artifact, ...] = ("mcp", "policy")


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<tmp>/clean/widgets and <tmp>/changed/widgets, built once for the module. changed.yaml drops
    approval gates on purpose, which `toolgen build` refuses; the risky tree is built with those rules
    demoted to warnings (as a project's `lint.severity` would)."""
    from toolgen.builder.build import build_api
    from toolgen.builder.output_files import Output, write_outputs
    from toolgen.review.lint import LintSettings

    lenient = LintSettings(
        severity={"destructive-without-approval": "warning", "idempotency-header-unused": "warning"}
    )
    root = tmp_path_factory.mktemp("diff")
    for name in ("clean", "changed"):
        built = build_api(
            FIXTURE / "intent_maps" / f"{name}.yaml", root / name / "widgets", emit=EMIT, lint=lenient
        )
        assert not built.errors, built.errors
        write_outputs([Output(built.out, built.files)])
    return root


def _diff(cli: Callable[..., Any], old: Path, new: Path, *more: str) -> dict[str, Any]:
    result = cli("diff", str(old), str(new), "--format", "json", *more)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _kinds(report: dict[str, Any], risky: bool | None = None) -> set[tuple[str, str]]:
    return {(c["tool"], c["kind"]) for c in report["changes"] if risky is None or c["risky"] == risky}


EXPECTED_RISKY = {
    ("list_all_widgets", "tool-renamed"),
    ("usage_report", "tool-removed"),
    ("record_recolour_widget", "tool-added"),
    ("touch_widget", "operation-changed"),
    ("record_update_widget", "effect-widened"),
    ("record_delete_widget", "approval-removed"),
    ("get_widget", "permission-changed"),
    ("record_remove_widget_tag", "idempotency-removed"),
    ("record_create_widget", "idempotency-not-sent"),
    ("widgets_by_name", "argument-removed"),
}


def test_each_risky_kind_is_reported(trees: Path, cli: Callable[..., Any]) -> None:
    report = _diff(cli, trees / "clean", trees / "changed")
    assert _kinds(report, risky=True) >= EXPECTED_RISKY
    assert report["risky"] == len([c for c in report["changes"] if c["risky"]])
    # risky changes come first
    flags = [c["risky"] for c in report["changes"]]
    assert flags == sorted(flags, reverse=True)
    other = _kinds(report, risky=False)
    assert {
        ("preview_recolour_widget", "tool-added"),
        ("list_gadgets", "description-changed"),
        ("record_update_widget", "approval-added"),
    } <= other
    tokens = report["apis"]["widgets"]["tokens"]
    assert tokens["new"] > tokens["old"] > 0 and tokens["delta"] == tokens["new"] - tokens["old"]
    assert report["apis"]["widgets"]["tools"] == {"old": 14, "new": 15}


def test_reverse_direction(trees: Path, cli: Callable[..., Any]) -> None:
    report = _diff(cli, trees / "changed", trees / "clean")
    risky = _kinds(report, risky=True)
    assert ("widgets_by_name", "argument-required-added") in risky  # `q` was fixed, now the caller's
    assert ("list_widgets", "tool-renamed") in risky
    assert ("record_recolour_widget", "tool-removed") in risky
    other = _kinds(report, risky=False)
    assert {
        ("usage_report", "tool-added"),
        ("record_update_widget", "effect-narrowed"),
        ("record_delete_widget", "approval-added"),
    } <= other


def test_no_change(trees: Path, cli: Callable[..., Any]) -> None:
    result = cli("diff", str(trees / "clean"), str(trees / "clean"), "--fail-on", "any")
    assert result.exit_code == 0
    assert "No changes to the generated tool surface." in result.stdout


def test_markdown_and_fail_on(trees: Path, cli: Callable[..., Any]) -> None:
    result = cli("diff", str(trees / "clean"), str(trees / "changed"))
    assert result.exit_code == 0  # --fail-on never is the default
    md = result.stdout
    assert md.index("### Risky changes") < md.index("### Other changes") < md.index("### Catalog size")
    assert "| `record_delete_widget` | approval removed | required → never |" in md
    assert "| widgets | 14 → 15 |" in md
    assert cli("diff", str(trees / "clean"), str(trees / "changed"), "--fail-on", "risky").exit_code == 1
    assert cli("diff", str(trees / "changed"), str(trees / "changed"), "--fail-on", "risky").exit_code == 0


def test_bad_input(tmp_path: Path, cli: Callable[..., Any]) -> None:
    assert cli("diff", str(tmp_path / "a"), str(tmp_path / "b")).exit_code == 2
    bad = tmp_path / "bad" / "x"
    bad.mkdir(parents=True)
    (bad / "policy.json").write_text("{not json", encoding="utf-8")
    result = cli("diff", str(bad), str(bad))
    assert result.exit_code == 2 and "diff-input-invalid" in result.stderr
    # a policy.json of another format version is refused at its `format` member, saying what to do
    (bad / "policy.json").write_text(json.dumps({"format": 99, "api": "x", "tools": []}), encoding="utf-8")
    result = cli("diff", str(bad), str(bad))
    assert (
        result.exit_code == 2
        and "policy.json#/format: error[diff-input-invalid]: policy format 99" in result.stderr
    )
    assert "hint: rebuild the API" in result.stderr


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.test",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.test",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(cwd),
        },
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_ref_against_working_tree(
    trees: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(trees / "clean", repo / "generated")
    _git(repo, "init", "-q")
    _git(repo, "add", "generated")
    _git(repo, "commit", "-q", "-m", "base")
    shutil.rmtree(repo / "generated" / "widgets")
    shutil.copytree(trees / "changed" / "widgets", repo / "generated" / "widgets")
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo)
    result = cli("diff", "--format", "json")  # default: HEAD vs the working tree
    assert result.exit_code == 0, result.stderr
    assert _kinds(json.loads(result.stdout), risky=True) >= EXPECTED_RISKY
    assert cli("diff", "HEAD", "--fail-on", "risky").exit_code == 1
    monkeypatch.chdir(repo / "sub")  # paths are relative to the working directory, as in git
    assert (
        _kinds(json.loads(cli("diff", "--dir", "../generated", "--format", "json").stdout), risky=True)
        >= EXPECTED_RISKY
    )
    monkeypatch.chdir(repo)
    bad = cli("diff", "no-such-ref")
    assert bad.exit_code == 2 and "diff-unknown-ref" in bad.stderr


def test_description_change_is_shown(trees: Path, cli: Callable[..., Any]) -> None:
    report = _diff(cli, trees / "clean", trees / "changed")
    detail = next(
        c["detail"]
        for c in report["changes"]
        if (c["tool"], c["kind"]) == ("list_gadgets", "description-changed")
    )
    assert detail.startswith("“") and " → “" in detail, detail
    assert "Now with a longer description." in detail.split(" → ")[1]
    assert "Now with" not in detail.split(" → ")[0]


def test_description_still_promising_approval_is_risky() -> None:
    from toolgen.review.diff import compare_tool, describe_change

    row = record_row()
    text = (
        "Append one follow-up note to a ticket. Preview first: the preview returns a preview_id that a human "
        "approves; then record with the same arguments."
    )
    tool = {"name": "record_x", "description": text}
    changes = compare_tool("api", "record_x", row, replace(row, approval="never"), tool, tool)
    stale = [c for c in changes if c.kind == "description-stale"]
    assert len(stale) == 1 and stale[0].risky and "preview_id" in stale[0].detail
    assert not [
        c for c in compare_tool("api", "record_x", row, row, tool, tool) if c.kind == "description-stale"
    ]
    plain = {**tool, "description": "Append one follow-up note to a ticket."}
    assert not [
        c
        for c in compare_tool("api", "record_x", row, replace(row, approval="never"), tool, plain)
        if c.kind == "description-stale"
    ]
    # the sentence toolgen writes into a tool without approval promises nothing; a later promise still counts
    generated = {
        **tool,
        "description": "Append one follow-up note to a ticket. Writes (POST). No approval needed.",
    }
    assert not [
        c
        for c in compare_tool("api", "record_x", row, replace(row, approval="never"), tool, generated)
        if c.kind == "description-stale"
    ]
    both = {
        **tool,
        "description": "No approval needed for drafts; a human approves the preview_id of the rest.",
    }
    stale = [
        c
        for c in compare_tool("api", "record_x", row, replace(row, approval="never"), tool, both)
        if c.kind == "description-stale"
    ]
    assert len(stale) == 1 and "approves" in stale[0].detail, stale
    long_old, long_new = (
        "word " * 60 + "a human approves it. " + "tail " * 60,
        "word " * 60 + "it. " + "tail " * 60,
    )
    shown = describe_change(long_old, long_new)
    assert len(shown) < 200 and "a human approves it" in shown and shown.count("…") >= 2


def test_diff_and_report_count_tokens_alike() -> None:
    from tests.support.build import REPO

    from toolgen.review.diff_inputs import read_dir

    surface = read_dir(REPO / "generated" / "tickets")["tickets"]
    report = (REPO / "generated" / "tickets" / "REPORT.md").read_text(encoding="utf-8")
    row = next(line for line in report.splitlines() if line.startswith("| catalog tokens"))
    assert row.rstrip(" |").split(" / ")[-1] == str(surface.tokens())


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_repository_without_commits_is_a_located_error(
    trees: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    repo = tmp_path / "fresh"
    shutil.copytree(trees / "clean", repo / "generated")
    _git(repo, "init", "-q")
    monkeypatch.chdir(repo)
    result = cli("diff")
    assert result.exit_code == 2
    assert "generated: error[diff-no-commits]: the repository has no commits yet" in result.stderr
    assert "rev-parse" not in result.stderr and "nothing was written" not in result.stderr
    unknown = cli("diff", "no-such-ref")
    assert unknown.exit_code == 2 and "error[diff-no-commits]" in unknown.stderr
    _git(repo, "add", "generated")
    _git(repo, "commit", "-q", "-m", "base")
    unknown = cli("diff", "no-such-ref")
    assert (
        unknown.exit_code == 2
        and "error[diff-unknown-ref]: git knows no commit 'no-such-ref'" in unknown.stderr
    )


def test_record_narrowing_toolset_and_loading_changes_have_their_own_kinds() -> None:
    """What a record tool executes, the intent map's narrowings, toolsets and loading are named
    changes (not a generic policy-changed); dropping a narrowing widens what the runtime accepts, so
    it is risky."""
    from toolgen.review.diff import compare_tool

    narrowed = NarrowedArg("labels", {"type": "array", "items": {"type": "string"}})
    old = record_row(
        record_arguments="preview", preview_ttl_s=900, narrowed=(narrowed,), toolset="issues", loading="eager"
    )
    new = replace(
        old, record_arguments="full", preview_ttl_s=None, narrowed=(), toolset="repos", loading="deferred"
    )
    changes = {c.kind: c for c in compare_tool("api", "record_x", old, new, None, None)}
    assert changes["record-arguments-changed"].detail == (
        "the record tool executes the stored preview (expires after 900 s) → full arguments"
    )
    assert changes["narrowing-removed"].risky and "`labels`" in changes["narrowing-removed"].detail
    assert changes["toolset-changed"].detail == "toolset issues → repos"
    assert "tool search" in changes["loading-changed"].detail
    assert "policy-changed" not in changes
    back = {c.kind: c for c in compare_tool("api", "record_x", new, old, None, None)}
    assert "narrowing-added" in back and not back["narrowing-added"].risky
    wider = replace(old, narrowed=(replace(narrowed, schema={"type": "array"}),))
    assert {c.kind for c in compare_tool("api", "record_x", old, wider, None, None)} == {"narrowing-changed"}
    assert compare_tool("api", "record_x", old, replace(old), None, None) == []
    # what no kind of its own covers is named by its policy.json member
    other = replace(old, timeout_ms=9000, fixed=(FixedValue("header", "X-Version", "2"),))
    changes = {c.kind: c for c in compare_tool("api", "record_x", old, other, None, None)}
    assert changes["policy-changed"].detail == "changed: request, timeout_ms"
