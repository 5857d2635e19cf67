"""Each intent is resolved once (`toolgen.compile.lower.resolve`): the map's defaults applied and
``send_as`` parsed in one place, read by every lowering module; the preview and record rows of a write
are one base row with each mode's members replaced."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, build
from tests.support.profiles import examples

from toolgen.compile.intent import IncludeSpec, IntentMap, LoadedIntentMap
from toolgen.compile.ir import Idempotency
from toolgen.compile.lower.resolve import PageSizes, ResolvedIntent, resolve_intent

TICKETS = REPO / "specs" / "tickets.yaml"
LOWER = REPO / "generator" / "toolgen" / "compile" / "lower"


def _map(tools: dict[str, Any], defaults: dict[str, Any] | None = None) -> LoadedIntentMap:
    model = IntentMap.model_validate({"toolgen": 1, "tools": tools, "defaults": defaults or {}})
    return LoadedIntentMap(model, Path("m.yaml"), "m.yaml", None)


def _resolve(
    intent: dict[str, Any], defaults: dict[str, Any] | None = None, *, group: IncludeSpec | None = None
) -> ResolvedIntent:
    loaded = _map({"t": intent}, defaults)
    return resolve_intent(
        loaded, "t", loaded.model.tools["t"], ("tools", "t"), explicit=group is None, group=group
    )


def _codes(resolved: ResolvedIntent) -> list[str]:
    return [d.code for d in resolved.findings]


def test_a_resolved_intent_is_frozen() -> None:
    resolved = _resolve({"operation": "addFollowup", "effect": "write"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        resolved.approval = "never"  # type: ignore[misc]


@pytest.mark.parametrize(
    "effect, field", [("write", "approval_write"), ("destructive", "approval_destructive")]
)
@pytest.mark.parametrize("default", ["never", "required"])
def test_a_write_without_approval_takes_the_default_of_its_effect(
    effect: str, field: str, default: str
) -> None:
    other = "required" if default == "never" else "never"
    defaults = {"approval_write": other, "approval_destructive": other, field: default}
    explicit = _resolve({"operation": "op", "effect": effect}, defaults)
    included = _resolve({"operation": "op", "effect": effect}, defaults, group=IncludeSpec())
    assert explicit.approval == included.approval == default
    assert "approval-defaulted" in _codes(explicit) and "approval-defaulted" not in _codes(included)
    stated = _resolve({"operation": "op", "effect": effect, "approval": other}, defaults)
    assert stated.approval == other and "approval-defaulted" not in _codes(stated)


def test_a_read_is_never_approval_gated_and_says_so_when_asked() -> None:
    resolved = _resolve({"operation": "getTicket", "effect": "read", "approval": "required"})
    assert resolved.approval == "never" and resolved.record_arguments is None
    assert _codes(resolved) == ["approval-on-read"]


_WIRE = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=1, max_size=20)


@settings(max_examples=examples(100))
@given(
    where=st.sampled_from(["header", "query", "body"]),
    wire=_WIRE,
    honoured=st.sampled_from([None, True, False]),
)
def test_send_as_is_parsed_into_where_and_the_wire_name(where: str, wire: str, honoured: bool | None) -> None:
    resolved = _resolve(
        {
            "operation": "op",
            "effect": "write",
            "idempotency": {"key": "k", "send_as": f"{where}:{wire}", "honoured_by_api": honoured},
        }
    )
    assert resolved.idempotency == Idempotency("k", where, wire, honoured)  # type: ignore[arg-type]
    assert resolved.key_sent
    assert resolved.body_key_member() == (wire if where == "body" else None)


def test_a_key_kept_for_receipts_alone_is_not_sent_and_claims_nothing() -> None:
    resolved = _resolve(
        {
            "operation": "op",
            "effect": "write",
            "retry": {"max_attempts": 3},
            "idempotency": {"key": "k", "send_as": "none", "honoured_by_api": True},
        }
    )
    assert resolved.idempotency == Idempotency("k", "none", None) and not resolved.key_sent
    assert resolved.retry.max_attempts == 1  # a write whose key the API never sees is tried once
    assert resolved.preview_retry.max_attempts == 3
    assert set(_codes(resolved)) == {
        "idempotency-honoured-unsent",
        "retry-unsafe-write",
        "approval-defaulted",
    }


def test_the_map_defaults_are_applied() -> None:
    defaults = {
        "timeout_ms": 1234,
        "output_max_bytes": 999,
        "output_schema_mode": "strict",
        "output_depth": 5,
        "max_body_bytes": 77,
        "preview_ttl_s": 60,
        "retry": {"max_attempts": 4, "backoff_ms": 10},
        "page_size": 7,
        "max_page_size": 70,
    }
    resolved = _resolve(
        {"operation": "op", "effect": "write", "approval": "required", "output": {"fields": ["id"]}}, defaults
    )
    assert (resolved.timeout_ms, resolved.max_body_bytes, resolved.preview_ttl_s) == (1234, 77, 60)
    assert resolved.output.max_bytes == 999 and resolved.output.schema_mode == "strict"
    assert (resolved.output.depth, resolved.output.depth_below_fields) == (5, 1)
    assert resolved.preview_retry.max_attempts == 4 and resolved.preview_retry.deadline_ms == 10_000
    assert resolved.record_arguments == "preview" and resolved.has_preview
    assert resolved.page_sizes == PageSizes(7, 70)
    paged = _resolve(
        {"operation": "op", "effect": "read", "pagination": {"style": "page", "max_page_size": 9}}, defaults
    )
    assert paged.page_sizes == PageSizes(7, 9) and not paged.detect_paging
    detected = _resolve({"operation": "op", "effect": "read"}, defaults, group=IncludeSpec(paginate=True))
    assert detected.detect_paging and detected.page_sizes == PageSizes(7, 70)
    own = _resolve(
        {
            "operation": "op",
            "effect": "read",
            "timeout_ms": 10,
            "max_body_bytes": 5,
            "output": {"max_bytes": 300, "depth": 2, "schema_mode": "off"},
        },
        defaults,
    )
    assert (own.timeout_ms, own.max_body_bytes, own.output.max_bytes, own.output.schema_mode) == (
        10,
        5,
        300,
        "off",
    )
    assert (own.output.depth, own.output.depth_below_fields) == (2, 2)


def test_a_gated_write_keeps_its_preview() -> None:
    resolved = _resolve({"operation": "op", "effect": "write", "approval": "required", "preview": False})
    assert resolved.has_preview and _codes(resolved) == ["preview-required"]
    assert resolved.findings[0].severity == "error"
    ungated = _resolve(
        {
            "operation": "op",
            "effect": "write",
            "approval": "never",
            "preview": False,
            "record": {"preview_ttl_s": 60},
        }
    )
    assert not ungated.has_preview and ungated.record_arguments == "full" and ungated.preview_ttl_s is None
    assert _codes(ungated) == ["preview-ttl-unused"]


def _names_in(path: Path) -> set[str]:
    """Every attribute a module reads (``x.name``) and every name it uses."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found


def test_a_default_and_the_key_wire_rule_are_read_in_resolve_alone() -> None:
    """CONTRIBUTING.md, "Where a default is decided": changing the default approval, or how an
    idempotency key is sent, touches `resolve.py` alone among the lowering modules."""
    owners: dict[str, list[str]] = {}
    for path in sorted(LOWER.glob("*.py")):
        names = _names_in(path)
        for name in (
            "approval_write",
            "approval_destructive",
            "send_as",
            "output_max_bytes",
            "timeout_ms",
            "preview_ttl_s",
            "honoured_by_api",
        ):
            if name in names:
                owners.setdefault(name, []).append(path.name)
    # composites.py reads its own `CompositeIntent` (its key, never sent); infer.py drafts `send_as`
    # from where the operation takes a key
    assert owners["approval_write"] == owners["approval_destructive"] == ["resolve.py"]
    assert owners["honoured_by_api"] == ["resolve.py"]
    assert set(owners["send_as"]) <= {"resolve.py", "infer.py", "composites.py"}, owners["send_as"]
    assert set(owners["output_max_bytes"]) <= {"resolve.py", "composites.py"}
    assert set(owners["preview_ttl_s"]) <= {"resolve.py", "tools.py", "composites.py"}


def test_the_lowering_modules_take_the_resolved_intent() -> None:
    """Only the modules that make or infer an intent name the pydantic `ToolIntent`: the others take
    a `ResolvedIntent`."""
    naming = {p.name for p in LOWER.glob("*.py") if "ToolIntent" in _names_in(p)}
    allowed = {"resolve.py", "tools.py", "infer.py", "intents.py", "reuse.py", "composite_steps.py"}
    assert naming <= allowed, naming


_MODE_MEMBERS = {
    "tool",
    "mode",
    "effect",
    "approval",
    "idempotency",
    "retry",
    "pagination",
    "output",
    "pair",
    "record",
    "dialect_rewrites",
}


@pytest.mark.parametrize("api", ["tickets", "github", "stripe"])
def test_preview_and_record_rows_differ_only_in_their_mode_members(api: str) -> None:
    rows = {r["tool"]: r for r in json.loads((REPO / "generated" / api / "policy.json").read_text())["tools"]}
    pairs = [(r, rows[r["pair"]]) for r in rows.values() if r["mode"] == "preview" and not r["composite"]]
    assert pairs
    for preview, record in pairs:
        for member in set(preview) - _MODE_MEMBERS:
            if member == "request":
                assert {**preview[member], "bindings": None} == {**record[member], "bindings": None}
            else:
                assert preview[member] == record[member], (preview["tool"], member)


def test_an_included_write_gets_the_default_approval_of_the_map(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS,
        "defaults: {approval_write: never, approval_destructive: required}\n"
        "include: [{match: addFollowup}, {match: deleteTicket}]\n"
        "tools:\n  get_ticket: {operation: getTicket, effect: read}\n",
    )
    assert built.row("record_add_followup")["approval"] == "never"
    assert built.row("record_delete_ticket")["approval"] == "required"
