"""What the call path and the issued approvals read of the registry they run in: `Host`.

A structural type (`typing.Protocol`) that `toolgen.runtime.serving.registry.Registry` satisfies, so the
call path (`pipeline/`) and `approvals` never import the registry: the registry drives them, they
read its loaded tools, stores, credentials and settings through this view. Attributes are read at
the moment a step needs them, so changing one on a registry changes the next call.
"""

from __future__ import annotations

import random
from typing import Protocol

from ..audit import AuditSink
from ..calls import Actor
from ..clock import Clock
from ..stores import PreviewStore, ReceiptStore
from .caller_credentials import CallerCredentials
from .credentials import CredentialsProvider
from .shaping import CursorCodec
from .toolspec import ToolSpec

__all__ = ["Host"]


class Host(Protocol):
    """The registry as the call path sees it (see `Registry` for what each attribute means)."""

    api: str
    base_url: str
    specs: dict[str, ToolSpec]
    receipts: ReceiptStore
    audit: AuditSink
    credentials: CredentialsProvider
    caller_credentials: CallerCredentials | None
    cursors: CursorCodec
    resend_unknown: bool
    approvals: str
    retry_random: random.Random
    clock: Clock

    def preview_store(self) -> PreviewStore: ...

    def visible_tools(self, actor: Actor, *, deferred: bool = True) -> list[str]: ...
