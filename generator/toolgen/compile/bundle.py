"""Bundling external `$ref`s into one document, when the intent map allows it.

By default a `$ref` to another file is refused (`ref-external`): a spec should be one reviewable
document. With `allow_external_refs: true` in the intent map, `bundle_external_refs` copies every
referenced value from sibling files (JSON or YAML, relative to the file that holds the `$ref`,
transitively; in the root spec's folder or below it) into the document under `components/x-toolgen-external/<name>` and rewrites the
references to local ones, before any other stage runs. URLs are never fetched (toolgen does no
network I/O at build time); a `$ref` to `http(s)://` stays an error that says to bundle first.

Input: the document's path and data. Output: new data (the input is not changed). Errors:
`DiagnosticError` with code `ref-external` (URL), `ref-outside` (a file outside the root spec's
folder, reached by ``..``, an absolute path or a symbolic link: a spec is untrusted input and may
not copy other files of the build machine into the catalogs), `ref-missing` (file or pointer not
found).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..diagnostics import DiagnosticError, SourceLocation, display_path
from ..naming import stable_suffix
from ..pointer import POINTER_HINT, PointerError, PointerSyntaxError, escape_token, resolve_pointer
from .load import read_structured

STORE = "x-toolgen-external"


def bundle_external_refs(path: Path, data: dict[str, Any], base: Path | None = None) -> dict[str, Any]:
    """`data` with every external file `$ref` replaced by a local one (see module docstring)."""
    data = copy.deepcopy(data)
    files: dict[Path, Any] = {path.resolve(): data}
    root = path.resolve().parent  # links resolved: a link inside the folder to a file outside is outside
    store: dict[str, Any] = {}
    names: dict[tuple[Path, str], str] = {}
    # (node holding the data, file it came from, pointer for messages)
    todo: list[tuple[Any, Path, str]] = [(data, path.resolve(), "")]
    while todo:
        node, owner, where = todo.pop()
        for holder, ref, at in _refs(node, where):
            file_part, _, fragment = ref.partition("#")
            if not file_part:
                if owner == path.resolve():
                    continue  # a local ref of the main document
                file_part = owner.name  # a local ref inside an external file: same file
            if re.match(r"^[a-z][a-z0-9+.-]*://", file_part, re.IGNORECASE):
                raise DiagnosticError.one(
                    "ref-external",
                    f"$ref {ref!r} points at a URL; toolgen does not fetch URLs",
                    SourceLocation(display_path(owner, base), None, None, at + "/$ref"),
                    "bundle the spec into one file first (e.g. `redocly bundle`), then point toolgen at it",
                )
            target_file = (owner.parent / unquote(file_part)).resolve()
            if not target_file.is_relative_to(root):
                raise DiagnosticError.one(
                    "ref-outside",
                    f"$ref {ref!r} reaches a file outside the spec's folder "
                    f"({display_path(root, base)}); only the spec's sibling files and their subfolders are bundled",
                    SourceLocation(display_path(owner, base), None, None, at + "/$ref"),
                    "move the referenced file into the spec's folder (a spec may not read other files of the "
                    "machine that builds it)",
                )
            key = (target_file, fragment)
            if key not in names:
                if target_file not in files:
                    if not target_file.is_file():
                        raise DiagnosticError.one(
                            "ref-missing",
                            f"$ref {ref!r}: file {display_path(target_file, base)} not found",
                            SourceLocation(display_path(owner, base), None, None, at + "/$ref"),
                            "fix the path (relative to the file that holds the $ref)",
                        )
                    _, loaded, _ = read_structured(target_file, display_path(target_file, base))
                    files[target_file] = loaded
                pointer = unquote(fragment)
                try:
                    value = resolve_pointer(files[target_file], pointer)
                except PointerError as exc:
                    raise DiagnosticError.one(
                        "ref-invalid" if isinstance(exc, PointerSyntaxError) else "ref-missing",
                        f"$ref {ref!r}: {exc}",
                        SourceLocation(display_path(owner, base), None, None, at + "/$ref"),
                        POINTER_HINT
                        if isinstance(exc, PointerSyntaxError)
                        else "point the $ref at an existing value",
                    ) from None
                stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{target_file.stem}_{pointer.rsplit('/', 1)[-1]}")
                name = f"{stem}_{stable_suffix(str(target_file.name) + '#' + pointer, 6)}"
                names[key] = name
                copied = copy.deepcopy(value)
                store[name] = copied
                todo.append((copied, target_file, f"/components/{STORE}/{escape_token(name)}"))
            holder["$ref"] = f"#/components/{STORE}/{escape_token(names[key])}"
    if store:
        components = data.setdefault("components", {})
        components[STORE] = {k: store[k] for k in sorted(store)}
    return data


def _refs(node: Any, where: str) -> list[tuple[dict[str, Any], str, str]]:
    """Every (object holding a string `$ref`, the ref, its pointer) under `node`."""
    out: list[tuple[dict[str, Any], str, str]] = []
    stack: list[tuple[Any, str]] = [(node, where)]
    while stack:
        cur, at = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                out.append((cur, ref, at))
            elif isinstance(ref, str) and ref.startswith("#") and at.startswith(f"/components/{STORE}/"):
                out.append((cur, ref, at))  # local to an external file: rewritten relative to that file
            for k, v in cur.items():
                if k != "$ref":
                    stack.append((v, f"{at}/{escape_token(str(k))}"))
        elif isinstance(cur, list):
            for i, v in enumerate(cur):
                stack.append((v, f"{at}/{i}"))
    return out
