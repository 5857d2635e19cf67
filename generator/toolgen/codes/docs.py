"""The docs tables of the diagnostic codes, written from the registry (`toolgen.codes.table`).

Input: the registry and the repository's docs. Output: the tables as Markdown (`rules_table`, the
lint rules of docs/review.md and `toolgen lint --list-rules`; `composite_table`, the build's
composite checks of docs/composites.md; `reference_table`, every code in docs/diagnostics.md) and
`sync_docs`, which writes each table into its file between two marker lines,
``<!-- toolgen.codes: NAME -->`` and ``<!-- toolgen.codes: end -->``, or with `check=True` only
reports the files whose tables differ from the registry's, byte for byte.

``python -m toolgen.codes`` rewrites the tables (from the repository root; ``--root DIR`` for
another); ``--check`` writes nothing and exits 1 naming the stale files (`.ci/run`).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from .table import CODES, STAGES, Code

_BEGIN = "<!-- toolgen.codes: {name} -->"
_END = "<!-- toolgen.codes: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules_table() -> str:
    """The rules `toolgen lint` lists (codes with a `rule`): lint's own first, then the build's, each
    group in registry order, with the footnote on the build's severities."""
    lines = ["| rule | default | checks | fix |", "|---|---|---|---|"]
    for source in ("lint", "build"):
        for code in CODES.values():
            if code.rule != source:
                continue
            severity = code.severity + ("¹" if source == "build" else "")
            lines.append(f"| `{code.code}` | {severity} | {_cell(code.summary)} | {_cell(code.fix)} |")
    lines += [
        "",
        (
            "¹ Reported by the build pipeline and passed through by lint; its severity is the build's "
            "(an explicit intent that cannot be lowered is an error, an operation of an `include` group is "
            "skipped with a warning) unless `lint.severity` sets one."
        ),
    ]
    return "\n".join(lines) + "\n"


def composite_table() -> str:
    """The codes of stage ``composite``: what each refuses and what to do."""
    lines = ["| code | what | fix |", "|---|---|---|"]
    lines += [
        f"| `{code.code}` | {_cell(code.summary)} | {_cell(code.fix)} |"
        for code in CODES.values()
        if code.stage == "composite"
    ]
    return "\n".join(lines) + "\n"


def _link(doc: str, base: str) -> str:
    """`doc` (``file#anchor`` from the repository root) as a Markdown link from the folder `base`."""
    file, _, anchor = doc.partition("#")
    depth = len(PurePosixPath(base).parts)
    target = "../" * depth + file
    if file.startswith(base + "/"):
        target = file[len(base) + 1 :]
    return f"[{file}#{anchor}]({target}#{anchor})"


def reference_table() -> str:
    """Every registered code, one section per stage (in `STAGES` order), each code with an anchor of
    its own name (``docs/diagnostics.md#spec-invalid``) and a link to the section explaining it."""
    out: list[str] = []
    for stage, (title, _) in STAGES.items():
        rows = [code for code in CODES.values() if code.stage == stage]
        if not rows:
            continue
        out += [f"## {title}", "", "| code | severity | what | fix | explained in |", "|---|---|---|---|---|"]
        out += [
            f'| <a id="{code.code}"></a>`{code.code}` | {_severity(code)} | {_cell(code.summary)} | '
            f"{_cell(code.fix)} | {_link(code.doc, 'docs')} |"
            for code in rows
        ]
        out.append("")
    out.append(
        "¹ A lint rule (`toolgen lint --list-rules`): `lint.severity` in toolgen.yaml may change its "
        "severity."
    )
    return "\n".join(out) + "\n"


def _severity(code: Code) -> str:
    return code.severity + ("¹" if code.rule is not None else "")


#: each generated table: its marker name, the file that holds it, and its renderer
TABLES: tuple[tuple[str, str, Callable[[], str]], ...] = (
    ("rules", "docs/review.md", rules_table),
    ("composites", "docs/composites.md", composite_table),
    ("reference", "docs/diagnostics.md", reference_table),
)


def replace_between_markers(text: str, name: str, table: str, where: str) -> str:
    """`text` with the lines between its `name` markers replaced by `table` (a blank line either
    side). Raises `ValueError` naming `where` when the markers are missing, repeated or out of order."""
    begin = _BEGIN.format(name=name)
    pattern = re.compile(rf"^{re.escape(begin)}\n.*?^{re.escape(_END)}$", re.MULTILINE | re.DOTALL)
    found = pattern.findall(text)
    if len(found) != 1 or text.count(begin) != 1:
        raise ValueError(
            f"{where}: expected one `{begin}` line followed by `{_END}`; add them around the "
            "table this command writes"
        )
    return pattern.sub(lambda _: f"{begin}\n\n{table}\n{_END}", text)


def sync_docs(root: Path, *, check: bool) -> list[str]:
    """Write every table into its file under `root` (or, with `check`, write nothing); the files whose
    table differed, as repository-relative paths. Raises `ValueError` on a file without its markers
    and `OSError` on a file that cannot be read."""
    stale = []
    for name, file, render in TABLES:
        path = root / file
        text = path.read_text(encoding="utf-8")
        new = replace_between_markers(text, name, render(), file)
        if new != text:
            stale.append(file)
            if not check:
                path.write_bytes(new.encode("utf-8"))
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m toolgen.codes [--check] [--root DIR]``: 0 when the docs match the registry (after
    writing them, without --check), 1 when --check finds a stale table, 2 on a file without markers."""
    parser = argparse.ArgumentParser(prog="python -m toolgen.codes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a table is stale")
    parser.add_argument("--root", type=Path, default=Path(), help="the repository root (default: .)")
    args = parser.parse_args(argv)
    try:
        stale = sync_docs(args.root, check=args.check)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}")
        return 2
    for file in stale:
        print(
            f"{file}: the diagnostic codes table is stale; run `python -m toolgen.codes`"
            if args.check
            else f"{file}: rewritten from the registry"
        )
    return 1 if args.check and stale else 0


__all__ = [
    "TABLES",
    "composite_table",
    "main",
    "reference_table",
    "replace_between_markers",
    "rules_table",
    "sync_docs",
]
