"""A cache folder someone else made (committed in a pull request, `.toolgen/cache/` is only
git-ignored, not unaddable) never makes a build write outside it: a symbolic link in the cache
folder, to a file or a folder elsewhere, is not followed when the cache writes (`toolgen.builder.cache`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgen.builder.cache import Cache


@pytest.fixture(autouse=True)
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolgen.builder import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.delenv("TOOLGEN_CACHE_DIR", raising=False)
    cache.mac_key.cache_clear()


def _outside(tmp_path: Path) -> list[str]:
    return sorted(p.relative_to(tmp_path / "outside").as_posix() for p in (tmp_path / "outside").rglob("*"))


def test_a_planted_gitignore_link_is_not_written_through(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    root = tmp_path / "repo" / ".toolgen" / "cache"
    root.mkdir(parents=True)
    (root / ".gitignore").symlink_to(tmp_path / "outside" / "planted-by-a-link")  # dangling: created on write
    Cache(root).put("models", "ab" * 32, b"payload")
    assert _outside(tmp_path) == []
    assert Cache(root).get("models", "ab" * 32) is None or _outside(tmp_path) == []


@pytest.mark.parametrize("level", ["dot-toolgen", "root", "kind", "prefix"])
def test_a_planted_folder_link_is_not_written_through(tmp_path: Path, level: str) -> None:
    (tmp_path / "outside").mkdir()
    repo = tmp_path / "repo"
    root = repo / ".toolgen" / "cache"
    key = "cd" * 32
    link = {
        "dot-toolgen": repo / ".toolgen",
        "root": root,
        "kind": root / "models",
        "prefix": root / "models" / key[:2],
    }[level]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(tmp_path / "outside", target_is_directory=True)
    cache = Cache.for_project(repo)
    if cache is not None:
        cache.put("models", key, b"payload")
    assert _outside(tmp_path) == []


def test_an_ordinary_folder_still_caches(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    Cache(root).put("models", "ef" * 32, b"payload")
    assert Cache(root).get("models", "ef" * 32) == b"payload"
    assert (root / ".gitignore").read_text(encoding="utf-8").endswith("*\n")


def test_a_planted_entry_link_to_a_pipe_is_not_read(tmp_path: Path) -> None:
    """An entry is read only when it is a regular file at its own path: a link committed where an entry
    goes (its key is a digest anyone with toolgen's version can compute) to a named pipe or a device
    such as ``/dev/zero`` would otherwise block the build forever or read until memory runs out."""
    import os
    import threading

    fifo = tmp_path / "outside" / "pipe"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    root = tmp_path / "repo" / ".toolgen" / "cache"
    key = "cd" * 32
    (root / "spec" / key[:2]).mkdir(parents=True)
    (root / "spec" / key[:2] / key).symlink_to(fifo)
    found: list[bytes | None] = []
    reader = threading.Thread(target=lambda: found.append(Cache(root).get("spec", key)), daemon=True)
    reader.start()
    reader.join(5)
    blocked = reader.is_alive()
    if blocked:  # release the blocked reader before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert not blocked and found == [None]


def test_a_key_file_others_can_read_turns_the_cache_off(tmp_path: Path) -> None:
    """The cache's secret is what makes a planted entry (a pickle) a miss: one readable or writable by
    group or others (copied with lax modes, a shared home) is no secret, so the cache is off, as it is
    without a key, rather than unpickling what anyone who read the key could sign."""
    from toolgen.builder import cache

    assert cache.mac_key() is not None  # created, mode 600
    key = cache.key_file()
    assert key.stat().st_mode & 0o077 == 0
    key.chmod(0o644)
    cache.mac_key.cache_clear()
    assert cache.mac_key() is None and not cache.enabled_by_environment()
    key.chmod(0o600)
    cache.mac_key.cache_clear()
    assert cache.mac_key() is not None
