"""The drivers of the sans-IO call path: they perform the effects it yields (`pipeline.effects`).

`drive_sync` (threads, `Registry.call`) and `drive_async` (asyncio, `Registry.acall`) run a call
path generator to its end: a `Send` goes to the given send function (which never raises: it turns
whatever the HTTP client throws into an `Outcome`), a `Sleep` waits, and a `Gather` drives each of
its branches the same way, at once (sync: one thread per branch; async: `asyncio.gather`), and
sends back their return values in order. Input: the generator and the send function. Output: the
generator's return value. A `BaseException` (cancellation, KeyboardInterrupt) closes the generator
— and every branch of a `Gather` in progress — so each settles the receipt it holds, then goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..pipeline.effects import Gather, Outcome, Send, Sleep

__all__ = ["drive_async", "drive_sync"]

Driven = Generator[Any, Any, Any]


def drive_sync(gen: Driven, send: Callable[[Send], Outcome]) -> Any:
    """Run `gen` to its end, performing its effects synchronously; its return value."""
    try:
        effect = next(gen)
        while True:
            if isinstance(effect, Sleep):
                time.sleep(effect.seconds)
                effect = gen.send(None)
            elif isinstance(effect, Gather):
                effect = gen.send(_gather_sync(effect, send))
            else:
                effect = gen.send(send(effect))
    except StopIteration as stop:
        return stop.value
    except BaseException:
        gen.close()
        raise


def _gather_sync(gather: Gather, send: Callable[[Send], Outcome]) -> list[Any]:
    """The branches' return values, each branch driven in a thread of its own."""
    if not gather.branches:
        return []
    with ThreadPoolExecutor(max_workers=len(gather.branches), thread_name_prefix="toolgen-gather") as pool:
        futures = [pool.submit(drive_sync, branch, send) for branch in gather.branches]
        return [f.result() for f in futures]


async def drive_async(gen: Driven, send: Callable[[Send], Awaitable[Outcome]]) -> Any:
    """Run `gen` to its end, performing its effects with asyncio; its return value."""
    try:
        effect = next(gen)
        while True:
            if isinstance(effect, Sleep):
                await asyncio.sleep(effect.seconds)
                effect = gen.send(None)
            elif isinstance(effect, Gather):
                results = await asyncio.gather(*(drive_async(b, send) for b in effect.branches))
                effect = gen.send(list(results))
            else:
                effect = gen.send(await send(effect))
    except StopIteration as stop:
        return stop.value
    except BaseException:
        gen.close()
        raise
