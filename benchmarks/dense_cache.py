"""What the dense option's build costs with its embeddings in the build cache (`toolgen.builder.dense_cache`).

    python benchmarks/dense_cache.py [--spec PATH] [--model M.onnx --tokenizer tokenizer.json] [--write]

Default spec: GitHub's REST API from ``../shared/specs/real/github-api.github.com.json`` (1,223
operations), built with an include-everything intent map (one toolset per tag, and one explicit
intent with a description, as in ``benchmarks/incremental.py``) from a project file (toolgen.yaml)
with ``search: {semantic: onnx, ...}``. Every step is ``toolgen build`` in a fresh process; a row
gives its wall seconds, its CPU seconds (the process and its children) and the one-minute load
average when it started (the machine may be shared):

1. ``cold, no cache``: ``toolgen build --no-cache`` (every document embedded);
2. ``cold, empty cache``: the first build, which fills the cache;
3. ``rebuild, one description edited``: the explicit intent's description changed in the intent map
   (one document's text changes: one embedding);
4. ``rebuild, nothing changed`` (``--check`` would answer from the manifest; this is a build).

After step 3 the folder's ``search.vectors`` is compared byte for byte with a ``--no-cache`` build of
the same inputs (the script stops if they differ). The rows are measured for the lexical index alone
(no ``search:`` block), for the tests' tiny model (`tests.support.dense_model`, written here over the
documents' words), and, given ``--model`` and ``--tokenizer``, for that model (e.g.
all-MiniLM-L6-v2 exported to ONNX: never downloaded by this script). ``--write`` appends the tables
to ``benchmarks/results/search_dense.md`` under "The build cache".
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = REPO / ".." / "shared" / "specs" / "real" / "github-api.github.com.json"
RESULTS = REPO / "benchmarks" / "results" / "search_dense.md"
STEPS = ("cold, no cache", "cold, empty cache", "rebuild, one description edited", "rebuild, nothing changed")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _toolgen(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """One `toolgen` run in a fresh process: wall and CPU seconds (its children included), load."""
    load = os.getloadavg()[0]
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=7200,
    )
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"toolgen {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": round(load, 1)}


def _last_get(spec: dict[str, Any]) -> str:
    found = ""
    for path, item in spec["paths"].items():
        if isinstance(item.get("get"), dict):
            found = item["get"].get("operationId") or f"GET {path}"
    return found


def _intent_map(operation: str, description: str) -> str:
    return (
        "toolgen: 1\nspec: spec.json\napi: {name: github}\n"
        f"tools:\n  bench_tool:\n    operation: {json.dumps(operation)}\n    effect: read\n"
        f"    description: {json.dumps(description)}\n"
        'include: [{match: "*", toolset: from_tag}]\n'
    )


def _project(search: str) -> str:
    return f"toolgen: 1\napis:\n  - name: github\n    intent_map: api.yaml\n    out: gen\n{search}"


def _search(model: Path, tokenizer: Path) -> str:
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (model, tokenizer)}
    return (
        f"search:\n  semantic: onnx\n  model: {json.dumps(str(model))}\n  model_sha256: {digest[model]}\n"
        f"  tokenizer: {json.dumps(str(tokenizer))}\n  tokenizer_sha256: {digest[tokenizer]}\n"
    )


def _tiny_model(folder: Path) -> tuple[Path, Path]:
    """The tests' tiny model over the words of the documents a lexical build of `folder` indexes."""
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "generator"))
    from tests.support.dense_model import write_model, write_tokenizer

    from toolgen.search.dense_sidecar import dense_texts

    documents = json.loads((folder / "gen" / "search.json").read_text(encoding="utf-8"))["documents"]
    words = sorted({w for text in dense_texts(documents) for w in text.replace(".", " ").split()})
    vocab = write_tokenizer(folder / "tiny-tokenizer.json", words)
    write_model(folder / "tiny.onnx", vocab)
    return folder / "tiny.onnx", folder / "tiny-tokenizer.json"


def run(
    spec_file: Path, models: dict[str, tuple[Path, Path] | None]
) -> dict[str, dict[str, dict[str, float]]]:
    """The steps of the module docstring for each model (None: the lexical index alone)."""
    compileall.compile_dir(REPO / "generator" / "toolgen", quiet=1)
    table: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
        (tmp / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False), encoding="utf-8")
        explicit = _last_get(spec)
        env = {
            **os.environ,
            "TOOLGEN_CACHE": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")]),
        }
        for label, files in models.items():
            if files is None and label != "lexical":  # the tiny model, written over a lexical build's words
                (tmp / "api.yaml").write_text(_intent_map(explicit, "Read one thing."), encoding="utf-8")
                (tmp / "toolgen.yaml").write_text(_project(""), encoding="utf-8")
                _toolgen(["build", "-q", "--no-cache"], env, tmp)
                files = _tiny_model(tmp)
            env["TOOLGEN_CACHE_DIR"] = str(tmp / f"cache-{len(table)}")
            (tmp / "toolgen.yaml").write_text(_project("" if files is None else _search(*files)), "utf-8")
            (tmp / "api.yaml").write_text(_intent_map(explicit, "Read one thing."), encoding="utf-8")
            rows = {STEPS[0]: _toolgen(["build", "-q", "--no-cache"], env, tmp)}
            rows[STEPS[1]] = _toolgen(["build", "-q"], env, tmp)
            (tmp / "api.yaml").write_text(_intent_map(explicit, "Read one thing, edited."), encoding="utf-8")
            rows[STEPS[2]] = _toolgen(["build", "-q"], env, tmp)
            if files is not None:
                cached = (tmp / "gen" / "search.vectors").read_bytes()
                _toolgen(["build", "-q", "--no-cache"], env, tmp)
                if (tmp / "gen" / "search.vectors").read_bytes() != cached:
                    raise SystemExit(
                        f"{label}: the cached rebuild's search.vectors differs from --no-cache's"
                    )
            rows[STEPS[3]] = _toolgen(["build", "-q"], env, tmp)
            table[label] = rows
            print(label, json.dumps(rows), flush=True)
    return table


def render(table: dict[str, dict[str, dict[str, float]]], spec: Path) -> str:
    labels = list(table)
    lines = [
        (
            f"`python benchmarks/dense_cache.py` on `{spec.name}` (include-everything), "
            f"{time.strftime('%Y-%m-%d')}, {platform.python_implementation()} {platform.python_version()}; "
            "each cell CPU s (wall s, load average at the start):"
        ),
        "",
        "| step | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    for step in STEPS:
        cells = [
            f"{table[m][step]['cpu']} ({table[m][step]['wall']}, {table[m][step]['load']})" for m in labels
        ]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    parser.add_argument("--model", type=Path, help="an ONNX sentence-embedding model (never downloaded)")
    parser.add_argument("--tokenizer", type=Path, help="its tokenizer.json")
    parser.add_argument("--write", action="store_true", help=f"append the table to {RESULTS.name}")
    args = parser.parse_args(argv)
    models: dict[str, tuple[Path, Path] | None] = {"lexical": None, "tiny model": None}
    if args.model and args.tokenizer:
        models[args.model.stem] = (args.model.resolve(), args.tokenizer.resolve())
    table = run(args.spec, models)
    text = render(table, args.spec)
    print(text)
    if args.write:
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
