"""Stage `lower`, argument narrowing: an intent's ``args`` entries applied to the operation's arguments.

Input: the arguments lowered from the operation (canonical schemas, names as the model sees them) and
the intent's ``args`` map (`ArgSpec`: a narrower `schema`, a `description`, `hide`). Output: the
arguments the tools take (narrowed schemas in place of canonical ones, overridden descriptions,
hidden ones removed, so the runtime never sends them) and one `NarrowedArg` per entry for the policy
table. Raises `Skip` with a located diagnostic for an unknown argument name (with a did-you-mean), a
hidden required argument, an invalid narrowed schema, or one toolgen cannot prove to be a subset of
the canonical schema (`toolgen.compile.narrowing`): file:line:col of the offending node in the
intent map and its JSON pointer inside the narrowed schema.
"""

from __future__ import annotations

import difflib
from typing import Any

from ...pointer import unescape_token
from ..ir import NarrowedArg
from ..narrowing import narrowed_schema_problem, subset_problems
from ..operations import Operation
from .context import Arg, Locate, Skip
from .resolve import ResolvedIntent


def narrow_args(
    op: Operation,
    intent: ResolvedIntent,
    args: list[Arg],
    iloc: Locate,
    constants: frozenset[str] = frozenset(),
) -> tuple[list[Arg], tuple[NarrowedArg, ...]]:
    """Apply `intent.args` to `args` (see the module docstring); `iloc(*keys)` locates a key of the
    intent. An entry naming one of `constants` (the argument names of the spec's one-value
    parameters, which the runtime sends itself) has nothing left to narrow and is passed over.
    Returns the new argument list (same order, hidden ones left out) and the records."""
    if not intent.args:
        return args, ()
    by_name = {a.name: a for a in args}
    records: list[NarrowedArg] = []
    hidden: set[str] = set()
    for name, spec in intent.args.items():
        arg = by_name.get(name)
        if arg is None and name in constants:
            continue
        if arg is None:
            close = difflib.get_close_matches(name, list(by_name), n=1)
            raise Skip(
                "arg-unknown",
                f"`args` names {name!r}, which is not an argument of {op.key}",
                iloc("args", name),
                f"did you mean `{close[0]}`?"
                if close
                else "available: " + ", ".join(by_name)
                if by_name
                else "this operation takes no arguments",
            )
        if spec.hide:
            if arg.required:
                raise Skip(
                    "hide-required",
                    f"`args.{name}.hide` hides a required argument of {op.key}",
                    iloc("args", name, "hide"),
                    "only optional arguments can be hidden; use `fixed` to send a value instead",
                )
            if spec.schema_ is not None or spec.description is not None:
                raise Skip(
                    "arg-hidden-narrowed",
                    f"`args.{name}` hides the argument and also narrows it",
                    iloc("args", name),
                    "keep `hide: true` alone, or drop it",
                )
            hidden.add(name)
            records.append(NarrowedArg(name, hidden=True))
            continue
        schema: dict[str, Any] = arg.schema
        if spec.schema_ is not None:
            narrowed = spec.schema_
            problem = narrowed_schema_problem(narrowed)
            if problem is None:
                found = subset_problems(narrowed, arg.schema)
                problem = found[0] if found else None
            if problem is not None:
                tokens = (
                    [unescape_token(t) for t in problem.pointer.split("/")[1:]] if problem.pointer else []
                )
                at = f"#{problem.pointer}" if problem.pointer else "its root"
                raise Skip(
                    "arg-narrowing-unproved",
                    f"`args.{name}.schema` ({op.key}) is not provably narrower than the spec's schema; "
                    f"at {at}: {problem.message}",
                    iloc("args", name, "schema", *tokens),
                    problem.hint,
                )
            schema = {k: v for k, v in narrowed.items()}
            if "description" not in schema and isinstance(arg.schema.get("description"), str):
                schema["description"] = arg.schema["description"]
        if spec.description is not None:
            schema = {**schema, "description": spec.description}
        arg.schema = schema
        records.append(
            NarrowedArg(name, spec.schema_ if spec.schema_ is not None else None, spec.description)
        )
    order = {a.name: i for i, a in enumerate(args)}
    records.sort(key=lambda r: order[r.arg])
    return [a for a in args if a.name not in hidden], tuple(records)
