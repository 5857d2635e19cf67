"""Shared option handling of `toolgen call` and `toolgen serve`: find a generated package, open the
receipt store, load or create the cursor key.

`resolve_package(API_OR_DIR)`: a folder holding ``policy.json`` + ``mcp.json``, or the name of an
API of the project file (``toolgen.yaml``, read as the build reads it, `toolgen.yaml_text`: its ``out``
folder), or ``generated/<name>``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from ...naming import API_NAME_RE
from ...yaml_text import project_outputs, read_yaml
from ..call.shaping import cursor_key_from_env


class PackageNotFound(Exception):
    """API_OR_DIR names neither a generated package folder nor an API of the project."""


def resolve_package(api_or_dir: str, *, cwd: Path | None = None) -> Path:
    """The folder of a generated package. Raises `PackageNotFound` with a readable message."""
    base = cwd or Path.cwd()
    candidate = Path(api_or_dir)
    if not candidate.is_absolute():
        candidate = base / candidate
    if (candidate / "policy.json").is_file():
        return candidate
    project = base / "toolgen.yaml"
    if project.is_file() and API_NAME_RE.fullmatch(api_or_dir):  # the build lists no other name
        try:  # the build's own reader (YAML 1.2): an API named `no` is the string "no" here too
            out = project_outputs(read_yaml(project.read_text(encoding="utf-8"))).get(api_or_dir)
        except Exception:  # noqa: BLE001 - a broken project file is `toolgen build`'s to report; fall through
            out = None
        if out is not None and (base / out / "policy.json").is_file():
            return base / out
    generated = base / "generated" / api_or_dir
    if (generated / "policy.json").is_file():
        return generated
    raise PackageNotFound(
        f"{api_or_dir!r} is neither a folder with policy.json nor a built API (run `toolgen build` first)."
    )


def cursor_key_for(receipts_path: Path) -> bytes:
    """The HMAC key for cursors: ``TOOLGEN_CURSOR_KEY`` if set, else a random key kept in
    ``<receipts folder>/cursor.key`` (32 bytes, created 0600) so that successive `toolgen call`s,
    and the workers of one ``toolgen serve``, accept each other's cursors. The file is written
    whole under a temporary name and then linked into place (`os.link` fails when the name exists),
    so no process ever reads it half written, and of processes creating it at once all read the
    one that won. Raises `ValueError` naming the file when it holds fewer than 32 bytes (left
    empty by a full disk or by a process killed while writing it) or when others may read
    or write it (group or other permission bits: a file checked out of a repository, whose key anyone
    could know and so forge cursors and approval-round states with): delete it to start afresh
    (cursors and approval rounds in flight are then refused once), and `OSError`."""
    from_env = cursor_key_from_env()
    if from_env is not None:
        return from_env
    key_file = receipts_path.parent / "cursor.key"
    if not key_file.exists():
        key_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = key_file.with_name(f".cursor.key.{secrets.token_hex(8)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
            with contextlib.suppress(FileExistsError):  # another process created it a moment ago: read theirs
                os.link(tmp, key_file)
        finally:
            tmp.unlink(missing_ok=True)
    mode = key_file.stat().st_mode
    if mode & 0o077:
        raise ValueError(
            f"{key_file} is readable or writable by others (mode {mode & 0o777:o}): a cursor key must "
            "be a secret of this service (one checked out of a repository is anyone's); delete it, "
            "and a new key is made with mode 600"
        )
    data = key_file.read_bytes()
    if len(data) < 32:
        raise ValueError(
            f"{key_file} holds {len(data)} bytes, not a 32-byte cursor key (left damaged by a "
            "full disk or a killed process): delete it, and a new key is made"
        )
    return data[:32]


def parse_scopes(value: str | None) -> list[str]:
    """``"a,b"`` → ``["a", "b"]`` (blank entries dropped); ``None`` → ``TOOLGEN_SCOPES`` or none."""
    if value is None:
        value = os.environ.get("TOOLGEN_SCOPES", "")
    return [s.strip() for s in value.split(",") if s.strip()]
