"""`toolgen.builder.output_files`: what a build writes is atomic and gets the modes the user's umask gives."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.build import REPO, run

from toolgen.builder.output_files import Output, write_outputs


@pytest.fixture(params=[0o022, 0o027, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_folders_and_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    folder = tmp_path / "generated" / "api"
    single = tmp_path / "generated" / "intent-map.schema.json"
    write_outputs(
        [Output(folder, {"policy.json": b"{}", "pkg/__init__.py": b""}), Output(single, {"": b"{}"})]
    )
    assert _mode(folder) == 0o777 & ~umask
    assert _mode(folder / "pkg") == 0o777 & ~umask
    assert _mode(folder / "policy.json") == 0o666 & ~umask
    assert _mode(single) == 0o666 & ~umask
    # a rebuild replaces both, with the same modes and no leftovers
    write_outputs([Output(folder, {"policy.json": b"[]"}), Output(single, {"": b"[]"})])
    assert _mode(folder) == 0o777 & ~umask and _mode(single) == 0o666 & ~umask
    assert sorted(p.name for p in (tmp_path / "generated").iterdir()) == ["api", "intent-map.schema.json"]


def test_build_writes_with_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "gen"
        assert (
            run("build", str(REPO / "intent_maps" / "tickets.yaml"), "--out", str(out), "-q").exit_code == 0
        )
    finally:
        os.umask(old)
    assert _mode(out) == 0o755
    assert {_mode(p) for p in out.rglob("*") if p.is_file()} == {0o644}
