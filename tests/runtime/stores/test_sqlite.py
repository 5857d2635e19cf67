"""A SQLite receipt file of a layout this toolgen does not write is refused when the store opens, with
an error naming the file and the table and saying to start afresh: never read with defaults, never
converted (a spent approval kept as a receipt would otherwise not count as spent)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from toolgen.runtime.stores import LayoutError, SqlitePreviewStore, SqliteReceiptStore, StoredPreview

#: a table of each kind as a file of another layout holds it
_OTHER = {
    "receipts": (
        "CREATE TABLE receipts (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,"
        " state TEXT NOT NULL, actor TEXT NOT NULL, result TEXT, status INTEGER, created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL, PRIMARY KEY (scope, key))"
    ),
    "previews": (
        "CREATE TABLE previews (scope TEXT NOT NULL, actor TEXT NOT NULL, preview_id TEXT NOT NULL,"
        " intent TEXT NOT NULL, arguments TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL,"
        " keep_until REAL NOT NULL, PRIMARY KEY (scope, actor, preview_id))"
    ),
    "preview_totals": "CREATE TABLE preview_totals (scope TEXT, actor TEXT, count INTEGER)",
    "spends": "CREATE TABLE spends (scope TEXT, digest TEXT, action TEXT)",
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("table", sorted(_OTHER))
def test_a_table_of_another_layout_is_refused_and_left_as_it_is(tmp_path: Path, table: str) -> None:
    path = tmp_path / "receipts.sqlite3"
    with sqlite3.connect(str(path)) as conn:
        conn.execute(_OTHER[table])
    conn.close()
    before = _digest(path)
    with pytest.raises(LayoutError) as refused:
        store = SqliteReceiptStore(path)
        store.previews()  # the previews table is checked when the preview store opens on the file
    message = str(refused.value)
    assert str(path) in message and table in message and "start afresh" in message, message
    assert _digest(path) == before  # not converted


def test_a_spent_approval_kept_as_a_receipt_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    SqliteReceiptStore(path).close()
    with sqlite3.connect(str(path)) as conn:
        conn.execute(
            "INSERT INTO receipts (scope, key, fingerprint, state, actor, result, status, created_at,"
            " updated_at, lease_ms) VALUES ('tickets/record_x#approval', 'raw-id', 'action:k1', 'completed',"
            " 'w', '{}', 0, 1, 1, 0)"
        )
    conn.close()
    with pytest.raises(LayoutError, match=r"spent approvals .* would not count as spent"):
        SqliteReceiptStore(path)


def test_a_file_this_toolgen_wrote_opens_again(tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    store = SqliteReceiptStore(path)
    store.begin("t/r", "k1", "sha256:f", "a", 1000)
    store.complete("t/r", "k1", {"ok": True}, 200)
    previews = store.previews()
    assert isinstance(previews, SqlitePreviewStore)
    previews.put(StoredPreview("t/r", "a", "sha256:p", "i", {"x": 1}, 1.0, 9e9))
    store.close()
    again = SqliteReceiptStore(path)
    receipt = again.get("t/r", "k1")
    assert receipt is not None and receipt.state == "completed"
    assert again.previews().get("t/r", "a", "sha256:p") is not None
    again.close()
