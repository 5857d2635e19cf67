"""The clock seam: the runtime reads the time from `toolgen.runtime.clock` alone, and a lifetime runs
out when the clock is moved, with no sleep.

The syntax-tree test walks every runtime module: a read of the system clock (``time.time()``,
``time.monotonic()``, ``datetime.now()``, an event loop's ``time()``...) anywhere but in the clock
module is a failure, unless the allow-list below names that module and that call, with the reason
it must wait for real time (a socket, a sleep the call path asked for, a process supervisor's poll).
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import toolgen.runtime
from toolgen.runtime.clock import SYSTEM, Clock, ManualClock

RUNTIME = Path(toolgen.runtime.__file__).parent

#: functions that read or wait on the system clock, by the module they come from
CLOCK_READS = {
    "time": {
        "time",
        "time_ns",
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "sleep",
        "localtime",
        "gmtime",
        "ctime",
        "asctime",
        "strftime",
    },
    "datetime": {"now", "utcnow", "today", "fromtimestamp"},
    "asyncio": {"sleep"},
    "anyio": {"sleep", "sleep_until", "current_time"},
}

#: (module, call) -> why it waits on or measures real time rather than the clock seam
ALLOWED = {
    ("http_client.py", "time.perf_counter"): "measures a real exchange on a socket (its elapsed_ms, and a "
    "body still trickling in past the attempt's duration, which the "
    "call path computed on the clock)",
    (
        "deadline.py",
        "time.monotonic",
    ): "bounds each real socket operation of one attempt by what is left of it",
    ("drivers.py", "time.sleep"): "the wait between retries the call path asked for (a Sleep effect)",
    ("drivers.py", "asyncio.sleep"): "the wait between retries the call path asked for (a Sleep effect)",
    ("workers.py", "time.sleep"): "the process supervisor's poll for a worker that died",
    ("mcp_http.py", "anyio.sleep"): "the server's poll while it waits for its connections to close",
}


def _clock_reads(tree: ast.AST) -> list[str]:
    """Every ``module.function`` of `CLOCK_READS` the module's code names (as ``time.time``, as
    ``datetime.datetime.now`` or through ``from time import monotonic``), whatever it is imported as."""
    aliases: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                root = name.name.split(".")[0]
                if root in CLOCK_READS:
                    aliases[(name.asname or name.name).split(".")[0]] = root
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module is not None
            and node.module.split(".")[0] in CLOCK_READS
        ):
            root = node.module.split(".")[0]
            for name in node.names:
                if name.name in CLOCK_READS[root]:
                    found.append(f"{root}.{name.name}")
                elif name.name in ("datetime", "date"):
                    aliases[name.asname or name.name] = "datetime"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if (
                isinstance(base, ast.Name)
                and base.id in aliases
                and node.attr in CLOCK_READS[aliases[base.id]]
            ):
                found.append(f"{aliases[base.id]}.{node.attr}")
            elif (
                node.attr == "time" and isinstance(node.value, ast.Call) and "loop" in ast.unparse(node.value)
            ):
                found.append("loop.time")
    return found


def _runtime_reads() -> dict[str, list[str]]:
    """Every runtime module but the clock's (path relative to the package) and its clock reads,
    found by `_clock_reads` in a fresh interpreter that imports nothing else: CPython 3.11.7 can
    refuse `ast.parse` ("AST constructor recursion depth mismatch", fixed in 3.11.8) in a process
    where earlier tests ran."""
    script = "\n".join(
        [
            "import ast, json, sys",
            "from pathlib import Path",
            f"CLOCK_READS = { ({k: sorted(v) for k, v in CLOCK_READS.items()})!r}",
            inspect.getsource(_clock_reads),
            "root = Path(sys.argv[1])",
            (
                "print(json.dumps({p.relative_to(root).as_posix(): _clock_reads(ast.parse(p.read_text(encoding='utf-8')))"
                " for p in sorted(root.rglob('*.py')) if p.relative_to(root).as_posix() != 'clock.py'}))"
            ),
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(RUNTIME)], capture_output=True, text=True, timeout=120, check=True
    )
    reads: dict[str, list[str]] = json.loads(done.stdout)
    return reads


def test_no_runtime_module_but_the_clock_reads_the_time() -> None:
    offending = sorted(
        {
            f"{module}: {read}"
            for module, reads in _runtime_reads().items()
            for read in reads
            if (Path(module).name, read) not in ALLOWED
        }
    )
    assert not offending, (
        "read the time from toolgen.runtime.clock (host.clock, a store's clock):\n" + "\n".join(offending)
    )


def test_the_allow_list_holds_only_calls_still_made() -> None:
    made = {(Path(module).name, read) for module, reads in _runtime_reads().items() for read in reads}
    assert set(ALLOWED) <= made, sorted(set(ALLOWED) - made)


def test_the_walk_finds_every_spelling() -> None:
    code = (
        "import time\nimport time as t\nfrom time import monotonic\nimport datetime as dt\n"
        "from datetime import datetime\nimport asyncio\n"
        "time.time(); t.perf_counter(); dt.datetime.now(); datetime.utcnow(); asyncio.get_running_loop().time()\n"
    )
    assert sorted(_clock_reads(ast.parse(code))) == sorted(
        ["time.monotonic", "time.time", "time.perf_counter", "datetime.now", "datetime.utcnow", "loop.time"]
    )


def test_a_manual_clock_moves_both_readings_forward_only() -> None:
    clock = ManualClock()
    wall, mono = clock.time(), clock.monotonic()
    clock.advance(3600)
    assert clock.time() - wall >= 3600 and clock.monotonic() - mono >= 3600
    assert abs(clock.time() - SYSTEM.time() - 3600) < 5
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="forward"):
            clock.advance(bad)
    assert isinstance(clock, Clock)


def test_a_registry_reads_its_stores_clock_and_refuses_another(tmp_path: Path) -> None:
    from tests.support.runtime_env import load_package

    from toolgen.runtime import MemoryReceiptStore, Registry, receipts_from_url

    policy, catalog = load_package("tickets")
    clock = ManualClock()
    for store in (
        MemoryReceiptStore(clock=clock),
        receipts_from_url(str(tmp_path / "r.sqlite3"), clock=clock),
        receipts_from_url("memory://", clock=clock),
    ):
        reg = Registry(policy, list(catalog), receipts=store, cursor_key=b"k" * 32)
        assert reg.clock is clock and getattr(reg.preview_store(), "clock", None) is clock
        reg.close()
    with pytest.raises(ValueError, match="clock"):
        Registry(policy, list(catalog), receipts=MemoryReceiptStore(), clock=clock, cursor_key=b"k" * 32)
    alone = Registry(
        policy, list(catalog), clock=clock, cursor_key=b"k" * 32
    )  # its own stores take its clock
    assert (
        getattr(alone.receipts, "clock", None) is clock
        and getattr(alone.preview_store(), "clock", None) is clock
    )
    assert Registry(policy, list(catalog), cursor_key=b"k" * 32).clock is SYSTEM
