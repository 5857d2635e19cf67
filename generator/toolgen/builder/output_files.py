"""Stage `write`: files in memory -> disk, atomically; or `--check`: compare and diff.

Input: `Output`s (a folder and its files as bytes, or one file). Output: the files on disk, or the
`Drift`s between them and the disk; `check_destinations` refuses folders that would lose data.

A build's output is a mapping from output folder to its files (relative path -> bytes). Each folder
is owned by toolgen: `write_outputs` stages every folder next to its destination, and only when all
are staged swaps them in (rename), so a failed build never leaves a half-written tree. Single files
(e.g. the intent-map JSON Schema) are written through a temporary file and `os.replace`. Every file
and folder is flushed to disk before the rename that commits it (`write_outputs`). Files and
folders get the modes the user's umask gives (0644 and 0755 under umask 022).
"""

from __future__ import annotations

import difflib
import os
import re
import secrets
import shutil
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..diagnostics import Diagnostic, SourceLocation, display_path
from ..dialects import catalog_files
from ..durable import flush_to_disk
from ..search.dense_sidecar import SIDECAR_FILE, same_pins

T = TypeVar("T")


@dataclass(frozen=True)
class Output:
    """A folder toolgen owns (`files` relative to it) or a single file (`files` = {"": content})."""

    path: Path
    files: dict[str, bytes]

    @property
    def is_file(self) -> bool:
        return list(self.files) == [""]


# every file name toolgen may write into an output folder (any artifact selection: each dialect's
# files, from the dialect registry, and the rest), and caches
OWNED_NAMES = frozenset(
    {
        *catalog_files(),
        "policy.json",
        "POLICY.md",
        "REPORT.md",
        "search.json",
        "server.json",
        "__init__.py",
        "models.py",
        "__pycache__",
    }
)
#: the parts of a split catalog and their index (`toolgen.dialects._parts`): anthropic.3.json, ...
OWNED_PARTS = re.compile(r"(anthropic|openai\.responses)\.([0-9]+|parts)\.json")


def owned(name: str) -> bool:
    """Whether toolgen may have written a file of this name into an output folder (a rebuild
    replaces it; any other file makes the folder unsafe to replace)."""
    return name in OWNED_NAMES or OWNED_PARTS.fullmatch(name) is not None


#: names Windows reserves for devices, whatever the extension (``CON``, ``aux.json``, ``com1.txt``)
_WINDOWS_DEVICES = re.compile(r"(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?", re.IGNORECASE)
#: characters no Windows file name holds
_WINDOWS_FORBIDDEN = frozenset('<>:"|?*\\') | {chr(c) for c in range(32)}


def folded(path: Path) -> tuple[str, ...]:
    """`path`'s parts as a case-insensitive, Unicode-normalising file system (macOS's, Windows') tells
    names apart: canonically composed (NFC) and case folded, so ``A`` and ``a``, or ``é`` written as
    one code point and as ``e`` + U+0301, are one folder there."""
    return tuple(unicodedata.normalize("NFC", unicodedata.normalize("NFC", p).casefold()) for p in path.parts)


def _unportable(parts: tuple[str, ...]) -> str | None:
    """Why a path of these `parts` could not be checked out on Windows, or None: a reserved device
    name, a character Windows forbids, or a name ending in a dot or a space."""
    for part in parts:
        if _WINDOWS_DEVICES.fullmatch(part.rstrip(" .")):
            return f"{part!r} is a device name on Windows"
        bad = next((ch for ch in part if ch in _WINDOWS_FORBIDDEN), None)
        if bad is not None:
            return f"{part!r} holds {bad!r}, which no Windows file name holds"
        if part.endswith((".", " ")):
            return f"{part!r} ends in {part[-1]!r}, which Windows drops"
    return None


def check_destinations(outputs: list[Output], protected: list[Path]) -> list[Diagnostic]:
    """Refuse destinations that would lose data: an output folder that is an existing file, that
    holds (or is) an input or the working directory, that overlaps another output, or that already
    holds files toolgen does not write. toolgen replaces its output folders whole, so these checks
    run before anything is written. Returns `out-unsafe` error diagnostics (empty when all is safe).
    """
    problems: list[Diagnostic] = []
    resolved = [(out, out.path.resolve()) for out in outputs]
    folds = [folded(path) for _, path in resolved]
    guarded = [p.resolve() for p in protected]
    here = Path.cwd().resolve()  # named as such in a refusal: its display path is only "."

    def bad(out: Output, message: str, hint: str) -> None:
        problems.append(
            Diagnostic("out-unsafe", "error", message, SourceLocation(display_path(out.path)), hint)
        )

    for i, (out, path) in enumerate(resolved):
        shown = display_path(out.path)
        # the names below the working directory (a repository's), else the output's own name
        unportable = _unportable(path.relative_to(here).parts if here in path.parents else (path.name,))
        if unportable is not None:
            bad(out, f"output {shown} cannot be written portably: {unportable}", "choose another name")
            continue
        if out.is_file:
            if path.is_dir():
                bad(out, f"{shown} is a folder; toolgen writes a file there", "choose another path")
            continue
        if path.exists() and not path.is_dir():
            bad(out, f"output folder {shown} is an existing file", "choose a folder path")
            continue
        inside = [g for g in guarded if g == path or path in g.parents]
        if inside:
            what = "the working directory" if inside[0] == here else display_path(inside[0])
            bad(
                out,
                f"output folder {shown} {'is' if inside[0] == path else 'holds'} {what}, which toolgen must "
                "not replace",
                "toolgen replaces an output folder whole: give each API its own folder, e.g. generated/<api>",
            )
            continue
        for j, (other, other_path) in enumerate(resolved):
            if j == i or other.is_file:
                continue
            if other_path == path or path in other_path.parents:
                bad(
                    out,
                    f"output folders {shown} and {display_path(other.path)} overlap",
                    "give every API a separate folder",
                )
                break
            if folds[j][: len(folds[i])] == folds[i]:
                bad(
                    out,
                    f"output folders {shown} and {display_path(other.path)} differ only in case or Unicode "
                    "normalisation: they overlap on macOS and Windows",
                    "give every API a separate folder whose name differs in more than case",
                )
                break
        else:
            if path.is_dir():
                foreign = sorted(
                    p.name for p in path.iterdir() if not owned(p.name) and p.name not in out.files
                )
                if foreign:
                    bad(
                        out,
                        f"output folder {shown} holds files toolgen did not write: "
                        f"{', '.join(foreign[:3])}{' …' if len(foreign) > 3 else ''}",
                        "toolgen replaces an output folder whole: use an empty folder (or move these files)",
                    )
    return problems


def write_outputs(outputs: list[Output]) -> list[Path]:
    """Write every output; returns the paths written. Either all folders are replaced or none.
    Call `check_destinations` first.

    Durable (`toolgen.durable.flush_to_disk`): once every output is staged, every staged file and
    folder is flushed to disk (``fsync``, at once) before any rename; after the renames, each
    destination's parent folder is flushed once. So when this returns, every file it names is
    on disk under its final name, and whatever records them (the build cache's manifest) may be
    written; a crash before that leaves the old folder or the new one, never a file of zero length."""
    outputs = [Output(out.path.resolve(), out.files) for out in outputs]
    staged: list[tuple[Output, Path]] = []
    unflushed: list[Path] = []
    try:
        for out in outputs:
            out.path.parent.mkdir(parents=True, exist_ok=True)
            if out.is_file:
                fd, tmp_file = _fresh(
                    out.path, lambda p: os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                )
                staged.append((out, tmp_file))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(out.files[""])
                unflushed.append(tmp_file)
                continue
            _, tmp_dir = _fresh(out.path, lambda p: os.mkdir(p, 0o777))
            staged.append((out, tmp_dir))
            folders = {tmp_dir}
            for rel, content in sorted(out.files.items()):
                target = tmp_dir / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                folders.update(p for p in target.parents if p == tmp_dir or tmp_dir in p.parents)
                target.write_bytes(content)
                unflushed.append(target)
            unflushed.extend(sorted(folders))
        flush_to_disk(unflushed)  # every staged file and folder, before anything is committed
    except BaseException:
        for _, tmp in staged:
            _remove(tmp)
        raise
    written = []
    try:
        for out, tmp in staged:
            if out.is_file:
                os.replace(tmp, out.path)
            else:
                old = None
                if out.path.exists():
                    old = out.path.with_name("." + out.path.name + ".old")
                    _remove(old)
                    os.replace(out.path, old)
                os.replace(tmp, out.path)
                if old is not None:
                    _remove(old)
            written.append(out.path)
    finally:
        for _, tmp in staged:  # leftovers of a swap that failed half-way
            if tmp.exists():
                _remove(tmp)
    flush_to_disk(out.path.parent for out in outputs)  # the renames themselves
    return written


def _fresh(dest: Path, create: Callable[[Path], T]) -> tuple[T, Path]:
    """A new hidden sibling of `dest` made by `create` (which must fail with `FileExistsError` when
    the name is taken). The mode is the one `create` asks for (0666 for files, 0777 for folders)
    minus the user's umask, as an editor or git would write them: `tempfile`'s 0600/0700 would
    outlive the rename and leak into the generated tree."""
    while True:
        candidate = dest.with_name(f".{dest.name}.{secrets.token_hex(4)}.tmp")
        try:
            return create(candidate), candidate
        except FileExistsError:
            continue


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()


@dataclass(frozen=True)
class Drift:
    """One difference between the expected output and the disk."""

    path: str
    kind: str  # "missing" | "extra" | "changed"
    diff: str


def check_outputs(outputs: list[Output]) -> list[Drift]:
    """Compare expected outputs with the disk: missing, extra and changed files, with unified diffs.
    A dense option's ``search.vectors`` is compared by its header (`toolgen.search.dense_sidecar.same_pins`:
    the inputs', the model's and the tokenizer's hashes), not by its vector bytes."""
    drifts: list[Drift] = []
    for out in outputs:
        if out.is_file:
            _compare(out.path, out.files[""], drifts)
            continue
        expected = {rel: content for rel, content in out.files.items()}
        present = set()
        if out.path.is_dir():
            for p in sorted(out.path.rglob("*")):
                if p.is_file() and "__pycache__" not in p.parts:
                    present.add(p.relative_to(out.path).as_posix())
        for rel in sorted(set(expected) | present):
            path = out.path / rel
            if rel not in expected:
                drifts.append(
                    Drift(display_path(path), "extra", f"extra file {display_path(path)} (not generated)\n")
                )
            else:
                _compare(path, expected[rel], drifts)
    return drifts


def _compare(path: Path, content: bytes, drifts: list[Drift]) -> None:
    shown = display_path(path)
    if not path.is_file():
        drifts.append(Drift(shown, "missing", f"missing file {shown}\n"))
        return
    actual = path.read_bytes()
    if actual == content:
        return
    if path.name == SIDECAR_FILE and same_pins(actual, content):
        return  # the same inputs and model: a vector's last bits may differ between CPUs (dense_sidecar)
    try:
        a = actual.decode("utf-8").splitlines(keepends=True)
        b = content.decode("utf-8").splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(a, b, f"a/{shown}", f"b/{shown}", n=2))
    except UnicodeDecodeError:
        diff = f"binary file {shown} differs\n"
    if len(diff) > 20_000:
        diff = diff[:20_000] + f"\n… diff of {shown} cut at 20000 characters\n"
    drifts.append(Drift(shown, "changed", diff))
