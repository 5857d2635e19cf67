"""`toolgen.scaffold.draft_lowering`: the lowerings of one draft share each operation's lowering, and
each gives the IR and diagnostics of a fresh `lower` of that version of the draft."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from toolgen.compile.intent import IntentMap, LoadedIntentMap
from toolgen.compile.load import load_spec
from toolgen.compile.lower import lower, reuse
from toolgen.compile.lower.operation import lower_operation
from toolgen.diagnostics import DiagnosticSink
from toolgen.scaffold.draft_lowering import DraftLowering

ROOT = Path(__file__).resolve().parents[2]


def _fresh(doc: Any, data: dict[str, Any], out: Path) -> tuple[Any, list[Any]]:
    sink = DiagnosticSink()
    ir = lower(doc, LoadedIntentMap(IntentMap.model_validate(data), out, out.name, None), sink, "tickets")
    return ir, doc.fill_locations(sink.items)


@pytest.mark.parametrize(
    ("spec", "intents"),
    [
        ("specs/tickets.yaml", "intent_maps/tickets.yaml"),
        ("specs/stripe.slice.json", "intent_maps/stripe.yaml"),
    ],
)
def test_each_operation_is_lowered_once_and_every_lowering_is_a_fresh_one(
    spec: str, intents: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = load_spec(ROOT / spec)
    data = yaml.safe_load((ROOT / intents).read_text(encoding="utf-8"))
    data.pop("composites", None)  # a draft has none (a composite's steps are lowered with it, each time)
    out = tmp_path / "draft.yaml"
    lowered: list[str] = []
    real = lower_operation

    def counting(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
        lowered.append(op.pointer)
        return real(ctx, op, *args, **kwargs)

    lowering = DraftLowering(doc, "tickets", out)
    monkeypatch.setattr(reuse, "lower_operation", counting)
    first_sink = DiagnosticSink()
    _, first = lowering.lower(data, first_sink)
    once = len(lowered)
    assert once == len(data["tools"])
    second_sink = DiagnosticSink()
    _, second = lowering.lower(data, second_sink)
    assert len(lowered) == once  # nothing lowered again
    monkeypatch.setattr(reuse, "lower_operation", real)
    ir, diagnostics = _fresh(doc, data, out)
    assert first == ir and second == ir
    located = DiagnosticSink()
    located.extend(doc.fill_locations(second_sink.items))
    assert located.items == diagnostics

    # one intent changed: only its operation is lowered again, and the IR is that of the new draft
    key = next(iter(data["tools"]))
    changed = {**data, "tools": {**data["tools"], key: {**data["tools"][key], "description": "Changed."}}}
    monkeypatch.setattr(reuse, "lower_operation", counting)
    _, third = lowering.lower(changed, DiagnosticSink())
    assert len(lowered) == once + 1
    monkeypatch.setattr(reuse, "lower_operation", real)
    assert third == _fresh(doc, changed, out)[0] != ir
