"""A worker process for the receipt-store race tests (run by stores/test_receipt_stores.py).

    python receipt_race_worker.py JOB_JSON

JOB_JSON: ``{"mode": "begin" | "call", "receipts": URL_OR_PATH, "worker": ID, "keys": [...], ...}``
(for "call", an optional ``"approval_id"`` presents that one approval for every key).
The worker opens its own store (and, for "call", its own Registry over the tickets API), prints
``ready``, waits for a line on stdin, then works through `keys` as fast as it can and prints one
JSON line: for "begin", the keys whose pending receipt this worker created; for "call", the outcome
per key (``sent``, ``replayed`` or the error code).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.records import call_record
from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.runtime import Approval, Registry, StaticCredentials, receipts_from_url


def main() -> None:
    job = json.loads(sys.argv[1])
    store = receipts_from_url(job["receipts"])
    registry = None
    if job["mode"] == "call":
        registry = Registry.from_dir(
            tickets_dir(),
            base_url=job["base_url"],
            credentials=StaticCredentials({"TICKETS_TOKEN": job["token"]}),
            receipts=store,
            cursor_key=b"k" * 32,
        )
    print("ready", flush=True)
    sys.stdin.readline()
    out: dict[str, str] = {}
    if registry is None:
        for key in job["keys"]:
            if store.begin(job["scope"], key, "sha256:race", job["worker"]) is None:
                out[key] = "created"
        store.close()
    else:
        for key in job["keys"]:
            # one human approval per action: both workers present the same approval for the same key
            # (or, with "approval_id", one approval for every key of both workers)
            approval = Approval(
                job["preview_id"],
                approved_by="race@example.com",
                approval_id=job.get("approval_id") or f"approval-{key}",
            )
            res = call_record(
                registry,
                "record_ticket_followup",
                dict(job["args"], action_id=key),
                actor=WRITER,
                approval=approval,
            )
            if res.ok:
                out[key] = "replayed" if res.replayed else "sent"
            else:
                assert res.error is not None
                out[key] = res.error.code
        registry.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
