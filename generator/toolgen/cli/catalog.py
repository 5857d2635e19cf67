"""`toolgen catalog API_OR_DIR --dialect D --scopes a,b`: a dialect's catalog cut down to a caller's scopes.

Input: a generated package (folder or API name of the project file, as `toolgen call` takes it),
a dialect (the catalog file ``<dialect>.json`` of the package) and the caller's scopes. Output, on
stdout: that catalog as JSON without the tools whose ``permission`` the scopes do not satisfy
(`toolgen.runtime.identity.filter_catalog`), for a host that sends a model only what its caller
may use. Entries that are not tools of the package (a hosted ``tool_search`` entry) are kept.

    toolgen catalog API_OR_DIR --dialect mcp|openai|openai.responses|anthropic|gemini|gemini.interactions
                    --scopes a,b [--toolset NAME | --part K]

A catalog split into parts (Anthropic's over 10,000 tools with tool search: ``anthropic.<k>.json``
and the index ``anthropic.parts.json``) needs a choice: `--toolset` prints the part holding that
toolset, `--part` the part numbered K (`toolgen.runtime.catalogs.read_catalog`).

``openai.responses`` is the Responses catalog (``openai.responses.json``, written only for a package
with toolsets or deferred tools): functions are filtered inside their namespaces, and a namespace
left empty is dropped. ``gemini.interactions`` is Gemini's Interactions catalog
(``gemini.interactions.json``): its client-run ``tool_search`` entry is kept. ``--scopes ""`` keeps only
the tools that need no scope. Exit codes: 0 printed; 2 bad input
(unknown package, a catalog file that is missing or not JSON, a split catalog without a part chosen
or no part holding the toolset); 3 internal error.
"""

from __future__ import annotations

import json
import sys

import click

from ..dialects import catalog_files, names
from ..policy.format import read_policy
from ..runtime.catalogs import CatalogError, parts_index, read_catalog
from ..runtime.identity import filter_catalog, permits
from ..runtime.serving.loading import parse_scopes
from .call import package_folder

#: every catalog a package may hold, by file stem (the dialect registry's files: ``openai``,
#: ``openai.responses``, ``anthropic``, ...); a stem that is not a dialect's name is an extra catalog,
#: written only for a package with toolsets or deferred tools
CATALOGS = tuple(f.removesuffix(".json") for f in catalog_files())


@click.command("catalog")
@click.argument("api_or_dir")
@click.option(
    "--dialect",
    type=click.Choice(CATALOGS),
    default="mcp",
    show_default=True,
    help="Which catalog of the package (<dialect>.json; openai.responses: the Responses catalog).",
)
@click.option(
    "--scopes",
    required=True,
    help='Comma-separated scopes of the caller; only tools they allow are kept ("" for none).',
)
@click.option(
    "--toolset",
    default=None,
    help="Of a catalog split into parts (anthropic over 10,000 tools): the part holding this toolset.",
)
@click.option(
    "--part",
    type=click.IntRange(min=1),
    default=None,
    help="Of a catalog split into parts: the part numbered K (<dialect>.K.json).",
)
def catalog_command(
    api_or_dir: str, dialect: str, scopes: str, toolset: str | None, part: int | None
) -> None:
    """Print a package's catalog in one dialect, holding only the tools SCOPES allow."""
    folder = package_folder("catalog", api_or_dir)
    if toolset is not None and part is not None:
        click.echo("toolgen catalog: give --toolset or --part, not both", err=True)
        sys.exit(2)
    try:
        rows = read_policy(folder / "policy.json").tools
        document = read_catalog(folder, dialect, toolset=toolset, part=part)
    except (OSError, ValueError, AttributeError) as exc:
        absent = dialect not in names() and not (folder / f"{dialect}.json").exists()
        why = "it is written only for a package with toolsets or deferred tools" if absent else str(exc)
        if isinstance(exc, CatalogError) and parts_index(folder, dialect) is not None:
            why += " (--toolset NAME or --part K)"
        click.echo(f"toolgen catalog: cannot read the {dialect} catalog of {folder}: {why}", err=True)
        sys.exit(2)
    held = parse_scopes(scopes)
    hidden = [row.tool for row in rows if not permits(row, held)]
    click.echo(json.dumps(filter_catalog(document, hidden), indent=2, ensure_ascii=False))
