"""toolgen runtime: enforces a generated package's policy table on every tool call.

Public surface: `Registry` (load + call), `Actor`, `Approval`, `CallResult`, `ToolError`, receipt
stores, credential providers, audit sinks and tool search (`ToolIndex`, `Hit`). See docs/runtime.md.
"""

from .audit import AuditEvent, AuditSink, FanoutSink, JsonlAuditSink, MemoryAuditSink
from .call.credentials import CredentialsProvider, EnvCredentials, StaticCredentials
from .errors import ERROR_CODES, ToolError
from .serving.registry import Actor, Approval, CallResult, Registry, canonical_json, fingerprint
from .serving.tool_index import Hit, ToolIndex
from .stores import (
    MemoryPreviewStore,
    MemoryReceiptStore,
    PostgresReceiptStore,
    PreviewStore,
    Receipt,
    ReceiptStore,
    RedisReceiptStore,
    SqliteReceiptStore,
    StoredPreview,
    receipts_from_url,
)

__all__ = [
    "ERROR_CODES",
    "Actor",
    "Approval",
    "AuditEvent",
    "AuditSink",
    "CallResult",
    "CredentialsProvider",
    "EnvCredentials",
    "FanoutSink",
    "Hit",
    "JsonlAuditSink",
    "MemoryAuditSink",
    "MemoryPreviewStore",
    "MemoryReceiptStore",
    "PostgresReceiptStore",
    "PreviewStore",
    "Receipt",
    "ReceiptStore",
    "RedisReceiptStore",
    "Registry",
    "SqliteReceiptStore",
    "StaticCredentials",
    "StoredPreview",
    "ToolError",
    "ToolIndex",
    "canonical_json",
    "fingerprint",
    "receipts_from_url",
]
