"""Every lint rule fires on a scripted change of the clean widgets intent map, and does not fire on a
near miss (a similar change that is fine). The clean map itself has no finding at all."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolgen.review.lint import RULES, LintSettings, LintTarget, apply_severity, lint_target

Mutation = Callable[[dict[str, Any]], None]


def _set(key: str, **values: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        doc["tools"][key].update(values)

    return mutate


def _drop(key: str, *fields: str) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        if fields:
            for f in fields:
                doc["tools"][key].pop(f, None)
        else:
            del doc["tools"][key]

    return mutate


def _add(key: str, **intent: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        doc["tools"][key] = intent

    return mutate


def _rename(old: str, new: str) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        doc["tools"] = {new if k == old else k: v for k, v in doc["tools"].items()}

    return mutate


def _shared_credential(service_secret: str) -> Mutation:
    """Every scheme's ``per_caller`` lets the service's shared secret stand in for `service_secret`."""

    def mutate(doc: dict[str, Any]) -> None:
        for scheme in doc["auth"].values():
            scheme["per_caller"]["service_secret"] = service_secret

    return mutate


def _all(*mutations: Mutation) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        for m in mutations:
            m(doc)

    return mutate


@dataclass
class Case:
    rule: str
    trigger: Mutation
    near_miss: Mutation
    settings: LintSettings = field(default_factory=LintSettings)
    near_settings: LintSettings | None = None


WRITE = {"approval": "required", "idempotency": {"key": "action_id", "send_as": "none"}}
SAVE = "Save a widget with its name and colour."


def _toolsets(**described: str) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        doc["toolsets"] = {name: {"description": text} for name, text in described.items()}

    return mutate


CASES = [
    Case(
        "operation-not-found",
        _set("list_widgets", operation="listWidget"),
        _set("list_widgets", operation="GET /widgets"),
    ),
    Case(
        "operation-mapped-twice",
        _add(
            "get_widget_again",
            operation="getWidget",
            effect="read",
            permission="widget:read",
            description="Get one widget.",
        ),
        _add(
            "get_widget_name",
            operation="getWidget",
            effect="read",
            permission="widget:read",
            description="Get one widget's name.",
            output={"fields": ["name"]},
        ),
    ),
    Case(
        "tool-name-duplicate",
        _add(
            "preview_create_widget",
            operation="getWidget",
            effect="read",
            permission="widget:read",
            description="Get one widget.",
        ),
        _add(
            "peek_create_widget",
            operation="getWidget",
            effect="read",
            permission="widget:read",
            description="Get one widget.",
            output={"fields": ["id"]},
        ),
    ),
    Case("tool-name-invalid", _rename("get_widget", "get.widget"), _rename("get_widget", "get-widget")),
    Case(
        "effect-contradicts-method",
        _all(_set("delete_widget", effect="read"), _drop("delete_widget", "approval", "idempotency")),
        _set("delete_widget", effect="write"),
    ),
    Case(
        "effect-write-on-safe-method",
        _set("touch_widget", effect="write", **WRITE),
        _set("touch_widget", effect="read"),
    ),
    # a read whose operationId names a change (tests/scaffold/test_init_effects.py has the AWS Query shape,
    # a GET that deletes); the near miss is a read whose words name no change
    Case(
        "effect-read-names-change",
        _all(
            _set("create_widget", effect="read"), _drop("create_widget", "approval", "record", "idempotency")
        ),
        _set("touch_widget", effect="read"),
    ),
    Case(
        "effect-delete-not-destructive",
        _set("delete_widget", effect="write"),
        _set("delete_widget", effect="destructive"),
    ),
    Case(
        "destructive-without-approval",
        _set("delete_widget", approval="never"),
        _drop("delete_widget", "approval"),
    ),  # the map's default for destructive intents is `required`
    Case(
        "idempotency-header-unused",
        _set("create_widget", idempotency={"key": "action_id", "send_as": "none"}),
        _set("create_widget", idempotency={"key": "action_id", "send_as": "header:idempotency-key"}),
    ),
    Case(
        "idempotency-honour-undeclared",
        _set("create_widget", idempotency={"key": "action_id", "send_as": "header:Idempotency-Key"}),
        _set(
            "create_widget",
            idempotency={"key": "action_id", "send_as": "header:Idempotency-Key", "honoured_by_api": False},
        ),
    ),
    Case(
        "idempotency-key-missing",
        _drop("update_widget", "idempotency"),
        _set("update_widget", idempotency={"key": "op_id", "send_as": "none"}),
    ),
    Case("shared-write-credential", _shared_credential("always"), _shared_credential("reads")),
    Case(
        "preview-adds-nothing",
        _drop("create_widget", "record"),
        _all(_drop("create_widget", "record"), _set("create_widget", preview=False)),
    ),
    Case(
        "permission-missing", _drop("list_gadgets", "permission"), _drop("list_widgets", "permission")
    ),  # the operation's OAuth scopes apply
    Case(
        "scope-unknown",
        _set("list_widgets", permission="widget:reed"),
        _set("list_gadgets", permission="gadgets:custom"),
    ),  # an apiKey operation: the API's own names
    Case(
        "pagination-missing", _drop("list_widgets", "pagination"), _drop("widgets_by_name", "description")
    ),  # an object with an array but no paging parameters
    Case(
        "output-unprojected-large",
        _drop("usage_report", "output"),
        _set("usage_report", output={"fields": ["notes"]}),
        LintSettings(large_output_tokens=200),
    ),
    Case(
        "description-missing", _drop("usage_report", "description"), _drop("list_widgets", "description")
    ),  # the operation has a summary
    Case(
        "description-too-long",
        _set("get_widget", description="Get one widget by id. " * 52),
        _set("get_widget", description="Get one widget by id. " * 45),
    ),
    Case(
        "description-no-when-not-to-use",
        _rename("widgets_by_name", "search_widgets"),
        _all(
            _rename("widgets_by_name", "search_widgets"),
            _set("search_widgets", description="Find widgets by name; use get_widget when you know the id."),
            _set("get_widget", description="Get one widget by id. Do not use it to search."),
        ),
    ),
    Case(
        "tool-name-near-synonym",
        _rename("widgets_by_name", "search_widgets"),
        _rename("widgets_by_name", "list_widgets_by_name"),
    ),
    Case(
        "toolset-near-synonym",
        _all(
            _toolsets(widgets="Widgets."),
            _set("create_widget", toolset="widgets", description=SAVE),
            _set("update_widget", toolset="widgets", description=SAVE),
        ),
        _all(
            _toolsets(widgets="Widgets."),
            _set("create_widget", toolset="widgets", description=SAVE),
            _set("update_widget", toolset="widgets", description=SAVE + " Use create_widget for a new one."),
        ),
    ),
    Case(
        "catalog-too-many-tools",
        _set("list_widgets"),
        _set("list_widgets"),
        LintSettings(max_tools=13),
        LintSettings(max_tools=14),
    ),
    Case(
        "catalog-too-many-tokens",
        _set("list_widgets"),
        _set("list_widgets"),
        LintSettings(max_catalog_tokens=800),
        LintSettings(max_catalog_tokens=8000),
    ),
    Case(
        "catalog-request-limits",
        _set("list_widgets"),
        _set("list_widgets"),
        LintSettings(client_prefix="mcp__" + "w" * 40 + "__"),
        LintSettings(client_prefix="mcp__widgets__"),
    ),
    Case(
        "tool-too-large",
        _set("list_widgets"),
        _set("list_widgets"),
        LintSettings(max_tool_tokens=100),
        LintSettings(max_tool_tokens=100_000),
    ),
    Case(
        "catalog-too-many-bytes",
        _set("list_widgets"),
        _set("list_widgets"),
        LintSettings(max_catalog_bytes=100),
        LintSettings(max_catalog_bytes=10_000_000),
    ),
    Case("operations-uncovered", _drop("usage_report"), _rename("usage_report", "get_usage_report")),
    # diagnostics of the build, reported by lint
    Case("approval-on-read", _set("get_widget", approval="required"), _set("get_widget", approval="never")),
    Case(
        "approval-defaulted", _drop("update_widget", "approval"), _set("update_widget", approval="required")
    ),
    Case(
        "output-field-unknown",
        _set("usage_report", output={"fields": ["nope"]}),
        _set("usage_report", output={"fields": ["notes"]}),
    ),
    Case("hide-unknown", _set("update_widget", hide=["colour"]), _set("update_widget", hide=["color"])),
    Case(
        "fixed-unknown",
        _set("widgets_by_name", fixed={"query": "x"}),
        _set("widgets_by_name", fixed={"q": "x"}),
    ),
    Case("hide-required", _set("widgets_by_name", hide=["q"]), _set("update_widget", hide=["name"])),
    Case(
        "pagination-param-missing",
        _set(
            "list_widgets",
            pagination={"style": "cursor", "cursor": "after", "items": "data", "next": "next_cursor"},
        ),
        _set(
            "list_widgets",
            pagination={"style": "cursor", "cursor": "cursor", "items": "data", "next": "next_cursor"},
        ),
    ),
    Case(
        "pagination-items-missing",
        _set(
            "list_widgets",
            pagination={"style": "cursor", "cursor": "cursor", "items": "items", "next": "next_cursor"},
        ),
        _set(
            "list_widgets",
            pagination={"style": "cursor", "cursor": "cursor", "items": "data", "next": "next_cursor"},
        ),
    ),
    Case(
        "null-unknown-argument",
        _set("update_widget", null={"colour": "send"}),
        _set("update_widget", null={"color": "send"}),
    ),
    Case("strict-disabled", _set("update_widget", strict=False), _set("update_widget", strict=True)),
]


def _lint(project: Path, mutation: Mutation | None, settings: LintSettings) -> set[str]:
    doc = yaml.safe_load((project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8"))
    if mutation is not None:
        mutation(doc)
    path = project / "intent_maps" / "case.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    result = lint_target(LintTarget(path), settings)
    assert not result.bad_input, [d.render() for d in result.findings]
    return {d.code for d in result.findings}


def test_clean_map_has_no_findings(project: Path) -> None:
    assert _lint(project, None, LintSettings(large_output_tokens=200)) == set()


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_triggers(project: Path, case: Case) -> None:
    assert case.rule in RULES
    assert case.rule in _lint(project, case.trigger, case.settings)


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_near_miss(project: Path, case: Case) -> None:
    assert case.rule not in _lint(project, case.near_miss, case.near_settings or case.settings)


def test_every_lint_rule_has_a_case() -> None:
    covered = {c.rule for c in CASES} | {
        "lint-config-unknown-rule",  # tested in test_review_lint_cli
        "catalog-provider-limit",  # tested in tests/test_provider_limits.py
        # the widgets spec takes no body or query key: tested with its
        # trigger and near misses in
        # tests/review/lint/test_idempotency_lint.py
        "idempotency-key-unsent",
        # from `# decide` comments (a mapping cannot carry them): tested with
        # their marks and near misses in tests/scaffold/test_init.py
        "effect-undecided",
        "permission-undecided",
        "pagination-undecided",  # tests/scaffold/test_init_pagination.py
        # tests/scaffold/test_describe.py: reported until the mark is deleted
        "examples-unreviewed",
        # a request's ranking needs an index of several tools: tested with
        # their triggers and a map without findings in
        # tests/test_search_expansions.py
        "examples-duplicate",
        "examples-length",
        "example-ranks-other",
        "examples-operation-unknown",
    }
    missing = sorted(r.id for r in RULES.values() if r.source == "lint" and r.id not in covered)
    assert not missing, f"lint rules without a trigger/near-miss case: {missing}"


def test_finding_is_located_in_the_intent_map(project: Path) -> None:
    doc = yaml.safe_load((project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8"))
    _set("delete_widget", approval="never")(doc)
    path = project / "intent_maps" / "case.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    result = lint_target(LintTarget(path), LintSettings())
    finding = next(d for d in result.findings if d.code == "destructive-without-approval")
    assert finding.location is not None
    line = path.read_text(encoding="utf-8").splitlines()[finding.location.line - 1]  # type: ignore[operator]
    assert line.strip().startswith("approval: never")
    assert finding.location.pointer == "/tools/delete_widget/approval"


def test_configured_severity_and_strict(project: Path) -> None:
    doc = copy.deepcopy(yaml.safe_load((project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8")))
    _drop("update_widget", "idempotency")(doc)  # idempotency-key-missing: a warning
    path = project / "intent_maps" / "case.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    findings = lint_target(LintTarget(path), LintSettings()).findings
    assert [d.severity for d in findings if d.code == "idempotency-key-missing"] == ["warning"]
    strict = apply_severity(findings, LintSettings(), strict=True)
    assert [d.severity for d in strict if d.code == "idempotency-key-missing"] == ["error"]
    off = apply_severity(findings, LintSettings(severity={"idempotency-key-missing": "off"}), strict=True)
    assert not [d for d in off if d.code == "idempotency-key-missing"]
    info = apply_severity(findings, LintSettings(severity={"idempotency-key-missing": "info"}), strict=True)
    assert [d.severity for d in info if d.code == "idempotency-key-missing"] == ["info"]
