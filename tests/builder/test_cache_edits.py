"""The build cache's guarantee under the edits a person makes between builds, as a hypothesis state
machine over a small hand-made spec: after every step a cached `toolgen build` of a project of two
APIs writes the bytes, prints the findings and exits with the code of `toolgen build --no-cache`.

The steps: in the intent map, a tool's output fields and redactions, a fixed argument, a permission,
an approval, a toolset move, the toolset's loading, the include group's pattern; in the spec, a
component renamed with every ``$ref`` to it, a duplicate key, blank lines at the top (every finding's
line moves), and a return to an earlier text of both inputs (the old entries come back); and the
edits of `tests.builder.test_cache` (summaries, descriptions, effects, hidden arguments, operations and
properties added). Each edit goes to one of the two APIs; a build refused by an error is compared
like the others and the state goes back to the last one that built. The second API's intent map is
written in toolgen's own layout (YAML blocks, as `toolgen init` writes it), which the build reads
tool by tool (`toolgen.compile.intent_blocks`); the first's is JSON, read whole."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.builder.test_cache import EFFECTS, OPERATIONS, _apply, _fresh_state, _intent_map, _spec, _tree
from tests.support.build import REAL, REPO, run
from tests.support.profiles import examples

APIS = ("left", "right")
_text = st.text(st.sampled_from("abcdefgh XYZ.é"), min_size=1, max_size=12).map(lambda s: s.strip() or "x")


def _fresh() -> dict[str, Any]:
    return {
        **_fresh_state(),
        "item": "Item",
        "output": {},
        "fixed": False,
        "permission": {},
        "never": set(),
        "toolset": set(),
        "loading": None,
        "match": "tag:tree",
        "top": 0,
        "dup": False,
        "layout": False,
    }


def _texts(state: dict[str, Any]) -> tuple[str, str]:
    """The spec's and the intent map's text for `state` (`tests.builder.test_cache` gives the base)."""
    spec = _spec(state)
    if state["item"] != "Item":
        schemas = spec["components"]["schemas"]
        spec["components"]["schemas"] = {(state["item"] if k == "Item" else k): v for k, v in schemas.items()}
    text = json.dumps(spec, indent=2).replace(
        '"#/components/schemas/Item"', json.dumps(f"#/components/schemas/{state['item']}")
    )
    if state["dup"]:  # a key written twice: the last one counts, and a finding names the first
        text = text.replace('"title": "Items"', '"title": "Things", "title": "Items"', 1)
    text = "\n" * state["top"] + text
    intent = _intent_map(state)
    tools = intent["tools"]
    for i, fields in state["output"].items():
        tools[f"tool_{OPERATIONS[i].lower()}"]["output"] = {
            "fields": list(fields),
            "redact": list(fields[:1]),
        }
    if state["fixed"]:
        tools["tool_getitem"]["fixed"] = {"fields": "name"}
        tools["tool_getitem"].pop("hide", None)
    for i, scope in state["permission"].items():
        tools[f"tool_{OPERATIONS[i].lower()}"]["permission"] = scope
    for i in state["never"]:
        if state["effects"][i] != "read":
            tools[f"tool_{OPERATIONS[i].lower()}"]["approval"] = "never"
    for i in state["toolset"]:
        tools[f"tool_{OPERATIONS[i].lower()}"]["toolset"] = "trees"
    if state["loading"]:
        intent["toolsets"]["trees"]["loading"] = state["loading"]
    intent["include"][0]["match"] = state["match"]
    if state["layout"]:  # toolgen's own layout (`toolgen init`'s): read tool by tool, each block kept
        import yaml

        return text, yaml.safe_dump(intent, sort_keys=False, indent=2, allow_unicode=True)
    return text, json.dumps(intent, indent=2)


class CachedBuilds(RuleBasedStateMachine):
    """Two copies of a project of two APIs, one built with the cache and one without."""

    def __init__(self) -> None:
        super().__init__()
        self.states = {name: _fresh() for name in APIS}
        self.good = copy.deepcopy(self.states)
        self.history: list[dict[str, Any]] = []

    @initialize(folder=st.just(None))
    def start(self, folder: None) -> None:
        self.root = FOLDER.mktemp("project")
        self.cached, self.cold = self.root / "cached", self.root / "cold"
        for project in (self.cached, self.cold):
            project.mkdir()
            (project / "toolgen.yaml").write_text(
                "toolgen: 1\napis:\n"
                + "".join(f"  - name: {n}\n    intent_map: {n}/items.yaml\n    out: out/{n}\n" for n in APIS),
                encoding="utf-8",
            )
        self.states["right"]["tree"] = "List the trees."  # two specs, not one text
        self.states["right"]["layout"] = True  # an intent map in YAML blocks, as `toolgen init` writes it
        self._write()
        self._compare()

    def _write(self) -> None:
        for name, state in self.states.items():
            spec, intent = _texts(state)
            for project in (self.cached, self.cold):
                (project / name).mkdir(exist_ok=True)
                (project / name / "items.json").write_text(spec, encoding="utf-8")
                (project / name / "items.yaml").write_text(intent, encoding="utf-8")

    def _build(self, project: Path, *flags: str) -> tuple[int, str]:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(project)
            result = run("build", "-q", *flags)
        return result.exit_code, result.output

    def _compare(self) -> None:
        cached, cold = self._build(self.cached), self._build(self.cold, "--no-cache")
        assert cached == cold
        assert _tree(self.cached / "out") == _tree(self.cold / "out")
        if cached[0] == 0:
            assert self._build(self.cached, "--check")[0] == 0  # answered by the manifest
            self.good = copy.deepcopy(self.states)
            self.history.append(copy.deepcopy(self.states))
        else:  # refused: compared, then back to the last state that built
            self.states = copy.deepcopy(self.good)
            self._write()

    def _edit(self, api: str, change: Any) -> None:
        change(self.states[api])
        self._write()
        self._compare()

    @rule(
        api=st.sampled_from(APIS),
        edit=st.one_of(
            st.tuples(st.just("summary"), st.integers(0, 3), _text),
            st.tuples(st.just("description"), st.integers(0, 3), _text),
            st.tuples(st.just("effect"), st.integers(0, 3), st.sampled_from(EFFECTS)),
            st.tuples(st.just("hide"), st.sampled_from(["limit", "status", "cursor", "fields"])),
            st.tuples(st.just("operation"), st.integers(0, 2)),
            st.tuples(st.just("property"), st.sampled_from(["a", "b"])),
            st.tuples(st.just("tree"), _text),
        ),
    )
    def base_edit(self, api: str, edit: tuple[Any, ...]) -> None:
        self._edit(api, lambda s: _apply(s, edit))

    @rule(
        api=st.sampled_from(APIS),
        tool=st.sampled_from([0, 2]),
        fields=st.sampled_from([(), ("name",), ("name", "color"), ("color", "size.w")]),
    )
    def output(self, api: str, tool: int, fields: tuple[str, ...]) -> None:
        self._edit(
            api, lambda s: s["output"].update({tool: fields}) if fields else s["output"].pop(tool, None)
        )

    @rule(api=st.sampled_from(APIS))
    def fixed(self, api: str) -> None:
        self._edit(api, lambda s: s.update(fixed=not s["fixed"]))

    @rule(
        api=st.sampled_from(APIS),
        tool=st.integers(0, 3),
        scope=st.sampled_from(["items:read", "items:admin"]),
    )
    def permission(self, api: str, tool: int, scope: str) -> None:
        self._edit(api, lambda s: s["permission"].update({tool: scope}))

    @rule(api=st.sampled_from(APIS), tool=st.integers(1, 3))
    def approval(self, api: str, tool: int) -> None:
        self._edit(api, lambda s: s["never"].symmetric_difference_update({tool}))

    @rule(api=st.sampled_from(APIS), tool=st.integers(0, 3))
    def move(self, api: str, tool: int) -> None:
        self._edit(api, lambda s: s["toolset"].symmetric_difference_update({tool}))

    @rule(api=st.sampled_from(APIS), loading=st.sampled_from([None, "eager", "deferred"]))
    def loading(self, api: str, loading: str | None) -> None:
        self._edit(api, lambda s: s.update(loading=loading))

    @rule(api=st.sampled_from(APIS), match=st.sampled_from(["tag:tree", "list*", "GET /*", "tag:extra"]))
    def include(self, api: str, match: str) -> None:
        self._edit(api, lambda s: s.update(match=match))

    @rule(api=st.sampled_from(APIS), name=st.sampled_from(["Item", "Thing", "Item2"]))
    def rename(self, api: str, name: str) -> None:
        self._edit(api, lambda s: s.update(item=name))

    @rule(api=st.sampled_from(APIS))
    def duplicate(self, api: str) -> None:
        self._edit(api, lambda s: s.update(dup=not s["dup"]))

    @rule(api=st.sampled_from(APIS), lines=st.integers(0, 3))
    def top(self, api: str, lines: int) -> None:
        self._edit(api, lambda s: s.update(top=lines))

    @rule(back=st.integers(0, 20))
    def revert(self, back: int) -> None:
        if self.history:
            self.states = copy.deepcopy(self.history[max(0, len(self.history) - 1 - back)])
            self._write()
            self._compare()

    @invariant()
    def nothing_left_over(self) -> None:
        assert not list(self.root.glob("cached/out/**/*.tmp")) if hasattr(self, "root") else True


FOLDER: Any = None


@pytest.mark.long
def test_cached_builds_of_a_two_api_project_equal_builds_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    global FOLDER
    FOLDER = tmp_path_factory
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("TOOLGEN_CACHE_DIR", raising=False)  # each project's own .toolgen/cache
    machine = CachedBuilds.TestCase
    machine.settings = settings(
        max_examples=examples(4),
        stateful_step_count=8,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    machine().runTest()


def _sweep(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), str(REPO)])}
    return subprocess.run(
        [sys.executable, "benchmarks/cache_sweep.py", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=1200,
        check=False,
    )


@pytest.mark.long
def test_the_real_spec_sweep_runs_on_a_two_api_project_of_the_repository_specs() -> None:
    """`benchmarks/cache_sweep.py` (the same comparison over real specs, in fresh processes) runs end
    to end: the tickets spec as YAML and a slice of Stripe's as the two APIs of one project."""
    proc = _sweep(
        "--spec",
        "specs/tickets.yaml",
        "--spec",
        "specs/stripe.slice.json",
        "--edits",
        "4",
        "--seed",
        "3",
        "--tools",
        "6",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "0 build pair(s) differ" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "specs", [("listennotes.json",), ("notion.json", "blockfrost.yaml"), ("stripe.json",)]
)
def test_cached_builds_of_real_specs_equal_builds_without_the_cache(specs: tuple[str, ...]) -> None:
    paths = [REAL / name for name in specs]
    if not all(p.is_file() for p in paths):
        pytest.skip("the shared real specs are not here")
    proc = _sweep(*(a for p in paths for a in ("--spec", str(p))), "--edits", "12", "--seed", "1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
