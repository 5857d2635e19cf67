"""The one way toolgen reads its own YAML files (the project file ``toolgen.yaml`` and intent maps):
YAML 1.2 through ruamel.yaml's round-trip loader, which keeps every node's line and column.

One reader matters because YAML 1.1 (PyYAML) reads the same text differently: ``no``, ``on``,
``off`` and ``yes`` are booleans there and strings in 1.2, ``0o17`` and ``1_000`` are a string and
an int there and the reverse in 1.2. An API named ``no`` that the build read with one reader was
not found by ``toolgen call no``, which read the file with the other. The build
(`toolgen.builder.project.load_project`), lint's location of its settings and the runtime's lookup of an API
by name (`toolgen.runtime.serving.loading.resolve_package`) all read through `read_yaml`.

`read_yaml(text)`: the round-trip tree (raises ruamel's errors on text that does not parse).
`plain_yaml(node)`: that tree as plain JSON values. `project_outputs(tree)`: API name -> ``out`` of
a project file, for the entries whose name and ``out`` are strings (the build refuses
any other). Pure; no IO.
"""

from __future__ import annotations

from typing import Any

__all__ = ["plain_yaml", "project_outputs", "read_yaml"]


def read_yaml(text: str) -> Any:
    """The ruamel round-trip tree of YAML 1.2 `text` (mappings and sequences know their line and
    column); raises ruamel.yaml's errors (several unrelated types) on text that does not parse."""
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(text)


def plain_yaml(node: Any) -> Any:
    """A ruamel round-trip tree as plain JSON values (str keys, str/int/float/bool/None leaves)."""
    if isinstance(node, dict):
        return {str(k): plain_yaml(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain_yaml(v) for v in node]
    value = plain_scalar(node)
    return str(node) if value is NOT_SCALAR else value


#: what `plain_scalar` answers for a node that is not a scalar
NOT_SCALAR = object()


def plain_scalar(node: Any) -> Any:
    """A ruamel scalar as its plain JSON value (str, int, float, bool or None; ruamel's subclasses
    made plain), or `NOT_SCALAR`."""
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return NOT_SCALAR


def project_outputs(data: Any) -> dict[str, str]:
    """API name -> its ``out`` folder (relative to the project file), from a project file's
    `read_yaml` tree (or its plain data): each ``apis`` entry whose ``name`` and ``out`` are
    strings once read as `plain_yaml` reads them (a date is its text), the first of a name kept;
    anything else (not a mapping, a number, a boolean) is left out, never coerced to text. Only the entries are visited, so aliases elsewhere are never expanded."""
    found: dict[str, str] = {}
    apis = data.get("apis") if isinstance(data, dict) else None
    for api in apis if isinstance(apis, list) else []:
        if not isinstance(api, dict):
            continue
        name, out = plain_yaml(api.get("name")), plain_yaml(api.get("out"))  # scalars: as the build sees them
        if isinstance(name, str) and isinstance(out, str):
            found.setdefault(name, out)
    return found
