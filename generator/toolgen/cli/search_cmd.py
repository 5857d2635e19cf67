"""`toolgen search API_OR_DIR "QUERY"`: rank the tools of a generated package for a request.

Input: a generated package (folder or API name of the project file, as `toolgen call` takes it), a
request in plain words, how many results, the output format and, optionally, the caller's scopes.
Output: the ranked tools (`toolgen.runtime.serving.tool_index`), as text or as a JSON list of
``{tool, toolset, score, operation}``, best first.

    toolgen search API_OR_DIR "QUERY" [--limit K] [--format text|json] [--scopes a,b]

With ``--scopes`` (or ``TOOLGEN_SCOPES``) only tools whose permission those scopes satisfy are listed;
without, every tool is. A ``search.json`` the index does not use (unreadable, or not indexing the
package's tools, e.g. one with no documents) is a warning on stderr
(`toolgen.runtime.serving.tool_index.IndexWarning`); the package is then analysed here. Each such
warning is printed once: the ``toolgen.search`` log record a long-running `serve` relies on for the
same fact is not printed beside it. Exit codes: 0 (also
when nothing matches), 2 bad input (unknown package,
a limit below 1), 3 internal error.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from ..runtime.serving.loading import parse_scopes
from ..runtime.serving.tool_index import ToolIndex
from .call import package_folder


@contextmanager
def _logged_as_warnings() -> Iterator[None]:
    """While a package loads, drop the ``toolgen.search`` logger's records: what it logs then (a dense
    sidecar or model that does not load) is also one of the index's `warnings`, which this command
    prints itself."""
    log = logging.getLogger("toolgen.search")
    drop = logging.Filter("toolgen.search.never")  # passes no record of `toolgen.search`
    log.addFilter(drop)
    try:
        yield
    finally:
        log.removeFilter(drop)


@click.command("search")
@click.argument("api_or_dir")
@click.argument("query")
@click.option(
    "--limit", default=5, show_default=True, type=click.IntRange(min=1), help="How many tools to list."
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--scopes",
    default=None,
    help="Comma-separated scopes of the caller: list only tools they allow (env: TOOLGEN_SCOPES).",
)
def search_command(api_or_dir: str, query: str, limit: int, fmt: str, scopes: str | None) -> None:
    """Rank the tools of a generated package for QUERY, best first."""
    folder = package_folder("search", api_or_dir)
    try:
        with _logged_as_warnings():
            index = ToolIndex.from_dir(folder)
    except (OSError, ValueError) as exc:
        click.echo(f"toolgen search: cannot load {folder}: {exc}", err=True)
        sys.exit(2)
    for warning in index.warnings:  # a search.json not used: the package is analysed instead
        click.echo(f"toolgen search: warning: [{warning.code}] {warning}", err=True)
    held = parse_scopes(scopes) if scopes is not None or "TOOLGEN_SCOPES" in os.environ else None
    hits = index.search(query, scopes=held, limit=limit)
    if fmt == "json":
        click.echo(json.dumps([h.to_json() for h in hits], indent=2, ensure_ascii=False))
        return
    if not hits:
        click.echo("no matching tool: no tool names any word of the request", err=True)
        return
    width = max(len(h.tool) for h in hits)
    for rank, hit in enumerate(hits, 1):
        toolset = f"  [{hit.toolset}]" if hit.toolset else ""
        click.echo(f"{rank:>2}. {hit.tool:<{width}}  {_score(hit.score)}  {hit.operation}{toolset}")


def _score(score: float) -> str:
    """A hit's score in eight columns: three decimals, or, below 0.001, its order of magnitude
    (``1.0e-06``: a hit that names only words most operations name, not a zero that would read as
    padding)."""
    return f"{score:8.3f}" if score >= 0.001 or score == 0 else f"{score:8.1e}"
