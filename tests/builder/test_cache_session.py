"""A failed build writes nothing to the build cache (`toolgen.builder.cache.CacheSession`): a build
refused at lint, by a bad spec while lowering, by its output folder, or stopped by an exception
while emitting leaves every file of the cache folder as it was; a build that succeeds (with
warnings, or a ``--check`` that finds the folder stale) publishes what it computed, and a build
after a failed one writes the bytes of a build without the cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.builder import test_cache as items
from tests.support.build import run

import toolgen.builder.build
from toolgen.builder import worker as worker_module
from toolgen.builder.build import build_api, build_project
from toolgen.builder.cache import Cache, CacheSession, digest
from toolgen.builder.project import load_project
from toolgen.diagnostics import DiagnosticError

#: the build cache on, in a folder of each test's own (`cache_on`, tests/conftest.py)
pytestmark = pytest.mark.usefixtures("cache_on")


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (staging folders and temporary files included), by relative path."""
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _inputs(work: Path, **changes: Any) -> Path:
    state = items._fresh_state()
    state.update(changes)
    return items._write_inputs(work, state)


def _refused_at_lint(work: Path) -> Path:
    """A delete declared a read: the lint stage refuses the build (after the package, the catalogs
    and every per-tool table were computed)."""
    return _inputs(work, effects=["read", "write", "read", "read"])


def _refused_while_lowering(work: Path) -> Path:
    """A response schema whose `$ref` names no component: the build stops once the operations are
    lowered (``ref-missing``), after the lowered tools were remembered."""
    intent = _inputs(work)
    spec = json.loads((work / "items.json").read_text(encoding="utf-8"))
    content = spec["paths"]["/items/{id}"]["get"]["responses"]["200"]["content"]
    content["application/json"]["schema"] = {"$ref": "#/components/schemas/Missing"}
    (work / "items.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return intent


def _good_after(work: Path, cache: Path) -> None:
    """The good inputs again: the cached build writes the bytes of a build without the cache."""
    intent = _inputs(work)
    assert items._build(intent, work / "cached") == 0
    assert items._build(intent, work / "cold", "--no-cache") == 0
    assert items._tree(work / "cached") == items._tree(work / "cold")
    assert not list(cache.glob(".session-*"))


@pytest.mark.parametrize("warm", [False, True], ids=["empty cache", "after a good build"])
@pytest.mark.parametrize("refusal", [_refused_at_lint, _refused_while_lowering], ids=["lint", "lowering"])
def test_a_refused_build_leaves_the_cache_as_it_was(
    tmp_path: Path, cache_on: Path, warm: bool, refusal: Any
) -> None:
    if warm:  # entries of another state of the inputs are there already
        assert items._build(_inputs(tmp_path, tree="Trees, all of them."), tmp_path / "first") == 0
        assert _tree(cache_on)
    before = _tree(cache_on)
    intent = refusal(tmp_path)
    code = items._build(intent, tmp_path / "out")
    assert code == (1 if refusal is _refused_at_lint else 2)
    assert _tree(cache_on) == before
    assert not (tmp_path / "out").exists()
    _good_after(tmp_path, cache_on)


def test_a_build_refused_by_its_output_folder_leaves_the_cache_as_it_was(
    tmp_path: Path, cache_on: Path
) -> None:
    """The build succeeds in memory, then its output folder holds a file toolgen did not write: the
    command writes nothing (exit 2), neither the folder nor the cache."""
    intent = _inputs(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("not toolgen's\n", encoding="utf-8")
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "-q")
    assert result.exit_code == 2, result.output
    assert "mine.txt" in result.output
    assert _tree(cache_on) == {}
    (tmp_path / "out" / "mine.txt").unlink()
    _good_after(tmp_path, cache_on)


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_build_stopped_while_emitting_leaves_the_cache_as_it_was(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    """No input makes an emit stage raise (every one that did is now a located error), so one is made
    to: POLICY.md's writer, which runs after the catalogs' and the per-tool tables were computed."""
    assert items._build(_inputs(tmp_path, tree="Trees, all of them."), tmp_path / "first") == 0
    before = _tree(cache_on)
    intent = _inputs(tmp_path)

    def broken(*args: object) -> str:
        raise error("emit failed")

    with monkeypatch.context() as patched:
        patched.setattr(toolgen.builder.build, "policy_markdown", broken)
        try:
            code = run("build", str(intent), "--out", str(tmp_path / "out"), "-q").exit_code
        except KeyboardInterrupt:
            code = -1
    # an unexpected exception is exit 3 (`guarded`); Ctrl-C is click's abort (exit 1), or raised
    assert code == (3 if error is RuntimeError else 1) or (code == -1 and error is KeyboardInterrupt)
    assert _tree(cache_on) == before
    _good_after(tmp_path, cache_on)


def test_the_worker_process_pieces_are_published_with_the_build_or_dropped_with_it(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker process formats the package into the build's staging folder: a refused build
    drops its pieces too, and a good one publishes them (kind ``black``)."""
    started: list[object] = []
    start = worker_module.start_worker

    def recorded(*args: Any) -> Any:
        worker = start(*args)
        started.append(worker)
        return worker

    monkeypatch.setattr(toolgen.builder.build, "WORKER_MIN_TOOLS", 1)
    monkeypatch.setattr(toolgen.builder.build, "start_worker", recorded)
    assert items._build(_refused_at_lint(tmp_path), tmp_path / "out") == 1
    if started != [] and started[0] is None:
        pytest.skip("no worker process here (threads alive, or not Linux)")
    assert len(started) == 1
    assert _tree(cache_on) == {}
    assert items._build(_inputs(tmp_path), tmp_path / "out") == 0
    assert any(name.startswith("black/") for name in _tree(cache_on))


def test_a_build_with_warnings_publishes_its_entries(tmp_path: Path, cache_on: Path) -> None:
    intent = _inputs(tmp_path, bad=True)  # a schema keyword of the wrong type: dropped, with a warning
    result = run("build", str(intent), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "warning[" in result.output
    written = _tree(cache_on)
    assert any(name.startswith("manifest/") for name in written)
    assert not [name for name in written if name.startswith(".session-")]
    # the next build finds everything: the manifest answers it
    assert items._build(intent, tmp_path / "out", "--check") == 0


def test_a_check_that_finds_the_folder_stale_keeps_what_it_computed(tmp_path: Path, cache_on: Path) -> None:
    intent = _inputs(tmp_path)
    assert items._build(intent, tmp_path / "out", "--no-cache") == 0
    (tmp_path / "out" / "openai.json").write_bytes(b"[]\n")
    assert _tree(cache_on) == {}
    assert items._build(intent, tmp_path / "out", "--check") == 1
    kinds = {name.split("/")[0] for name in _tree(cache_on)}
    assert {"manifest", "catalog", "json", "intent-tools"} <= kinds
    assert not [k for k in kinds if k.startswith(".session-")]


def test_build_api_given_a_cache_commits_only_a_build_without_errors(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "lib-cache")
    refused = build_api(_refused_at_lint(tmp_path), tmp_path / "out", cache=cache)
    assert refused.errors
    assert _tree(cache.root) == {}
    with pytest.raises(DiagnosticError):
        build_api(_refused_while_lowering(tmp_path), tmp_path / "out", cache=cache)
    assert _tree(cache.root) == {}
    good = build_api(_inputs(tmp_path), tmp_path / "out", cache=cache)
    assert not good.errors and _tree(cache.root)
    assert not list(cache.root.glob(".session-*"))


def test_build_project_commits_nothing_when_one_api_fails(tmp_path: Path) -> None:
    """One session for the whole project: a good API's entries are dropped with a refused one's."""
    good, bad = items._fresh_state(), items._fresh_state()
    bad["effects"] = ["read", "write", "read", "read"]
    items._write_project(tmp_path, {"good": good, "bad": bad})
    cache = Cache(tmp_path / "lib-cache")
    _, builds = build_project(load_project(tmp_path / "toolgen.yaml"), cache=cache)
    assert [b.name for b in builds if b.errors] == ["bad"]
    assert _tree(cache.root) == {}


def test_a_session_reads_what_it_staged_and_publishes_it_on_commit(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    cache.put("x", digest("old"), b"old")
    session = cache.session()
    assert isinstance(session, CacheSession) and session.session() is session
    session.put("x", digest("new"), b"new")
    assert session.get("x", digest("new")) == b"new"
    assert session.get("x", digest("old")) == b"old"
    assert cache.get("x", digest("new")) is None  # not in the cache before the commit
    assert session.commit() == 1
    assert cache.get("x", digest("new")) == b"new"
    assert not list(cache.root.glob(".session-*"))
    dropped = cache.session()
    dropped.put("x", digest("dropped"), b"dropped")
    dropped.close()
    assert cache.get("x", digest("dropped")) is None
    assert dropped.commit() == 0  # closed: nothing left to publish
    assert sorted(_tree(cache.root)) == [
        ".gitignore",
        *sorted(f"x/{k[:2]}/{k}" for k in (digest("old"), digest("new"))),
    ]


def test_a_new_session_removes_the_staging_folders_of_builds_killed_a_day_ago(tmp_path: Path) -> None:
    """A build killed outright leaves its staging folder; the next session removes it once it is older
    than `STALE_SESSION_SECONDS`, and leaves a running build's (fresh) one and the cache's entries."""
    import os
    import time

    from toolgen.builder.cache import STALE_SESSION_SECONDS

    cache = Cache(tmp_path / "c")
    cache.put("x", digest("kept"), b"kept")
    killed, running = cache.session(), cache.session()
    killed.put("x", digest("a"), b"a")
    running.put("x", digest("b"), b"b")
    old = time.time() - STALE_SESSION_SECONDS - 60
    os.utime(killed.staging, (old, old))
    cache.session().close()
    assert not killed.staging.exists()
    assert running.get("x", digest("b")) == b"b" and running.commit() == 1
    assert cache.get("x", digest("kept")) == b"kept" and cache.get("x", digest("b")) == b"b"
    assert cache.get("x", digest("a")) is None
