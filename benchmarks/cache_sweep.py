"""The build cache's one guarantee, tried on real specs: a cached `toolgen build` writes exactly the
bytes (and prints exactly the findings, with the same exit code) of a `toolgen build --no-cache`,
after every edit of a random sequence a person makes.

    python benchmarks/cache_sweep.py [--spec PATH ...] [--yaml] [--edits N] [--seed S] [--tools K]

Each spec (default: Listen Notes, xkcd and Notion from ``../shared/specs/real``; give corpus specs with
``--spec``) is copied into a temporary project with ``toolgen init`` (its draft intent map cut to
``--tools`` intents, so a build stays short), twice: one project builds with the cache, the other with
``--no-cache``. ``--yaml`` writes the spec as YAML. With two or more ``--spec`` the specs are the APIs of
ONE project (building one API must never disturb another's entries). Then ``--edits`` random edits,
each applied to both projects, each followed by a build of both and a comparison of the exit codes,
the printed findings and every file of ``generated/``:

- intent map: a description, an effect, a permission, an approval, output fields and redactions,
  a hidden argument, a fixed argument, a toolset move, a tool's loading, an include group added or
  removed, a tool removed;
- intent map settings: ``defaults`` (timeouts, output depth and node budget, description lengths,
  approvals) and ``api`` (base URL, auth);
- spec: an operation's summary, a parameter's schema, a component schema many operations reach
  (a property added, its description), a component renamed with every ``$ref`` to it, a duplicate key
  added to the text, a line inserted at the top (every finding's line moves), its servers, the same
  document written another way (indentation, flow style), components and paths in another order, and
  the text put back to an earlier version (the old entries come back);
- toolgen.yaml (one step in seven or so): lint budgets and severities, Gemini's parameters, semantic search.

``--kinds`` keeps some kinds of API edits only (the method names without ``e_``). Now and then a
``toolgen build --check`` follows a good build (answered by the manifest, it must pass).

Every edit and every mismatch is printed; the exit code is 1 when any build pair differs. Needs
``../shared`` (or the specs given); runs every build in a fresh process, as a person does.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / ".." / "shared" / "specs" / "real"
DEFAULT = ("listennotes.json", "xkcd.json", "notion.json")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def _toolgen(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _load(text: str, as_yaml: bool) -> Any:
    return (
        yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if as_yaml else json.loads(text)
    )


def _dump(data: Any, as_yaml: bool) -> str:
    if as_yaml:
        return str(
            yaml.dump(
                data,
                Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                sort_keys=False,
                allow_unicode=True,
                width=100,
            )
        )
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path, item in (spec.get("paths") or {}).items():
        if isinstance(item, dict):
            for method in METHODS:
                if isinstance(item.get(method), dict):
                    found.append((path, method, item[method]))
    return found


def _components(spec: dict[str, Any]) -> dict[str, Any]:
    if "definitions" in spec:
        return spec["definitions"] if isinstance(spec["definitions"], dict) else {}
    schemas = (spec.get("components") or {}).get("schemas")
    return schemas if isinstance(schemas, dict) else {}


def _ref_counts(text: str, prefix: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in re.findall(re.escape(prefix) + r"([^\"'\s/]+)", text):
        counts[name] = counts.get(name, 0) + 1
    return counts


class Api:
    """One API of the sweep: its spec's text history and its intent map, written into both projects."""

    def __init__(self, source: Path, as_yaml: bool, tools: int, rng: random.Random, root: Path) -> None:
        self.as_yaml = as_yaml or source.suffix in (".yaml", ".yml")
        self.file = source.stem.replace(".", "_") + (".yaml" if self.as_yaml else ".json")
        raw = source.read_text(encoding="utf-8")
        self.text = (
            _dump(_load(raw, source.suffix in (".yaml", ".yml")), self.as_yaml)
            if as_yaml and source.suffix == ".json"
            else raw
        )
        self.history = [self.text]
        self.rng = rng
        (root / self.file).write_text(self.text, encoding="utf-8")
        code, out = _toolgen(["init", self.file], root, dict(os.environ))
        if code != 0:
            raise RuntimeError(f"toolgen init {self.file}: {out[-2000:]}")
        maps = sorted((root / "intent_maps").glob("*.yaml"))
        newest = max(maps, key=lambda p: p.stat().st_mtime_ns)
        self.intent_file = newest.relative_to(root).as_posix()
        self.intent: dict[str, Any] = yaml.safe_load(newest.read_text(encoding="utf-8"))
        names = sorted(self.intent.get("tools") or {})
        keep = set(rng.sample(names, min(tools, len(names))))
        self.intent["tools"] = {k: v for k, v in self.intent["tools"].items() if k in keep}
        self.project_entry = [
            e
            for e in yaml.safe_load((root / "toolgen.yaml").read_text(encoding="utf-8"))["apis"]
            if e.get("intent_map") == self.intent_file
        ]

    @property
    def spec(self) -> Any:
        return _load(self.text, self.as_yaml)

    def write(self, root: Path) -> None:
        (root / self.file).write_text(self.text, encoding="utf-8")
        (root / self.intent_file).write_text(
            yaml.safe_dump(self.intent, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )

    # --- edits: each returns a one-line description, or None when it does not apply -----------------

    def _tool(self) -> tuple[str, dict[str, Any]] | None:
        tools = self.intent.get("tools") or {}
        if not tools:
            return None
        name = self.rng.choice(sorted(tools))
        return name, tools[name]

    def _operation_of(self, intent: dict[str, Any]) -> dict[str, Any] | None:
        for path, method, op in _operations(self.spec):
            if op.get("operationId") == intent.get("operation") or f"{method.upper()} {path}" == intent.get(
                "operation"
            ):
                return op
        return None

    kinds: tuple[str, ...] = ()

    def edit(self) -> str | None:
        kinds = [k for k in dir(self) if k.startswith("e_") and (not self.kinds or k[2:] in self.kinds)]
        said: str | None = getattr(self, self.rng.choice(sorted(kinds)))()
        return said

    def e_description(self) -> str | None:
        picked = self._tool()
        if not picked:
            return None
        picked[1]["description"] = f"Edited {self.rng.randrange(10**6)}. Do not use it for anything else."
        return f"intent {picked[0]}: description"

    def e_effect(self) -> str | None:
        picked = self._tool()
        if not picked:
            return None
        effect = self.rng.choice(["read", "write", "destructive"])
        picked[1]["effect"] = effect
        if effect != "read":
            picked[1]["approval"] = "required"
        else:
            picked[1].pop("approval", None)
            picked[1].pop("idempotency", None)
        return f"intent {picked[0]}: effect {effect}"

    def e_permission(self) -> str | None:
        picked = self._tool()
        if not picked:
            return None
        picked[1]["permission"] = self.rng.choice(["x:read", ["x:read", "x:admin"], "y:write"])
        return f"intent {picked[0]}: permission"

    def e_approval(self) -> str | None:
        picked = self._tool()
        if not picked or picked[1].get("effect") == "read":
            return None
        picked[1]["approval"] = self.rng.choice(["never", "required"])
        return f"intent {picked[0]}: approval {picked[1]['approval']}"

    def _response_fields(self, op: dict[str, Any] | None) -> list[str]:
        if not op:
            return []
        text = json.dumps(op.get("responses") or {})
        spec = self.spec
        fields = set(re.findall(r'"properties": \{"([A-Za-z_][A-Za-z0-9_]*)"', text))
        for ref in re.findall(r'"#/(?:components/schemas|definitions)/([^"]+)"', text)[:3]:
            schema = _components(spec).get(ref)
            if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
                fields.update(k for k in schema["properties"] if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        return sorted(fields)

    def e_output(self) -> str | None:
        picked = self._tool()
        if not picked:
            return None
        fields = self._response_fields(self._operation_of(picked[1]))
        if not fields or self.rng.random() < 0.25:
            picked[1].pop("output", None)
            return f"intent {picked[0]}: output removed"
        chosen = self.rng.sample(fields, min(len(fields), self.rng.randint(1, 3)))
        output: dict[str, Any] = {"fields": chosen}
        if self.rng.random() < 0.5:
            output["redact"] = chosen[:1]
        picked[1]["output"] = output
        return f"intent {picked[0]}: output {output}"

    def _optional_parameter(self) -> tuple[tuple[str, dict[str, Any]], str] | None:
        """A tool picked at random and one optional query parameter of its operation, or None."""
        picked = self._tool()
        if not picked:
            return None
        op = self._operation_of(picked[1])
        names = [
            str(p["name"])
            for p in (op or {}).get("parameters") or []
            if isinstance(p, dict) and not p.get("required") and p.get("in") == "query" and "name" in p
        ]
        return (picked, self.rng.choice(names)) if names else None

    def e_hide(self) -> str | None:
        found = self._optional_parameter()
        if found is None:
            return None
        picked, name = found
        hidden = set(picked[1].get("hide") or [])
        hidden ^= {name}
        picked[1]["hide"] = sorted(hidden)
        if not hidden:
            picked[1].pop("hide")
        return f"intent {picked[0]}: hide toggles {name}"

    def e_fixed(self) -> str | None:
        found = self._optional_parameter()
        if found is None:
            return None
        picked, name = found
        fixed = dict(picked[1].get("fixed") or {})
        if name in fixed:
            del fixed[name]
        else:
            fixed[name] = self.rng.choice(["x", 1, True])
        picked[1]["fixed"] = fixed
        if not fixed:
            picked[1].pop("fixed")
        return f"intent {picked[0]}: fixed toggles {name}"

    def e_toolset(self) -> str | None:
        picked = self._tool()
        sets = sorted(self.intent.get("toolsets") or {})
        if not picked or not sets:
            return None
        picked[1]["toolset"] = self.rng.choice(sets)
        return f"intent {picked[0]}: toolset {picked[1]['toolset']}"

    def e_loading(self) -> str | None:
        if self.rng.random() < 0.5 and self.intent.get("toolsets"):
            name = self.rng.choice(sorted(self.intent["toolsets"]))
            loading = self.rng.choice(["eager", "deferred"])
            self.intent["toolsets"][name]["loading"] = loading
            return f"toolset {name}: {loading}"
        picked = self._tool()
        if not picked:
            return None
        picked[1]["loading"] = self.rng.choice(["eager", "deferred"])
        return f"intent {picked[0]}: loading {picked[1]['loading']}"

    def e_include(self) -> str | None:
        if self.intent.get("include") and self.rng.random() < 0.4:
            del self.intent["include"]
            return "include removed"
        tags = sorted(
            {
                t
                for _, _, op in _operations(self.spec)
                for t in (op.get("tags") or [])[:1]
                if isinstance(t, str)
            }
        )
        match = (
            f"tag:{self.rng.choice(tags)}"
            if tags and self.rng.random() < 0.7
            else self.rng.choice(["get*", "list*", "GET /*", "*"])
        )
        group: dict[str, Any] = {"match": match, "toolset": self.rng.choice(["from_tag", "from_path"])}
        if self.rng.random() < 0.3:
            group["exclude"] = ["delete*"]
        self.intent["include"] = [group]
        return f"include {group}"

    def e_drop_tool(self) -> str | None:
        picked = self._tool()
        if not picked or len(self.intent["tools"]) < 3:
            return None
        del self.intent["tools"][picked[0]]
        return f"intent {picked[0]}: removed"

    def e_defaults(self) -> str | None:
        defaults = self.intent.setdefault("defaults", {})
        key, value = self.rng.choice(
            [
                ("timeout_ms", self.rng.choice([1000, 5000, 30000])),
                ("output_depth", self.rng.randint(1, 5)),
                ("output_schema_nodes", self.rng.choice([50, 400, 2000])),
                ("description_max_chars", self.rng.choice([120, 1000])),
                ("argument_description_max_chars", self.rng.choice([40, 200])),
                ("member_descriptions", self.rng.choice([True, False])),
                ("output_descriptions", self.rng.choice([True, False])),
                ("approval_write", self.rng.choice(["never", "required"])),
                ("preview_ttl_s", self.rng.choice([60, 900])),
            ]
        )
        defaults[key] = value
        return f"defaults {key}: {value}"

    def e_api(self) -> str | None:
        api = self.intent.setdefault("api", {})
        if self.rng.random() < 0.5:
            api["base_url"] = self.rng.choice(["https://a.example.com/v1", "https://b.example.com"])
            return f"api base_url {api['base_url']}"
        if "auth" in api:
            del api["auth"]
            return "api auth removed"
        api["auth"] = {"token": {"secret": "SWEEP_TOKEN", "kind": self.rng.choice(["bearer", "basic"])}}
        return f"api auth {api['auth']}"

    def e_servers(self) -> str | None:
        def change(spec: dict[str, Any]) -> str | None:
            if "swagger" in spec:
                spec["host"] = self.rng.choice(["a.example.com", "b.example.com"])
                return f"spec host {spec['host']}"
            spec["servers"] = [
                {"url": self.rng.choice(["https://a.example.com/v1", "https://b.example.com"])}
            ]
            return f"spec servers {spec['servers'][0]['url']}"

        return self._spec_edit(change)

    # spec edits: on the parsed document, written back in the spec's format
    def _spec_edit(self, change: Any) -> str | None:
        spec = self.spec
        said = change(spec)
        if said is None:
            return None
        self.text = _dump(spec, self.as_yaml)
        self.history.append(self.text)
        return str(said)

    def e_summary(self) -> str | None:
        def change(spec: dict[str, Any]) -> str | None:
            ops = _operations(spec)
            if not ops:
                return None
            path, method, op = self.rng.choice(ops)
            op["summary"] = f"{op.get('summary') or 'Do it'} (edited {self.rng.randrange(1000)})"
            return f"spec {method.upper()} {path}: summary"

        return self._spec_edit(change)

    def e_parameter_schema(self) -> str | None:
        def change(spec: dict[str, Any]) -> str | None:
            candidates = [
                (path, method, p)
                for path, method, op in _operations(spec)
                for p in op.get("parameters") or []
                if isinstance(p, dict) and "name" in p
            ]
            if not candidates:
                return None
            path, method, p = self.rng.choice(candidates)
            schema: dict[str, Any] = p["schema"] if isinstance(p.get("schema"), dict) else p
            how = self.rng.choice(["enum", "maxLength", "type", "description"])
            if how == "enum":
                schema["enum"] = ["a", "b", "c"]
                schema["type"] = "string"
            elif how == "maxLength":
                schema["maxLength"] = self.rng.randint(1, 64)
            elif how == "type":
                schema["type"] = self.rng.choice(["integer", "string", "boolean"])
                schema.pop("enum", None)
                schema.pop("format", None)
            else:
                p["description"] = f"Edited parameter {self.rng.randrange(1000)}."
            return f"spec {method.upper()} {path} parameter {p['name']}: {how}"

        return self._spec_edit(change)

    def _popular(self, spec: dict[str, Any]) -> str | None:
        prefix = "#/definitions/" if "definitions" in spec else "#/components/schemas/"
        counts = _ref_counts(json.dumps(spec), prefix)
        names = [n for n, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:8] if n in _components(spec)]
        return self.rng.choice(names) if names else None

    def e_component(self) -> str | None:
        def change(spec: dict[str, Any]) -> str | None:
            name = self._popular(spec)
            if name is None:
                return None
            schema = _components(spec)[name]
            if not isinstance(schema, dict):
                return None
            if self.rng.random() < 0.5:
                schema["description"] = f"Edited component {self.rng.randrange(1000)}."
                return f"spec component {name}: description"
            props = schema.setdefault("properties", {})
            if not isinstance(props, dict):
                return None
            props[f"added_{self.rng.randrange(100)}"] = {"type": "string", "maxLength": 10}
            return f"spec component {name}: property added"

        return self._spec_edit(change)

    def e_rename_component(self) -> str | None:
        spec = self.spec
        name = self._popular(spec)
        if name is None:
            return None
        prefix = "#/definitions/" if "definitions" in spec else "#/components/schemas/"
        fresh = f"{name}Renamed{self.rng.randrange(100)}"
        components = _components(spec)
        if fresh in components:
            return None
        renamed = {(fresh if k == name else k): v for k, v in components.items()}
        components.clear()
        components.update(renamed)
        text = json.dumps(spec).replace(json.dumps(prefix + name), json.dumps(prefix + fresh))
        self.text = _dump(json.loads(text), self.as_yaml)
        self.history.append(self.text)
        return f"spec component {name} renamed {fresh}"

    def e_duplicate_key(self) -> str | None:
        if self.as_yaml:
            match = re.search(r"^(\s*)summary: .*$", self.text, re.MULTILINE)
            if not match:
                return None
            line = match.group(0)
            self.text = self.text.replace(line, f"{line}\n{match.group(1)}summary: Duplicated", 1)
        else:
            match = re.search(r'"summary": "', self.text)
            if not match:
                return None
            self.text = self.text[: match.start()] + '"summary": "Duplicated", ' + self.text[match.start() :]
        self.history.append(self.text)
        return "spec: duplicate key summary"

    def e_top_line(self) -> str | None:
        self.text = ("# shifted\n" if self.as_yaml else "\n") + self.text
        self.history.append(self.text)
        return "spec: a line inserted at the top"

    def e_reformat(self) -> str | None:
        if self.as_yaml:
            data = _load(self.text, True)
            self.text = str(
                yaml.dump(
                    data,
                    Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                    sort_keys=False,
                    allow_unicode=True,
                    width=self.rng.choice([60, 100, 10**6]),
                    default_flow_style=self.rng.choice([False, None]),
                )
            )
        else:
            self.text = json.dumps(
                json.loads(self.text), indent=self.rng.choice([None, 1, 4]), ensure_ascii=False
            )
        self.history.append(self.text)
        return "spec: the same document written another way"

    def e_reorder(self) -> str | None:
        def change(spec: dict[str, Any]) -> str | None:
            components = _components(spec)
            keys = list(components)
            if len(keys) < 2:
                return None
            self.rng.shuffle(keys)
            reordered = {k: components[k] for k in keys}
            components.clear()
            components.update(reordered)
            paths = spec.get("paths") or {}
            order = list(paths)
            self.rng.shuffle(order)
            spec["paths"] = {k: paths[k] for k in order}
            return "spec: components and paths in another order"

        return self._spec_edit(change)

    def e_revert(self) -> str | None:
        if len(self.history) < 2:
            return None
        back = self.rng.randrange(len(self.history) - 1)
        self.text = self.history[back]
        self.history.append(self.text)
        return f"spec: back to version {back}"


def _project_edit(project: dict[str, Any], rng: random.Random) -> str:
    """One edit of toolgen.yaml's settings: lint budgets and severities, dialect and search options."""
    what = rng.choice(["budget", "severity", "gemini", "search", "reset"])
    if what == "budget":
        project.setdefault("lint", {})["large_output_tokens"] = rng.choice([500, 1500, 4000])
    elif what == "severity":
        project.setdefault("lint", {}).setdefault("severity", {})[
            rng.choice(
                [
                    "output-unprojected-large",
                    "pagination-missing",
                    "toolset-near-synonym",
                    "effect-read-names-change",
                ]
            )
        ] = rng.choice(["off", "info", "warning"])
    elif what == "gemini":
        project["dialects"] = {"gemini": {"parameters": rng.choice(["schema", "json_schema"])}}
    elif what == "search":
        project["search"] = {"semantic": rng.choice(["lsa", "none"])}
    else:
        for key in ("lint", "dialects", "search"):
            project.pop(key, None)
    return f"toolgen.yaml {what}: " + json.dumps({k: v for k, v in project.items() if k != "apis"})


def _build_pair(
    cached: Path, cold: Path, env: dict[str, str], one: str | None, step: str, said: str
) -> tuple[bool, int, str]:
    """`toolgen build` (of API `one`, or the whole project) in `cached` with the cache and in `cold`
    without: whether exit code, printed findings and generated files are the same, the cached exit
    code and output. A difference is printed, and `cold`'s files are copied over `cached`'s so the
    sweep goes on from one place."""
    start = time.perf_counter()
    args = ["build", "-q"] + ([one] if one else [])
    code, out = _toolgen(args, cached, env)
    cold_code, cold_out = _toolgen([*args, "--no-cache"], cold, env)
    a, b = _tree(cached / "generated"), _tree(cold / "generated")
    same = code == cold_code and out == cold_out and a == b
    print(
        f"{step} {'ok  ' if same else 'DIFF'} exit {code} {len(a):3d} files {time.perf_counter() - start:5.1f}s "
        f"{'(' + one + ') ' if one else ''}{said}",
        flush=True,
    )
    if not same:
        if code != cold_code or out != cold_out:
            print(f"    cached exit {code}: {out[-1500:]}\n    cold exit {cold_code}: {cold_out[-1500:]}")
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                print(f"    differs: {name}")
        shutil.rmtree(cached / "generated", ignore_errors=True)
        if (cold / "generated").exists():
            shutil.copytree(cold / "generated", cached / "generated")
    return same, code, out


def sweep(
    specs: list[Path],
    as_yaml: bool,
    edits: int,
    seed: int,
    tools: int,
    kinds: tuple[str, ...] = (),
    project_edits: bool = True,
) -> int:
    rng = random.Random(seed)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="cache-sweep-") as tmp:
        work = Path(tmp)
        cached, cold = work / "cached", work / "cold"
        cached.mkdir()
        env = dict(
            os.environ,
            TOOLGEN_CACHE="1",
            TOOLGEN_CACHE_DIR=str(work / "cache"),
            XDG_CACHE_HOME=str(work / "home"),
        )
        apis: list[Api] = []
        entries: list[dict[str, Any]] = []
        for source in specs:
            api = Api(source, as_yaml, tools, rng, cached)
            api.kinds = kinds
            apis.append(api)
            entries.extend(e for e in api.project_entry if e not in entries)
        project = {"toolgen": 1, "apis": entries}
        shutil.copytree(cached, cold)
        for root in (cached, cold):
            (root / "toolgen.yaml").write_text(yaml.safe_dump(project, sort_keys=False), encoding="utf-8")
            for api in apis:
                api.write(root)
        step, good = 0, [(api.text, copy.deepcopy(api.intent)) for api in apis]
        while step <= edits:
            said = "initial build"
            if step and project_edits and rng.random() < 0.15:
                said = _project_edit(project, rng)
                for root in (cached, cold):
                    (root / "toolgen.yaml").write_text(
                        yaml.safe_dump(project, sort_keys=False), encoding="utf-8"
                    )
            elif step:
                api = rng.choice(apis)
                edit = api.edit()
                while edit is None:  # an edit that does not apply to this spec: another one
                    edit = api.edit()
                said = f"{api.file}: {edit}"
                for root in (cached, cold):
                    api.write(root)
            one = rng.choice(apis).project_entry[0]["name"] if len(apis) > 1 and rng.random() < 0.3 else None
            same, code, out = _build_pair(cached, cold, env, one, f"[{step:3d}]", said)
            failures += not same
            if code == 0 and one is None:
                good = [(api.text, copy.deepcopy(api.intent)) for api in apis]
            elif code != 0:  # an edit the build refuses: mostly taken back to the last good state (the
                # refused build is compared all the same), so the sweep goes on from a good state
                print(
                    "    refused: " + " | ".join(line for line in out.splitlines() if "error" in line)[:300]
                )
                if rng.random() < 0.85:
                    for api, (text, intent) in zip(apis, good, strict=True):
                        api.text, api.intent = text, copy.deepcopy(intent)
                        for root in (cached, cold):
                            api.write(root)
            if code == 0 and one is None and rng.random() < 0.3:  # a build of one API leaves the others stale
                check, said_check = _toolgen(["build", "--check", "-q"], cached, env)
                if check != 0:
                    failures += 1
                    print(f"    DIFF: --check after a good build exits {check}: {said_check[-800:]}")
            step += 1
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", action="append", type=Path, help="a spec (repeat: APIs of one project)")
    parser.add_argument("--yaml", action="store_true", help="write JSON specs as YAML")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tools", type=int, default=25, help="intents kept from the draft")
    parser.add_argument(
        "--kinds", default="", help="comma-separated edit kinds only (e.g. defaults,api,summary)"
    )
    args = parser.parse_args()
    specs = args.spec or [REAL / name for name in DEFAULT[:1]]
    missing = [s for s in specs if not s.is_file()]
    if missing:
        print(f"no such spec: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    failures = sweep(specs, args.yaml, args.edits, args.seed, args.tools, kinds)
    print(f"{failures} build pair(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
