"""Every file toolgen writes reaches the disk before the rename that commits it (`toolgen.durable`):
`write_outputs` flushes each staged file and each staged folder before any rename and each
destination's parent after the renames; toolgen.yaml (`add_api`) is flushed before it replaces the
old file; and `toolgen build` records the build cache's manifest only after all of that, so a crash
never leaves a committed file of zero length, nor a manifest naming files that are not on disk.

A crash cannot be staged in a test, so the real system calls are watched (each `os.fsync`,
`os.replace` and cache write is recorded, then done): the order they run in is the guarantee."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REPO, run

from toolgen.builder.cache import Cache
from toolgen.builder.output_files import Output, write_outputs
from toolgen.builder.project import add_api


class Calls:
    """The `os.fsync` and `os.replace` calls made while it is installed, in order, each fsync as the
    (device, inode) it flushed and whether that is a folder; and each build cache write."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, Any]] = []
        fsync, replace, put = os.fsync, os.replace, Cache.put

        def watched_fsync(fd: int) -> None:
            info = os.fstat(fd)
            self.log.append(("fsync", ((info.st_dev, info.st_ino), stat.S_ISDIR(info.st_mode))))
            fsync(fd)

        def watched_replace(src: Any, dst: Any, **kw: Any) -> None:
            self.log.append(("replace", (Path(src), Path(dst))))
            replace(src, dst, **kw)

        def watched_put(cache: Cache, kind: str, key: str, payload: bytes) -> None:
            self.log.append(("put", kind))
            put(cache, kind, key, payload)

        monkeypatch.setattr(os, "fsync", watched_fsync)
        monkeypatch.setattr(os, "replace", watched_replace)
        monkeypatch.setattr(Cache, "put", watched_put)

    def index(self, kind: str, value: Any) -> int:
        return self._all(kind, value)[0]

    def last(self, kind: str, value: Any) -> int:
        return self._all(kind, value)[-1]

    def _all(self, kind: str, value: Any) -> list[int]:
        found = [i for i, (k, v) in enumerate(self.log) if k == kind and v == value]
        assert found, f"no {kind} of {value}"
        return found

    def renames_into(self, path: Path) -> list[int]:
        return [i for i, (k, v) in enumerate(self.log) if k == "replace" and v[1] == path]


def ident(path: Path) -> tuple[tuple[int, int], bool]:
    info = path.stat()
    return (info.st_dev, info.st_ino), stat.S_ISDIR(info.st_mode)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calls]:
    yield Calls(monkeypatch)


def check_outputs_durable(calls: Calls, folders: list[Path], single: list[Path]) -> None:
    """Each file and folder of `folders` and each file of `single` was flushed before the first
    rename into any destination, and each destination's parent after the last one."""
    first_commit = min(i for p in [*folders, *single] for i in calls.renames_into(p))
    last_commit = max(i for p in [*folders, *single] for i in calls.renames_into(p))
    everything = [*single, *folders, *(q for f in folders for q in f.rglob("*"))]
    for path in everything:
        assert calls.index("fsync", ident(path)) < first_commit, f"{path} not flushed before it was committed"
    for parent in {p.parent for p in [*folders, *single]}:
        assert calls.last("fsync", ident(parent)) > last_commit, f"{parent} not flushed after the renames"


def test_write_outputs_flushes_every_file_and_folder_before_committing(tmp_path: Path, calls: Calls) -> None:
    folder, single = tmp_path / "generated" / "api", tmp_path / "generated" / "intent-map.schema.json"
    files = {"policy.json": b"{}", "pkg/__init__.py": b"", "pkg/sub/models.py": b"x = 1\n", "REPORT.md": b""}
    for _ in range(2):  # a first build, then a rebuild that swaps the folder
        calls.log.clear()
        write_outputs([Output(folder, files), Output(single, {"": b"{}"})])
        check_outputs_durable(calls, [folder], [single])


def test_toolgen_yaml_is_flushed_before_it_replaces_the_old_one(tmp_path: Path, calls: Calls) -> None:
    project = tmp_path / "toolgen.yaml"
    assert add_api(project, "a", "intent_maps/a.yaml", "generated/a") == "created"
    assert add_api(project, "b", "intent_maps/b.yaml", "generated/b") == "added"
    commits = calls.renames_into(project)
    assert len(commits) == 2
    flushed = calls.index("fsync", ident(project))  # the second file, as it is now
    assert flushed < commits[1] and calls.last("fsync", ident(tmp_path)) > commits[1]
    assert not [p for p in tmp_path.iterdir() if p.name != "toolgen.yaml"]  # no temporary file left


def test_the_manifest_is_recorded_after_the_files_are_durable(
    tmp_path: Path, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    out = tmp_path / "gen"
    assert run("build", str(REPO / "intent_maps" / "tickets.yaml"), "--out", str(out), "-q").exit_code == 0
    check_outputs_durable(calls, [out], [])
    cache = tmp_path / "cache" / "manifest"  # where a build's manifest is published (a rename)
    manifest = min(i for i, (k, v) in enumerate(calls.log) if k == "replace" and cache in v[1].parents)
    assert manifest > calls.last("fsync", ident(tmp_path)), (
        "the manifest was recorded before the files were durable"
    )
    # and it answers the next --check at once, recording nothing
    calls.log.clear()
    assert (
        run("build", str(REPO / "intent_maps" / "tickets.yaml"), "--out", str(out), "--check", "-q").exit_code
        == 0
    )
    assert ("put", "manifest") not in calls.log
