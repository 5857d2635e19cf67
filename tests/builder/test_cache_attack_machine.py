"""The build cache under edits that change a tool through another one, as a hypothesis state machine:
after every step a cached `toolgen build` writes the bytes, prints the findings and exits with the
code of `toolgen build --no-cache` (`tests.builder.test_cache_attack.Twins`).

The edit vocabulary is the one `tests.builder.test_cache_edits` lacks: which operations have an
explicit intent (the rest are taken by an include group, whose inferred names avoid the names taken
before: `Ctx.names`), an explicit intent named as the include group would name another operation (a
collision suffix), an authored description (routing notes are written only on the others, naming
near neighbours), the include group's toolset (`from_tag`, `from_path`, a declared one) and loading,
a second include group before or after the first, top-level `examples:`, a composite over two
operations, the depth budget under a component two operations reach at different depths; in the
spec, a tag's description (the toolsets made from tags), a shared component's description, an OAuth
scope renamed (permissions drafted from it), a `$ref` retargeted to a copy of its component,
``info.title`` and an ``x-`` extension at the top."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from tests.builder.test_cache_attack import Twins
from tests.support.profiles import examples

#: operationId -> (method, path, tag)
OPERATIONS = {
    "listWidgets": ("get", "/widgets", "widgets"),
    "createWidget": ("post", "/widgets", "widgets"),
    "getWidget": ("get", "/widgets/{id}", "widgets"),
    "updateWidget": ("patch", "/widgets/{id}", "widgets"),
    "deleteWidget": ("delete", "/widgets/{id}", "widgets"),
    "listGadgets": ("get", "/gadgets", "gadgets"),
    "createGadget": ("post", "/gadgets", "gadgets"),
    "getGadget": ("get", "/gadgets/{id}", "gadgets"),
}
IDS = tuple(OPERATIONS)


def _fresh() -> dict[str, Any]:
    return {
        "explicit": {"getWidget": None, "createWidget": None},  # operationId -> description or None
        "clash": False,  # an explicit intent named `get_gadget` on listGadgets
        "toolset": "from_tag",
        "loading": None,
        "second": None,  # a second include group: "before" or "after" the first
        "examples": False,
        "composite": False,
        "depth": None,
        "tag": "Widgets and their parts.",
        "widget": "A widget.",
        "scope": "widgets:write",
        "retarget": False,
        "title": "Widgets",
        "ext": False,
    }


def _spec(state: dict[str, Any]) -> dict[str, Any]:
    widget = {
        "type": "object",
        "description": state["widget"],
        "properties": {
            "id": {"type": "string", "readOnly": True},
            "name": {"type": "string", "example": "bolt"},
            "size": {"type": "object", "properties": {"w": {"type": "integer"}, "h": {"type": "integer"}}},
        },
        "required": ["name"],
    }
    gadget_ref = "#/components/schemas/Widget2" if state["retarget"] else "#/components/schemas/Widget"
    bodies = {
        "createWidget": {"$ref": "#/components/schemas/Widget"},
        "updateWidget": {"$ref": "#/components/schemas/Widget"},
        "createGadget": {
            "type": "object",
            "properties": {"part": {"type": "object", "properties": {"of": {"$ref": gadget_ref}}}},
        },
    }
    paths: dict[str, Any] = {}
    for op_id, (method, path, tag) in OPERATIONS.items():
        op: dict[str, Any] = {
            "operationId": op_id,
            "tags": [tag],
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Widget"}}},
                }
            },
        }
        if method != "get":
            op["security"] = [{"oauth": [state["scope"]]}]
        if op_id in bodies:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": bodies[op_id]}}}
        if "{id}" in path:
            op["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
        paths.setdefault(path, {})[method] = op
    spec: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": state["title"], "version": "1"},
        "servers": [{"url": "https://widgets.example.com"}],
        "tags": [{"name": "widgets", "description": state["tag"]}, {"name": "gadgets"}],
        "security": [{"oauth": ["widgets:read"]}],
        "paths": paths,
        "components": {
            "schemas": {"Widget": widget, "Widget2": copy.deepcopy(widget)},
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://widgets.example.com/token",
                            "scopes": {"widgets:read": "read", state["scope"]: "write"},
                        }
                    },
                }
            },
        },
    }
    if state["ext"]:
        spec["x-internal-note"] = {"owner": "team"}
    return spec


def _snake(op_id: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in op_id)


def _intent_map(state: dict[str, Any]) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for op_id, description in state["explicit"].items():
        method = OPERATIONS[op_id][0]
        effect = {"get": "read", "delete": "destructive"}.get(method, "write")
        intent: dict[str, Any] = {"operation": op_id, "effect": effect}
        if effect != "read":
            intent |= {"approval": "required", "idempotency": {"key": "action_id", "send_as": "none"}}
        if description:
            intent["description"] = description
        tools[_snake(op_id)] = intent
    if state["clash"]:
        tools["get_gadget"] = {"operation": "listGadgets", "effect": "read"}
    group: dict[str, Any] = {"match": "*", "toolset": state["toolset"]}
    if state["loading"]:
        group["loading"] = state["loading"]
    include = [group]
    if state["second"] is not None:
        extra = {"match": "tag:gadgets", "prefix": "g_", "toolset": "declared"}
        include = [extra, group] if state["second"] == "before" else [group, extra]
    out: dict[str, Any] = {
        "toolgen": 1,
        "spec": "api.json",
        "api": {"name": "widgets"},
        "tools": tools,
        "include": include,
        "toolsets": {"declared": {"description": "Declared by hand.", "loading": "eager"}},
    }
    if state["depth"] is not None:
        out["budgets"] = {"max_schema_depth": state["depth"]}
    if state["examples"]:
        out["examples"] = {"listWidgets": ["show me every widget"], "getGadget": ["look up one gadget"]}
    if state["composite"]:
        out["composites"] = {
            "both_lists": {
                "pattern": "aggregate",
                "description": "Widgets and gadgets at once.",
                "steps": [
                    {"id": "widgets", "operation": "listWidgets"},
                    {"id": "gadgets", "operation": "listGadgets"},
                ],
            }
        }
    return out


_words = st.sampled_from(["Get one widget.", "Fetch a widget by id.", "Make a widget.", None])


class CrossToolEdits(RuleBasedStateMachine):
    """One project of one API, copied twice: built with the cache and without, after every edit."""

    def __init__(self) -> None:
        super().__init__()
        self.state = _fresh()
        self.good = copy.deepcopy(self.state)

    @initialize(folder=st.just(None))
    def start(self, folder: None) -> None:
        self.twins = Twins(FOLDER.mktemp("project"))
        self.twins.write(
            {
                "toolgen.yaml": "toolgen: 1\napis:\n  - name: widgets\n    intent_map: api.yaml\n    out: out/w\n"
            }
        )
        self._step()

    def _step(self) -> None:
        self.twins.write(
            {
                "api.json": json.dumps(_spec(self.state), indent=1),
                "api.yaml": json.dumps(_intent_map(self.state), indent=1),
            }
        )
        code, _ = self.twins.compare()
        if code == 0:
            self.good = copy.deepcopy(self.state)
        else:  # refused: compared, then back to the last state that built
            self.state = copy.deepcopy(self.good)

    def _set(self, **changes: Any) -> None:
        self.state.update(changes)
        self._step()

    @rule(op=st.sampled_from(IDS), description=_words)
    def explicit(self, op: str, description: str | None) -> None:
        explicit = dict(self.state["explicit"])
        if op in explicit and description is None:
            del explicit[op]
        else:
            explicit[op] = description
        self._set(explicit=explicit)

    @rule()
    def clash(self) -> None:
        self._set(clash=not self.state["clash"])

    @rule(toolset=st.sampled_from(["from_tag", "from_path", "declared"]))
    def toolset(self, toolset: str) -> None:
        self._set(toolset=toolset)

    @rule(loading=st.sampled_from([None, "eager", "deferred"]))
    def loading(self, loading: str | None) -> None:
        self._set(loading=loading)

    @rule(second=st.sampled_from([None, "before", "after"]))
    def second(self, second: str | None) -> None:
        self._set(second=second)

    @rule()
    def examples(self) -> None:
        self._set(examples=not self.state["examples"])

    @rule()
    def composite(self) -> None:
        self._set(composite=not self.state["composite"])

    @rule(depth=st.sampled_from([None, 3, 4, 5]))
    def depth(self, depth: int | None) -> None:
        self._set(depth=depth)

    @rule(description=_words)
    def deep_edit(self, description: str | None) -> None:
        """The depth budget passed two levels inside `Widget` by `createGadget` only, then that
        operation's intent alone edited: a cached build takes the other intents' tools whole, and
        converts `Widget` first from `createGadget`'s body."""
        self._set(depth=4)
        explicit = dict(self.state["explicit"])
        explicit["createGadget"] = description
        self._set(explicit=explicit)

    @rule(text=st.sampled_from(["Widgets and their parts.", "Everything about widgets.", ""]))
    def tag(self, text: str) -> None:
        self._set(tag=text)

    @rule(text=st.sampled_from(["A widget.", "A widget, with its size."]))
    def widget(self, text: str) -> None:
        self._set(widget=text)

    @rule(scope=st.sampled_from(["widgets:write", "widgets:admin"]))
    def scope(self, scope: str) -> None:
        self._set(scope=scope)

    @rule()
    def retarget(self) -> None:
        self._set(retarget=not self.state["retarget"])

    @rule(title=st.sampled_from(["Widgets", "Widget API"]))
    def title(self, title: str) -> None:
        self._set(title=title)

    @rule()
    def extension(self) -> None:
        self._set(ext=not self.state["ext"])


FOLDER: Any = None


@pytest.mark.slow
def test_cached_builds_equal_builds_without_the_cache_under_cross_tool_edits(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    _no_build_cache: None,
) -> None:
    global FOLDER
    FOLDER = tmp_path_factory
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.delenv("TOOLGEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("home")))
    machine = CrossToolEdits.TestCase
    machine.settings = settings(
        max_examples=examples(8),
        stateful_step_count=10,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    machine().runTest()


def test_the_first_state_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _no_build_cache: None
) -> None:
    """The machine's starting project builds (so its steps compare builds, not refusals)."""
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.delenv("TOOLGEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    twins = Twins(tmp_path)
    state = _fresh()
    twins.write(
        {
            "toolgen.yaml": "toolgen: 1\napis:\n  - name: widgets\n    intent_map: api.yaml\n    out: out/w\n",
            "api.json": json.dumps(_spec(state), indent=1),
            "api.yaml": json.dumps(_intent_map(state), indent=1),
        }
    )
    code, output = twins.compare()
    assert code == 0, output
