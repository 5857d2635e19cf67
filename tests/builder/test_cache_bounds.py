"""A build-cache entry is measured before it is read: a planted entry of 1 GiB (a sparse file, so
it costs no disk) is a miss without its payload ever being read into memory, whether its header
states another length or claims the whole gigabyte."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

import pytest

from toolgen.builder.cache import MAX_ENTRY_BYTES, Cache, digest

GIB = 1 << 30


def _plant(cache: Cache, key: str, stated: int, size: int) -> Path:
    path = cache.root / "catalog" / key[:2] / key
    path.parent.mkdir(parents=True)
    header = b"toolgen-cache 2 " + b"0" * 64 + f" {stated}\n".encode("ascii")
    with open(path, "wb") as fh:
        fh.write(header)
    os.truncate(path, len(header) + size)  # sparse: no block is written
    return path


@pytest.mark.parametrize("stated", [10, GIB], ids=["states-10-bytes", "states-1-GiB"])
def test_a_planted_gigabyte_entry_is_a_miss_without_being_read(tmp_path: Path, stated: int) -> None:
    cache = Cache(tmp_path / "c")
    key = digest("planted")
    _plant(cache, key, stated, GIB)
    tracemalloc.start()
    started = time.process_time()
    try:
        assert cache.get("catalog", key) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated"
    assert time.process_time() - started < 0.5


def test_an_entry_over_the_bound_is_a_miss_and_one_under_it_is_read(tmp_path: Path) -> None:
    assert 64 << 20 <= MAX_ENTRY_BYTES < GIB
    cache = Cache(tmp_path / "c")
    key = digest("kept")
    cache.put("x", key, b"a payload")
    assert cache.get("x", key) == b"a payload"
    path = cache.root / "x" / key[:2] / key
    with open(path, "ab") as fh:  # one byte more than its header states: damaged, a miss
        fh.write(b"!")
    assert cache.get("x", key) is None
