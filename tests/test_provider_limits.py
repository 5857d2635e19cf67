"""Provider limits known before the work: a catalog that no request could carry is a located lint
error found on the IR, before any catalog is built, never an internal error after minutes of emitting;
`--emit` without that provider's catalog builds.

Anthropic's tool search carries at most 10,000 tools (docs/provider-rules.md F.2). The real case
(an API of 11,000+ operations, every toolset deferred) takes minutes to lower; here the limit is
lowered to 12 for the test (the same code path), and one test builds the real-size shape (5,001
writes, 10,004 tools with the tool-search tool) to see the error arrive without building catalogs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import run

from toolgen.dialects import _preflight, anthropic
from toolgen.dialects._limits import Limit


def _spec(writes: int) -> dict[str, Any]:
    paths: dict[str, Any] = {f"/things{i}": {"post": {
        "operationId": f"create_thing_{i}", "summary": f"Create a thing of kind {i}.",
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}}},
        "responses": {"201": {"description": "created"}}}} for i in range(writes)}
    paths["/ping"] = {"get": {"operationId": "ping", "summary": "Check the API is up.",
                              "responses": {"204": {"description": "up"}}}}
    return {"openapi": "3.0.3", "info": {"title": "many", "version": "1"}, "paths": paths}


INTENTS = """toolgen: 1
spec: many.json
api: {name: many}
toolsets:
  core: {description: Health checks., loading: eager}
  things: {description: The things., loading: deferred}
include:
  - {match: ping, toolset: core}
  - {match: "*", toolset: things}
"""


def _write(tmp: Path, writes: int) -> Path:
    (tmp / "many.json").write_text(json.dumps(_spec(writes)), encoding="utf-8")
    intent = tmp / "many.yaml"
    intent.write_text(INTENTS, encoding="utf-8")
    return intent


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    """Anthropic's tool-search limit lowered to 12 tools, for the check before the work and for the
    conformance check after it alike."""
    monkeypatch.setattr(_preflight, "ANTHROPIC_SEARCH_LIMIT", Limit("max_search_tools", 12, "F.2 (lowered)"))
    monkeypatch.setattr(anthropic, "ANTHROPIC_MAX_SEARCH_TOOLS", 12)
    return 12


def test_over_the_tool_search_limit_is_a_located_error_before_any_catalog(
        tmp_path: Path, small_limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = _write(tmp_path, 6)  # 6 writes: 12 tools, 1 read, and the tool-search tool: 14 > 12

    def no_catalogs(*_: Any, **__: Any) -> Any:
        raise AssertionError("catalogs were built although a provider limit already refuses them")

    monkeypatch.setattr("toolgen.build.build_catalogs", no_catalogs)
    result = run("build", str(intent), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "many.yaml:4:1 (#/toolsets): error[catalog-provider-limit]" in result.output
    assert "would hold 14 tools (12 deferred" in result.output and "at most 12" in result.output
    assert "split the API into several intent maps" in result.output and "--emit" in result.output
    assert "nothing was written" in result.output and not (tmp_path / "out").exists()
    assert "Traceback" not in result.output


def test_lint_reports_the_limit_without_building_catalogs(
        tmp_path: Path, small_limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    intent = _write(tmp_path, 6)

    def no_catalogs(*_: Any, **__: Any) -> Any:
        raise AssertionError("lint built catalogs although a provider limit already refuses them")

    monkeypatch.setattr("toolgen.review.lint.linter.build_catalogs", no_catalogs)
    result = run("lint", str(intent))
    assert result.exit_code == 1, result.output
    assert "error[catalog-provider-limit]" in result.output


def test_without_the_anthropic_catalog_the_build_goes_through(tmp_path: Path, small_limit: int) -> None:
    """`--emit` leaving Anthropic out is a way round: no preflight error, no conformance failure."""
    intent = _write(tmp_path, 6)
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "--emit", "openai,mcp,gemini,policy,report")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out" / "anthropic.json").exists()
    assert len(json.loads((tmp_path / "out" / "mcp.json").read_text(encoding="utf-8"))) == 13
    assert "catalog-provider-limit" not in (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")


def test_under_the_limit_anthropic_builds(tmp_path: Path, small_limit: int) -> None:
    intent = _write(tmp_path, 5)  # 10 + 1 + the tool-search tool: 12
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "--emit", "anthropic,policy")
    assert result.exit_code == 0, result.output
    assert len(json.loads((tmp_path / "out" / "anthropic.json").read_text(encoding="utf-8"))) == 12


def test_the_real_limit_is_refused_in_seconds(tmp_path: Path) -> None:
    """10,002 deferred tools (5,001 writes): the error comes after lowering, before the minutes that
    building four catalogs of 10,003 tools would take."""
    intent = _write(tmp_path, 5001)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "toolgen", "build", str(intent), "--out", str(tmp_path / "out")],
                          check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    seconds = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert "error[catalog-provider-limit]" in proc.stderr and "10,004 tools" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()
    assert seconds < 120


def test_turning_the_rule_off_does_not_turn_the_limit_into_an_internal_error(tmp_path: Path, small_limit: int) -> None:
    intent = _write(tmp_path, 6)
    (tmp_path / "toolgen.yaml").write_text(
        "toolgen: 1\napis:\n  - {name: many, intent_map: many.yaml, out: out}\nschema_out: null\n"
        "lint:\n  severity: {catalog-provider-limit: 'off'}\n", encoding="utf-8")
    result = run("build", "--project", str(tmp_path / "toolgen.yaml"))
    assert result.exit_code == 2, result.output
    assert "error[catalog-provider-limit]" in result.output and "internal error" not in result.output
    assert intent.exists() and not (tmp_path / "out").exists()
