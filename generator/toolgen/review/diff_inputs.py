"""`toolgen diff`, its inputs: a generated folder, in a directory or at a git ref -> the tool surface
of each API in it (`Surface`).

Input: a folder written by `toolgen build` (one API's folder holding ``policy.json``, or a folder of
them), read from the file system (`read_dir`) or at a git ref with `git ls-tree` / `git show`,
nothing checked out (`read_git`). Output: API name -> `Surface`: the policy rows
(`toolgen.policy.format.from_json`), the MCP tools of ``mcp.json`` and the tools model-written code
may call (``allowed_callers`` of anthropic.json or openai.responses.json). Errors (`DiagnosticError`,
located at the folder or file): ``diff-input-missing``, ``diff-input-invalid`` (a file that is not
JSON or not a toolgen output), ``diff-git-error``, ``diff-not-a-repository``, ``diff-no-commits`` and
``diff-unknown-ref``, each saying what to do instead.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..emit import compact_json
from ..policy.format import PolicyFormatError, PolicyRow, from_json
from ..tokens import count_tokens


@dataclass(frozen=True)
class Surface:
    """One API's generated tool surface: policy rows and MCP tools by tool name."""

    api: str
    rows: dict[str, PolicyRow]
    tools: dict[str, dict[str, Any]]
    #: the tools model-written code may call (a caller other than ``direct`` in anthropic.json's or
    #: openai.responses.json's ``allowed_callers``)
    coded: frozenset[str] = frozenset()

    def tokens(self) -> int:
        """o200k tokens of the MCP catalog: the sum over its tools of each tool's compact JSON, counted
        the way REPORT.md counts them (`toolgen.emit.build_report.measure`), so the two figures agree."""
        return sum(count_tokens(compact_json(self.tools[n])) for n in sorted(self.tools))


#: the catalogs that carry ``allowed_callers`` (docs/dialects.md, "Programmatic callers")
CALLER_CATALOGS = ("anthropic.json", "openai.responses.json")


def coded_tools(catalogs: list[Any]) -> frozenset[str]:
    """The names of the tools in `catalogs` (parsed anthropic.json / openai.responses.json files,
    namespaces included) whose ``allowed_callers`` name a caller other than ``direct``."""
    found: set[str] = set()
    stack = [e for c in catalogs if isinstance(c, list) for e in c]
    while stack:
        entry = stack.pop()
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "namespace" and isinstance(entry.get("tools"), list):
            stack.extend(entry["tools"])
        callers = entry.get("allowed_callers")
        named = isinstance(entry.get("name"), str)
        if named and isinstance(callers, list) and any(c != "direct" for c in callers):
            found.add(entry["name"])
    return frozenset(found)


def _surface(policy: Any, mcp: Any, where: str, coded: frozenset[str] = frozenset()) -> Surface:
    if not isinstance(mcp, list):
        raise DiagnosticError.one(
            "diff-input-invalid",
            f"{where}: mcp.json is not a toolgen output (not an array of tools)",
            SourceLocation(f"{where}/mcp.json"),
            "point at folders written by `toolgen build`",
        )
    try:
        table = from_json(policy, f"{where}/policy.json")
    except PolicyFormatError as exc:
        raise DiagnosticError([exc.diagnostic("diff-input-invalid")]) from None
    tools = {str(t["name"]): t for t in mcp if isinstance(t, dict) and "name" in t}
    return Surface(table.api or Path(where).name, table.rows(), tools, coded)


def read_dir(path: Path) -> dict[str, Surface]:
    """Surfaces of a generated folder: `path` itself when it holds policy.json, else its subfolders."""
    if not path.is_dir():
        raise DiagnosticError.one(
            "diff-input-missing",
            f"no folder {display_path(path)}",
            SourceLocation(display_path(path)),
            "pass two generated folders",
        )
    folders = (
        [path]
        if (path / "policy.json").exists()
        else sorted(p for p in path.iterdir() if (p / "policy.json").is_file())
    )
    out: dict[str, Surface] = {}
    for folder in folders:
        where = display_path(folder)
        try:
            policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
            mcp_file = folder / "mcp.json"
            mcp = json.loads(mcp_file.read_text(encoding="utf-8")) if mcp_file.exists() else []
            coded = coded_tools(
                [
                    json.loads((folder / n).read_text(encoding="utf-8"))
                    for n in CALLER_CATALOGS
                    if (folder / n).is_file()
                ]
            )
        except (OSError, ValueError) as exc:
            raise DiagnosticError(
                [Diagnostic("diff-input-invalid", "error", f"{where}: {exc}", SourceLocation(where))]
            ) from None
        surface = _surface(policy, mcp, where, coded)
        out[surface.api] = surface
    return out


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], check=False, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DiagnosticError.one(
            "diff-git-error",
            f"cannot run git: {exc}",
            None,
            "install git, or compare two folders: toolgen diff OLD_DIR NEW_DIR",
        ) from None
    if proc.returncode != 0:
        raise DiagnosticError.one(
            "diff-git-error",
            f"git {' '.join(args)}: {proc.stderr.strip() or 'failed'}",
            None,
            "check the ref (e.g. `git fetch origin main` in CI) and the --dir path",
        )
    return proc.stdout


def _git_ok(*args: str) -> bool:
    try:
        return subprocess.run(["git", *args], check=False, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _check_ref(ref: str, directory: str) -> None:
    """A located error when `ref` cannot be read: not in a git repository, a repository without
    commits, or an unknown ref; each says what to do instead."""
    if _git_ok("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"):
        return
    where = SourceLocation(display_path(Path(directory)))
    compare = "or compare two folders: toolgen diff OLD_DIR NEW_DIR"
    if not _git_ok("rev-parse", "--git-dir"):
        raise DiagnosticError.one(
            "diff-not-a-repository",
            "not in a git repository: there is no base to compare against",
            where,
            f"run toolgen diff inside the repository, {compare}",
        )
    if not _git_ok("rev-parse", "--verify", "--quiet", "HEAD^{commit}"):
        raise DiagnosticError.one(
            "diff-no-commits",
            f"the repository has no commits yet, so {ref} names nothing to compare {directory}/ against",
            where,
            f"commit {directory}/ first (then diff against that commit), {compare}",
        )
    raise DiagnosticError.one(
        "diff-unknown-ref",
        f"git knows no commit {ref!r}",
        where,
        "check the ref (in CI, fetch it first: `git fetch origin main`), " + compare,
    )


def read_git(ref: str, directory: str) -> dict[str, Surface]:
    """Surfaces of `directory` (relative to the working directory) at git `ref`; {} when absent."""
    _check_ref(ref, directory)
    base = directory.rstrip("/")
    listing = _git("ls-tree", "-r", "--name-only", ref, "--", base + "/")
    files = set(listing.splitlines())
    out: dict[str, Surface] = {}
    candidates = sorted(f[: -len("/policy.json")] for f in files if f.endswith("/policy.json"))
    if f"{base}/policy.json" in files:
        candidates = [base]
    prefix = _git("rev-parse", "--show-prefix").strip()
    for folder in candidates:
        rel = folder[len(prefix) :] if prefix and folder.startswith(prefix) else folder
        where = f"{ref}:{rel}"
        try:
            policy = json.loads(_git("show", f"{ref}:./{rel}/policy.json"))
            mcp = json.loads(_git("show", f"{ref}:./{rel}/mcp.json")) if f"{folder}/mcp.json" in files else []
            coded = coded_tools(
                [
                    json.loads(_git("show", f"{ref}:./{rel}/{n}"))
                    for n in CALLER_CATALOGS
                    if f"{folder}/{n}" in files
                ]
            )
        except ValueError as exc:
            raise DiagnosticError(
                [Diagnostic("diff-input-invalid", "error", f"{where}: {exc}", None)]
            ) from None
        surface = _surface(policy, mcp, where, coded)
        out[surface.api] = surface
    return out


__all__ = ["CALLER_CATALOGS", "Surface", "coded_tools", "read_dir", "read_git"]
