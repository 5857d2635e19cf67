"""One reader for toolgen.yaml: the build, lint and the runtime's lookup of an API by name read it
the same way (YAML 1.2), so an API the build lists is the API `toolgen call NAME` finds, and a value
the build refuses is found by nobody. YAML 1.1 read ``no``/``on`` as booleans and ``0x10`` as 16."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolgen.builder.project import load_project
from toolgen.cli import main
from toolgen.diagnostics import DiagnosticError
from toolgen.runtime.serving.loading import PackageNotFound, resolve_package

ROOT = Path(__file__).resolve().parents[2]
VALUES = ["no", "on", "off", "yes", "1.0", "0x10", "null", "~", "0o17", "1_000", "2001-12-14"]


def _project(tmp_path: Path, name: str, out: str) -> Path:
    shutil.copytree(ROOT / "generated" / "tickets", tmp_path / "pkgs" / "built")
    if not out.startswith("pkgs/"):
        shutil.copytree(ROOT / "generated" / "tickets", tmp_path / out, dirs_exist_ok=True)
    (tmp_path / "toolgen.yaml").write_text(
        f"toolgen: 1\napis:\n  - name: {name}\n    intent_map: intent_maps/tickets.yaml\n    out: {out}\n",
        encoding="utf-8",
    )
    return tmp_path / "toolgen.yaml"


def _built(project_file: Path) -> dict[str, Path] | None:
    """API name -> out folder as the build reads the project file; None when it refuses it."""
    try:
        return {t.name: t.out for t in load_project(project_file).targets}
    except DiagnosticError:
        return None


def _found(tmp_path: Path, name: str) -> Path | None:
    try:
        return resolve_package(name, cwd=tmp_path).resolve()
    except PackageNotFound:
        return None


@pytest.mark.parametrize("name", VALUES)
def test_an_api_name_is_read_alike_by_the_build_and_the_runtime(tmp_path: Path, name: str) -> None:
    built = _built(_project(tmp_path, name, "pkgs/built"))
    found = _found(tmp_path, name)
    if built is None or name not in built:
        assert found is None, (name, found)
    else:
        assert found == built[name].resolve() == (tmp_path / "pkgs" / "built").resolve(), (name, built, found)
    if name in ("no", "on"):
        assert built is not None and found is not None  # the names of this issue: both find the API


@pytest.mark.parametrize("out", VALUES)
def test_an_out_folder_is_read_alike_by_the_build_and_the_runtime(tmp_path: Path, out: str) -> None:
    built = _built(_project(tmp_path, "tickets", out))
    found = _found(tmp_path, "tickets")
    if built is None:
        assert found is None, (out, found)
    else:
        assert found == built["tickets"].resolve(), (out, built, found)


def test_toolgen_call_finds_an_api_named_no(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, "no", "pkgs/built")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TICKETS_TOKEN", "a-token-long-enough")
    done = CliRunner().invoke(
        main,
        [
            "call",
            "no",
            "get_ticket",
            "--args",
            '{"ticket_id": "T-1"}',
            "--receipts",
            "memory://",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--scopes",
            "ticket:read",
        ],
    )
    assert done.exit_code == 1, done.output  # found and called: the API does not answer (exit 1), not exit 2
    assert "upstream_unavailable" in done.output
