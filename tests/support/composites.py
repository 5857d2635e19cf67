"""Composite tools over the example tickets API, written by hand to the policy.json plan format of
docs/composites.md ("In policy.json"): the rows and catalog entries a build writes for a read
pipeline, an aggregate, a read branch and a writing pipeline (preview + record). Step rows are the
generated tickets rows, turned into step rows as the document says (``tool`` = ``<composite>.<step
id>``, a write step ``mode: record`` with ``record.arguments: full`` and ``approval: never``, no
output projection); step schemas are the generated catalog's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tests.support.runtime_env import load_package

NO_REQUEST: dict[str, Any] = {
    "bindings": [],
    "content_type": None,
    "encoding": "none",
    "fixed": [],
    "max_body_bytes": None,
}
TICKET_ID = {
    "description": "Ticket identifier, e.g. `T-102`.",
    "maxLength": 32,
    "pattern": "^T-[0-9]+$",
    "type": "string",
}


def inp(pointer: str) -> dict[str, Any]:
    return {"$ref": "input", "pointer": pointer}


def ref(step: str, pointer: str = "") -> dict[str, Any]:
    return {"$ref": "step", "step": step, "pointer": pointer}


def lit(value: Any) -> dict[str, Any]:
    return {"$literal": value}


class Tickets:
    """The generated tickets package, indexed: `rows[name]`, `entries[name]`."""

    def __init__(self) -> None:
        policy, catalog = load_package("tickets")
        self.policy = policy
        self.rows = {r["tool"]: r for r in policy["tools"]}
        self.entries = {e["name"]: e for e in catalog}

    def step(
        self,
        composite: str,
        step_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        when: Any = None,
        needs: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """A plan step over the generated tool `tool` (a read, or a record tool: its operation's
        full arguments plus the idempotency key argument)."""
        row = copy.deepcopy(self.rows[tool])
        row["tool"] = f"{composite}.{step_id}"
        row["pair"] = None
        row["output"] = {**row["output"], "fields": [], "redact": [], "max_bytes": 1_000_000}
        entry = self.entries[tool]
        input_schema = copy.deepcopy(entry["inputSchema"])
        if row["mode"] == "record":
            row["approval"] = "never"
            row["record"] = {"arguments": "full", "preview_ttl_s": None}
            preview = self.entries[str(self.rows[tool]["pair"])]["inputSchema"]
            input_schema = copy.deepcopy(preview)
            key = row["idempotency"]["arg"]
            input_schema["properties"][key] = {"type": "string", "minLength": 1, "maxLength": 255}
            input_schema["required"] = [*input_schema.get("required", []), key]
        step: dict[str, Any] = {
            "id": step_id,
            "when": when,
            "needs": list(needs),
            "args": args,
            "row": row,
            "input_schema": input_schema,
            "output_schema": copy.deepcopy(entry.get("outputSchema")),
        }
        return step


def _row(  # noqa: PLR0913
    tickets: Tickets,
    name: str,
    *,
    mode: str,
    effect: str,
    permission: list[str],
    plan: dict[str, Any],
    intent: str,
    approval: str = "never",
    idempotency: Any = None,
    pair: str | None = None,
    record: Any = None,
) -> dict[str, Any]:
    base: dict[str, Any] = copy.deepcopy(tickets.rows["get_ticket"])
    base.update(
        {
            "tool": name,
            "intent": intent,
            "mode": mode,
            "effect": effect,
            "permission": permission,
            "approval": approval,
            "operation": None,
            "request": copy.deepcopy(NO_REQUEST),
            "auth": [],
            "idempotency": idempotency,
            "pair": pair,
            "record": record,
            "pagination": None,
            "success_status": [],
            "output": {
                "accept": None,
                "body": "json",
                "fields": [],
                "max_bytes": 16000,
                "redact": [],
                "redirect": None,
                "schema_mode": "warn",
                "shape": "object",
            },
            "timeout_ms": 5000,
            "retry": {"backoff_ms": 200, "deadline_ms": 15000, "max_attempts": 1, "on": []},
            "composite": plan,
        }
    )
    return base


def _entry(
    name: str,
    description: str,
    input_schema: dict[str, Any],
    read_only: bool,
    output_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "title": name.replace("_", " "),
        "description": description,
        "inputSchema": input_schema,
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": False,
            "idempotentHint": read_only,
            "openWorldHint": True,
        },
    }
    if output_schema is not None:
        entry["outputSchema"] = output_schema
    return entry


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": props, "required": required}


def composite_package(history_ms: int | None = None) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """The tickets package plus the composites (policy, catalog):

    - ``get_ticket_overview`` (pipeline, read): ``ticket`` (getTicket) → ``history``
      (getTicketHistory of ``$ticket/id``); output ``ticket``, ``history``;
    - ``get_two_histories`` (aggregate): getTicketHistory of ``first`` and of ``second`` at once;
    - ``get_ticket_view`` (branch, read): ``view`` = ``ticket`` | ``history``;
    - ``preview_ticket_notes`` / ``record_ticket_notes`` (pipeline, writes): ``ticket`` (getTicket)
      → ``first`` (addFollowup on ``$ticket/id``) → ``second`` (addFollowup, ``note`` from
      ``$input/second_note``) → ``after`` (getTicket again); output ``ticket``, ``first``, ``second``.
    """
    t = Tickets()
    policy = copy.deepcopy(t.policy)
    catalog: list[Mapping[str, Any]] = [copy.deepcopy(e) for e in t.entries.values()]
    overview = "get_ticket_overview"
    plan = {
        "pattern": "pipeline",
        "switch": None,
        "steps": [
            t.step(overview, "ticket", "get_ticket", {"ticket_id": inp("/ticket_id")}),
            t.step(
                overview,
                "history",
                "get_ticket_history",
                {"ticket_id": ref("ticket", "/id")},
                needs=("ticket",),
            ),
        ],
        "output": {"ticket": ref("ticket"), "history": ref("history", "/entries")},
    }
    policy["tools"].append(
        _row(t, overview, mode="read", effect="read", permission=["ticket:read"], plan=plan, intent=overview)
    )
    catalog.append(
        _entry(
            overview,
            "One ticket and its history.",
            _obj({"ticket_id": TICKET_ID}, ["ticket_id"]),
            True,
            {"type": "object", "properties": {"ticket": {"type": "object"}, "history": {"type": "array"}}},
        )
    )
    two = "get_two_histories"
    plan = {
        "pattern": "aggregate",
        "switch": None,
        "steps": [
            t.step(two, "first", "get_ticket_history", {"ticket_id": inp("/first")}),
            t.step(two, "second", "get_ticket_history", {"ticket_id": inp("/second")}),
        ],
        "output": {"first": ref("first", "/entries"), "second": ref("second", "/entries")},
    }
    policy["tools"].append(
        _row(t, two, mode="read", effect="read", permission=["ticket:read"], plan=plan, intent=two)
    )
    catalog.append(
        _entry(
            two,
            "The histories of two tickets.",
            _obj({"first": TICKET_ID, "second": TICKET_ID}, ["first", "second"]),
            True,
            {
                "type": "object",
                "properties": {
                    "first": {"type": "array"},
                    "second": {"type": "array"},
                    "errors": {"type": "object"},
                },
                "required": ["errors"],
            },
        )
    )
    view = "get_ticket_view"
    plan = {
        "pattern": "branch",
        "switch": inp("/view"),
        "steps": [
            t.step(view, "ticket", "get_ticket", {"ticket_id": inp("/ticket_id")}, when="ticket"),
            t.step(view, "history", "get_ticket_history", {"ticket_id": inp("/history_of")}, when="history"),
        ],
        "output": {"ticket": ref("ticket"), "history": ref("history", "/entries")},
    }
    policy["tools"].append(
        _row(t, view, mode="read", effect="read", permission=["ticket:read"], plan=plan, intent=view)
    )
    catalog.append(
        _entry(
            view,
            "A ticket, or the history of one.",
            _obj(
                {
                    "view": {"type": "string", "enum": ["ticket", "history"]},
                    "ticket_id": TICKET_ID,
                    "history_of": TICKET_ID,
                },
                ["view"],
            ),
            True,
        )
    )
    _notes(t, policy, catalog)
    last = {
        row["tool"]: row for row in policy["tools"]
    }  # a composite written here replaces the package's own
    policy["tools"] = list(last.values())
    if history_ms is not None:
        for row in policy["tools"]:
            for step in (row.get("composite") or {}).get("steps", []):
                step["row"]["timeout_ms"] = history_ms
    return policy, catalog


def _notes(t: Tickets, policy: dict[str, Any], catalog: list[Mapping[str, Any]]) -> None:
    """The writing pipeline ``ticket_notes`` (preview + record)."""
    note = {"maxLength": 2000, "minLength": 1, "type": "string"}
    args_schema = _obj(
        {"ticket_id": TICKET_ID, "note": note, "second_note": note}, ["ticket_id", "note", "second_note"]
    )
    for mode in ("preview", "record"):
        name = f"{mode}_ticket_notes"
        plan = {
            "pattern": "pipeline",
            "switch": None,
            "steps": [
                t.step(name, "ticket", "get_ticket", {"ticket_id": inp("/ticket_id")}),
                t.step(
                    name,
                    "first",
                    "record_ticket_followup",
                    {"ticket_id": ref("ticket", "/id"), "note": inp("/note"), "visibility": lit("internal")},
                    needs=("ticket",),
                ),
                t.step(
                    name,
                    "second",
                    "record_ticket_followup",
                    {
                        "ticket_id": ref("ticket", "/id"),
                        "note": inp("/second_note"),
                        "visibility": lit("internal"),
                    },
                    needs=("ticket",),
                ),
                t.step(name, "after", "get_ticket", {"ticket_id": ref("ticket", "/id")}, needs=("ticket",)),
            ],
            "output": {"ticket": ref("after"), "first": ref("first"), "second": ref("second")},
        }
        if mode == "preview":
            row = _row(
                t,
                name,
                mode="preview",
                effect="read",
                permission=["ticket:read", "ticket:write"],
                plan=plan,
                intent="ticket_notes",
                pair="record_ticket_notes",
            )
            entry = _entry(name, "Preview two notes on a ticket.", args_schema, True)
        else:
            row = _row(
                t,
                name,
                mode="record",
                effect="write",
                permission=["ticket:read", "ticket:write"],
                plan=plan,
                intent="ticket_notes",
                approval="required",
                pair="preview_ticket_notes",
                idempotency={"arg": "action_id", "honoured_by_api": False, "in": "none", "name": None},
                record={"arguments": "preview", "preview_ttl_s": 900},
            )
            entry = _entry(
                name,
                "Add two notes to a ticket (previewed, approved).",
                _obj(
                    {
                        "preview_id": {"type": "string", "minLength": 1, "maxLength": 200},
                        "action_id": {"type": "string", "minLength": 1, "maxLength": 200},
                    },
                    ["preview_id", "action_id"],
                ),
                False,
            )
        policy["tools"].append(row)
        catalog.append(entry)
