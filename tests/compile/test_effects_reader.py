"""The effects benchmark's second reading (`benchmarks/effects.py`, `text_says`): an act named in the
path or the text of an operation, whatever its operationId's verb, and not the ordinary reads next
to it. Written apart from `toolgen.compile.verbs`, so that it can flag what init drafts as a read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.benchmarks import benchmark_module

from toolgen.compile.operations import Operation

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
effects = benchmark_module("effects")


def _op(path: str, operation_id: str | None = None, **node: Any) -> Operation:
    body = dict(node, **({"operationId": operation_id} if operation_id else {}))
    return Operation("GET", path, operation_id, "/paths/x/get", body, {}, "/paths/x")


@pytest.mark.parametrize(
    ("op", "flagged"),
    [
        (
            _op("/api/v1/namespaces/{namespace}/pods/{name}/exec", "connect_core_v1_get_namespaced_pod_exec"),
            True,
        ),
        (_op("/access-tokens/{accessTokens}/invalidate"), True),
        (_op("/users/resendWelcomeSms"), True),
        (_op("/x", "getX", summary="Get x", description="This endpoint sends an SMS to the user."), True),
        (_op("/x", "getX", **{"x-kubernetes-action": "connect"}), True),
        (_op("/x", "getX", **{"x-ms-docs-operation-type": "action"}), True),
        (_op("/logout"), True),
        # ordinary reads
        (_op("/messages/{id}/resend-status", "getResendStatus", summary="Get the resend status"), False),
        (_op("/functions/{id}/triggers", "listTriggers", summary="List triggers"), False),
        (_op("/settings/stop-words", "getStopWords"), False),
        (_op("/x", "getX", description="Enables an authenticated app to find the installation."), False),
        (_op("/x", "getX", description="Get x --- This route expires daily at 11:05"), False),
        (_op("/x", "getX", description="This endpoint does not send anything."), False),
        (_op("/x", "getX", **{"x-ms-docs-operation-type": "function"}), False),
    ],
)
def test_text_reader(op: Operation, flagged: bool) -> None:
    assert (effects.text_says(op) is not None) == flagged, effects.text_says(op)
