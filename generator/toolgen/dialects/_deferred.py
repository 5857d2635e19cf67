"""Catalogs that scale: what each dialect sends when tools are grouped into toolsets or deferred, and
what a model sees of it before it searches (``docs/provider-rules.md`` F.1-F.4).

Input: the IR `Tool`s (their policy rows carry `toolset` and `loading`), the per-tool catalogs of
every dialect (`toolgen.emit.dialect_catalogs.Catalogs.tools`) and the API's toolsets. Output:
`DeferredViews`: the catalog files to write (``openai.responses.json``; ``anthropic.json`` with its
tool-search tool) and, per view, the entries a model sees up front; `check_deferred` checks both
against each provider's rules.

Per dialect:

- OpenAI Chat Completions (``openai.json``, every function: the pool the client draws from and the
  runtime decodes arguments with): no deferred loading or hosted search (F.1); a client sends the
  eager functions plus the ``search_tools`` function (`toolgen.search.tool.openai_search_function`),
  answers it with the same index, and adds the found functions from ``openai.json`` to its next
  request, as for Gemini.
- OpenAI Responses (``openai.responses.json``, written when the API has toolsets, deferred tools or a
  tool model-written code may call): namespaces, ``defer_loading``, ``tool_search`` and
  ``allowed_callers`` (`toolgen.dialects._responses`, F.1).
- Anthropic (``anthropic.json``): ``defer_loading: true`` on deferred tools plus the BM25 tool-search
  server tool (F.2). A request with tool search carries at most 10,000 tools: a larger catalog is
  written as parts instead (``anthropic.1.json``, ``anthropic.2.json``, ...: each every eager tool,
  the deferred tools of whole toolsets and the tool-search tool) with the index
  ``anthropic.parts.json`` (`toolgen.dialects._parts`), and no ``anthropic.json``. A Responses
  catalog over 128 top-level entries (more namespaces than one request carries) is cut the same way:
  ``openai.responses.<k>.json`` and ``openai.responses.parts.json``.
- MCP (``mcp.json`` keeps every tool's full definition: the server answers ``tools/call`` and the
  search meta-tool from it): ``tools/list`` shows the eager tools plus the ``search_tools`` meta-tool
  (`toolgen.search.tool`), which returns the full definitions of deferred tools (F.4).
- Gemini (``gemini.json``): no deferred loading or hosted search (F.3); a client sends the eager
  declarations plus the ``search_tools`` declaration, answers it with the same index, and adds the
  found declarations from ``gemini.json`` to its next request.
- Gemini Interactions (``gemini.interactions.json``, written with every Gemini catalog): every
  function, deferred ones marked ``defer_loading``, and a client-run ``tool_search`` entry; a request
  carries the entries without ``defer_loading`` (`toolgen.dialects._interactions`).

For the two client-run views (`CLIENT_SEARCH`) one request carries the up-front view, not the file:
the tools-per-request limit is counted on it (`DeferredViews.request_view`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compile.ir import Tool, Toolset
from ..search.tool import gemini_search_declaration, mcp_search_tool, openai_search_function
from ._base import allows_code_callers
from ._check import Violation
from ._interactions import check_interactions_catalog, interactions_catalog, interactions_upfront
from ._parts import PartPlan, index_file, part_file, plan_namespaces, plan_parts
from ._responses import check_responses_catalog, responses_catalog, responses_upfront
from .anthropic import (
    ANTHROPIC_MAX_SEARCH_TOOLS,
    ANTHROPIC_SEARCH_SOURCE,
    anthropic_upfront,
    check_anthropic_catalog,
    deferred_catalog,
)
from .gemini import GEMINI_MAX_TOOLS, check_gemini_catalog
from .mcp import check_mcp_catalog
from .openai import OPENAI_MAX_TOOLS, check_openai_catalog

JSON = Any

RESPONSES_SOURCE = "A.1 / F.1: 128 tools per request (a namespace is one)"

#: up-front views, in report order: (view, file the client sends or serves, how it is derived)
VIEWS: tuple[tuple[str, str, str], ...] = (
    (
        "openai",
        "openai.json",
        (
            "Chat Completions: eager functions and a client-run `search_tools` function; "
            "found functions are added from `openai.json`"
        ),
    ),
    (
        "openai-responses",
        "openai.responses.json",
        (
            "Responses: eager functions, deferred functions by name and description, namespaces by name and "
            "description, `tool_search`"
        ),
    ),
    (
        "anthropic",
        "anthropic.json",
        ("eager tools and the tool-search tool; deferred tools (`defer_loading`) load when found"),
    ),
    ("mcp", "mcp.json", "`tools/list`: eager tools and the `search_tools` meta-tool"),
    ("gemini", "gemini.json", "eager declarations and a client-run `search_tools` declaration"),
    (
        "gemini-interactions",
        "gemini.interactions.json",
        (
            "Interactions: the functions without `defer_loading` and a client-run `tool_search`; found functions "
            "are added from the same file"
        ),
    ),
)

#: the dialects with no deferred loading whose client runs ``search_tools`` itself (F.1 Chat
#: Completions, F.3 Gemini): one request carries the up-front view, and the per-tool file is the pool
#: the found entries are added from
CLIENT_SEARCH: tuple[str, ...] = ("openai", "gemini")


@dataclass
class DeferredViews:
    """`files`: catalog files to write, by name (added, or replacing a dialect's per-tool file);
    `omitted`: per-tool files not written (``anthropic.json`` when its parts replace it);
    `upfront`: per view of `VIEWS`, the entries a model sees before it searches; `deferred`: how
    many tools are deferred; `searchable`: the toolsets holding deferred tools (named by the search
    meta-tool); `parts`: how the Anthropic and Responses catalogs are cut, by catalog name
    (``anthropic``, ``openai.responses``; one part: not split)."""

    files: dict[str, JSON] = field(default_factory=dict)
    omitted: tuple[str, ...] = ()
    upfront: dict[str, list[dict[str, JSON]]] = field(default_factory=dict)
    deferred: int = 0
    searchable: tuple[str, ...] = ()
    parts: dict[str, PartPlan] = field(default_factory=dict)

    def catalogs_of(self, name: str) -> dict[str, list[dict[str, JSON]]]:
        """The request catalogs of catalog `name` (``anthropic``, ``openai.responses``) this build
        adds, by file name: ``<name>.json``, or its parts when split; empty when it adds none."""
        return {
            file: value
            for file, value in self.files.items()
            if file == f"{name}.json" or (file.startswith(f"{name}.") and file[len(name) + 1 : -5].isdigit())
        }

    def request_view(self, dialect: str, tools: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
        """What one request of `dialect` carries before any search, given its per-tool catalog
        `tools`: the up-front view for a client-run search (`CLIENT_SEARCH`) when tools are
        deferred, else `tools` (a provider that defers, or nothing deferred, is sent the file)."""
        if self.deferred and dialect in CLIENT_SEARCH:
            return self.upfront.get(dialect, tools)
        return tools


def deferred_views(
    tools: Sequence[Tool],
    catalogs: Mapping[str, list[dict[str, JSON]]],
    toolsets: Sequence[Toolset],
    *,
    search_limit: int = ANTHROPIC_MAX_SEARCH_TOOLS,
    responses_limit: int = OPENAI_MAX_TOOLS,
) -> DeferredViews:
    """The scaled catalogs and up-front views of one API (see the module docstring). With no toolset
    and no deferred tool, no file is added and every view is the whole catalog. `search_limit`: the
    tools one Anthropic request with tool search carries (F.2: 10,000), `responses_limit` the
    top-level entries of one Responses request (A.1: 128); a catalog over its limit is written as
    parts (`parts`)."""
    deferred = [t for t in tools if t.policy.loading == "deferred"]
    searchable = tuple(sorted({t.policy.toolset for t in deferred if t.policy.toolset is not None}))
    out = DeferredViews(deferred=len(deferred), searchable=searchable)
    eager_names = {t.name for t in tools if t.policy.loading == "eager"}
    if toolsets or deferred or any(allows_code_callers(t) for t in tools):
        responses = responses_catalog(list(tools), catalogs.get("openai", []), list(toolsets))
        namespaces = plan_namespaces(tools, responses_limit)
        out.parts["openai.responses"] = namespaces
        if namespaces.split:
            out.files.update(responses_parts(responses, namespaces))
            out.omitted += ("openai.responses.json",)
            responses = out.files[part_file("openai.responses", 1)]
        else:
            out.files["openai.responses.json"] = responses
        out.upfront["openai-responses"] = responses_upfront(responses)
    if "gemini" in catalogs:
        interactions = out.files["gemini.interactions.json"] = interactions_catalog(
            tools, catalogs["gemini"], gemini_search_declaration(searchable)
        )
        out.upfront["gemini-interactions"] = interactions_upfront(interactions)
    if deferred:
        plan = plan_parts(tools, search_limit)
        out.parts["anthropic"] = plan
        entries = catalogs.get("anthropic", [])
        if plan.split:
            out.files.update(anthropic_parts(tools, entries, plan))
            out.omitted += ("anthropic.json",)
            anthropic = out.files[part_file("anthropic", 1)]
        else:
            anthropic = out.files["anthropic.json"] = deferred_catalog(entries)
        out.upfront["anthropic"] = anthropic_upfront(anthropic)
        out.upfront["mcp"] = [e for e in catalogs.get("mcp", []) if e.get("name") in eager_names]
        out.upfront["mcp"].append(mcp_search_tool(searchable))
        out.upfront["gemini"] = [e for e in catalogs.get("gemini", []) if e.get("name") in eager_names]
        out.upfront["gemini"].append(gemini_search_declaration(searchable))
        out.upfront["openai"] = [
            e for e in catalogs.get("openai", []) if e["function"]["name"] in eager_names
        ]
        out.upfront["openai"].append(openai_search_function(searchable))
    else:
        for view in ("openai", "anthropic", "mcp", "gemini"):
            out.upfront[view] = list(catalogs.get(view, []))
    return out


def anthropic_parts(
    tools: Sequence[Tool], entries: Sequence[dict[str, JSON]], plan: PartPlan
) -> dict[str, JSON]:
    """The files of a split Anthropic catalog: each part (``anthropic.<k>.json``: the eager tools and
    the part's deferred tools in catalog order, then the tool-search tool) and the index
    ``anthropic.parts.json``::

        {"dialect": "anthropic", "limit": 10000, "source": "F.2: ...",
         "every_part": <entries every part repeats: the eager tools and the tool-search tool>,
         "parts": [{"file": "anthropic.1.json", "tools": <entries, search tool included>,
                    "toolsets": [<toolset>, ...]}, ...]}

    A part's ``toolsets`` are whole toolsets in sorted order (``null``: the deferred tools of no
    toolset); a toolset's tools are always in one part. `entries` are the per-tool Anthropic entries
    in the order of `tools`."""
    index_of = {tool.name: i for i, tool in enumerate(tools)}
    eager = [i for i, tool in enumerate(tools) if tool.policy.loading != "deferred"]
    files: dict[str, JSON] = {}
    listed: list[dict[str, JSON]] = []
    for k, part in enumerate(plan.parts, 1):
        held = sorted(eager + [index_of[name] for name in part.tools])
        catalog = deferred_catalog([entries[i] for i in held])
        files[part_file("anthropic", k)] = catalog
        listed.append(
            {"file": part_file("anthropic", k), "tools": len(catalog), "toolsets": list(part.toolsets)}
        )
    files[index_file("anthropic")] = {
        "dialect": "anthropic",
        "limit": plan.limit,
        "source": ANTHROPIC_SEARCH_SOURCE,
        "every_part": plan.fixed,
        "parts": listed,
    }
    return files


def responses_parts(catalog: Sequence[dict[str, JSON]], plan: PartPlan) -> dict[str, JSON]:
    """The files of a split Responses catalog: each part (``openai.responses.<k>.json``: the entries
    of `catalog` every part repeats, the part's namespaces, in catalog order) and the index
    ``openai.responses.parts.json`` (the shape of `anthropic_parts`' index; ``tools`` counts
    top-level entries, a namespace as one)."""
    held = {name for part in plan.parts for name in part.toolsets}
    files: dict[str, JSON] = {}
    listed: list[dict[str, JSON]] = []
    for k, part in enumerate(plan.parts, 1):
        mine = set(part.toolsets)
        entries = [
            e
            for e in catalog
            if e.get("type") != "namespace" or e.get("name") in mine or e.get("name") not in held
        ]
        files[part_file("openai.responses", k)] = entries
        listed.append(
            {"file": part_file("openai.responses", k), "tools": len(entries), "toolsets": list(part.toolsets)}
        )
    files[index_file("openai.responses")] = {
        "dialect": "openai.responses",
        "limit": plan.limit,
        "source": RESPONSES_SOURCE,
        "every_part": plan.fixed,
        "parts": listed,
    }
    return files


def check_deferred(
    views: DeferredViews,
    *,
    include_dialect_files: bool = True,
    request_limits: bool = False,
    check_chat: Callable[[list[dict[str, JSON]]], list[Violation]] | None = None,
    check_anthropic: Callable[[list[dict[str, JSON]], int], list[Violation]] | None = None,
) -> list[Violation]:
    """The added files and the up-front views against their providers' rules: the Responses catalog
    (`check_responses_catalog`), ``anthropic.json`` with its tool-search tool or each of its parts,
    each within the plan's limit (unless `include_dialect_files` is false: a build that does not
    write the Anthropic catalog), and the MCP, Gemini and Chat Completions up-front catalogs with the
    ``search_tools`` meta-tool (`check_mcp_catalog`, `check_gemini_catalog`, `check_openai_catalog`:
    strict mode included). `request_limits`: also the tools one request carries (A.1 / C.1: 128) on
    the Chat Completions and Gemini up-front views and on each Responses catalog; the build leaves
    them to `toolgen lint` (``catalog-request-limits``, a warning: too many eager tools is the
    intent map's choice, not a toolgen bug). `check_chat`: as `check_responses_catalog` takes it.
    `check_anthropic(catalog, limit)`: what checks an Anthropic catalog with its tool-search tool
    (default: `check_anthropic_catalog` with ``max_search_tools=limit``; the build passes one that
    remembers each tool's verdict, `toolgen.builder.incremental.anthropic_search_problems`)."""
    problems: list[Violation] = []
    for responses in views.catalogs_of("openai.responses").values():
        problems += check_responses_catalog(
            responses, max_tools=OPENAI_MAX_TOOLS if request_limits else None, check_chat=check_chat
        )
    plan = views.parts.get("anthropic")
    limit = plan.limit if plan is not None else ANTHROPIC_MAX_SEARCH_TOOLS
    for anthropic in views.catalogs_of("anthropic").values() if include_dialect_files else ():
        problems += (
            check_anthropic(anthropic, limit)
            if check_anthropic is not None
            else check_anthropic_catalog(anthropic, max_search_tools=limit)
        )
    if "gemini.interactions.json" in views.files:
        problems += check_interactions_catalog(views.files["gemini.interactions.json"])
    if views.deferred:
        problems += check_mcp_catalog(views.upfront["mcp"])
        problems += check_gemini_catalog(
            views.upfront["gemini"], max_tools=GEMINI_MAX_TOOLS if request_limits else None
        )
        problems += check_openai_catalog(
            views.upfront["openai"], max_tools=OPENAI_MAX_TOOLS if request_limits else None
        )
    return problems
