"""A spec N times as large as a real one, for scaling measurements.

    python benchmarks/replicate.py SPEC N OUT.json

Every path of SPEC is repeated N times under a prefix (`/r2/...`, `/r3/...`; the first copy keeps
its paths) with operationIds suffixed (`_r2`), while `components` stay shared, as in one large API
whose operations reuse one schema vocabulary (Microsoft Graph: 11,000 operations over one set of
schemas, many of them mutually recursive). The copies are the same operations, so the build's work
per operation is the spec's own: a curve over N shows how cost grows with operations alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def replicate(doc: dict[str, Any], n: int) -> dict[str, Any]:
    """`doc` with its paths repeated `n` times (see the module docstring). `doc` is not changed."""
    paths: dict[str, Any] = {}
    for k in range(1, n + 1):
        for path, item in doc.get("paths", {}).items():
            copy = json.loads(json.dumps(item))
            if k > 1:
                for method, op in copy.items():
                    if method in _METHODS and isinstance(op, dict) and isinstance(op.get("operationId"), str):
                        op["operationId"] += f"_r{k}"
            paths[path if k == 1 else f"/r{k}{path}"] = copy
    return {**doc, "paths": paths}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.spec.suffix in (".yaml", ".yml"):
        from ruamel.yaml import YAML

        doc = YAML(typ="safe").load(args.spec.read_text(encoding="utf-8"))
    else:
        doc = json.loads(args.spec.read_text(encoding="utf-8"))
    args.out.write_text(json.dumps(replicate(doc, args.n)), encoding="utf-8")
    ops = sum(1 for item in replicate(doc, 1).get("paths", {}).values() for m in item if m in _METHODS)
    print(f"{args.out}: {ops * args.n:,} operations", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
