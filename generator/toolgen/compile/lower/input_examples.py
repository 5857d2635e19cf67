"""Stage `lower`, a tool's input examples: whole argument objects a provider may show a model beside the
input schema (Anthropic's ``input_examples``, docs/dialects.md "Input examples").

Input: the operation (its request body's and parameters' ``example`` / ``examples``, OpenAPI 3.x
"Example Object"), the tool's arguments and canonical input schema, and the intent's own
``input_examples``. Output: at most `MAX_INPUT_EXAMPLES` argument objects, each valid under the
tool's input schema (JSON Schema 2020-12, the schema the runtime enforces), none longer than
`MAX_EXAMPLE_BYTES` in compact JSON, none holding a member whose name says it carries a secret
(`secret_name`), none naming an argument the model does not see (hidden, fixed, the idempotency
key, a credential: the input schema closes its root). Only read and preview tools get examples: a
record tool takes a ``preview_id`` no example can know.

The spec's examples are assembled per argument: each request-body example, its members mapped to the
arguments they became (members that are no argument are left out), with the first example value of
each parameter. An assembled example that lacks a required argument the spec gives no example for is
left out silently (GitHub's body examples never name the path's ``owner`` and ``repo``); one that
breaks the schema otherwise is a located ``spec-example-invalid`` warning. The intent map's
``input_examples`` replace the spec's; each must pass every check, else ``input-example-invalid``
(an error, located at the example).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

from ...diagnostics import DiagnosticError
from ...pointer import LONE_SURROGATE, join_pointer
from ..operations import Operation
from .body import pick_request_media
from .context import Arg, Ctx, Skip
from .parameters import merged_parameters
from .resolve import ResolvedIntent
from .reuse import remembered_examples

#: Anthropic advises a few examples per tool ("1-5"); each costs catalog tokens in every request
MAX_INPUT_EXAMPLES = 3
#: the compact-JSON bytes of one example (about 250 o200k tokens at most)
MAX_EXAMPLE_BYTES = 1024
#: a member (at any depth) whose name says it holds a secret: never shown in an example
SECRET_MEMBER = re.compile(
    r"(?i)(pass(word|wd|phrase|code)|secret|token|api[-_]?key|apikey|access[-_]?key|credential"
    r"|private[-_]?key|authori[sz]ation|cookie|session[-_]?id|signature|bearer)"
)
#: words that name a secret only as a whole word of the name (``pin``, ``pinCode``, ``user_pwd``; not
#: ``pinned`` or ``shipping``): the name is split at ``_``, ``-``, ``.``, spaces and case changes
SECRET_WORDS = frozenset({"pwd", "pin", "otp", "totp", "hotp", "jwt", "mfa", "cvv", "cvc", "ssn"})
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def secret_name(name: str) -> bool:
    """Whether a member's name says it holds a secret: `SECRET_MEMBER` anywhere in it, or one of
    `SECRET_WORDS` as a whole word of it (``pin_code``, ``userPwd``, ``OTP``)."""
    if SECRET_MEMBER.search(name):
        return True
    return any(word.lower() in SECRET_WORDS for word in _NAME_WORDS.findall(name))


Example = dict[str, Any]


def tool_examples(
    ctx: Ctx,
    op: Operation,
    key: str,
    intent: ResolvedIntent,
    args: list[Arg],
    schema: dict[str, Any],
    where: tuple[str | int, ...],
    *,
    explicit: bool,
) -> tuple[Example, ...]:
    """The input examples of the read or preview tool of `intent` (see the module docstring), whose
    arguments are `args` and canonical input schema `schema`. Findings go to ``ctx.sink``:
    ``input-example-invalid`` (error) for an intent-map example, ``spec-example-invalid`` (warning)
    for a spec example, each with what to do."""
    if intent.input_examples is not None:
        kept: list[Example] = []
        for i, example in enumerate(intent.input_examples):
            problem = example_problem(example, schema, complete_only=False)
            if problem is not None:
                ctx.sink.error(
                    "input-example-invalid",
                    f"intent `{key}`: input example {i + 1} {problem}",
                    ctx.intents.locate(*where, "input_examples", i) if explicit else None,
                    "give the arguments as the model sees them (toolgen catalog shows them), "
                    "valid under the tool's input schema, without secrets",
                    tool=key,
                )
            elif example not in kept:
                kept.append(example)
        return tuple(kept)
    return remembered_examples(ctx, op, args, schema, partial(_spec_examples, ctx, op, key, args, schema))


def _spec_examples(
    ctx: Ctx, op: Operation, key: str, args: list[Arg], schema: dict[str, Any]
) -> tuple[Example, ...]:
    """The spec's examples that can be shown beside `schema` (at most `MAX_INPUT_EXAMPLES`), each
    invalid one a ``spec-example-invalid`` warning."""
    found: list[Example] = []
    for example, pointer in _spec_candidates(ctx, op, args):
        problem = example_problem(example, schema, complete_only=True)
        if problem == _INCOMPLETE or example in found:
            continue
        if problem is not None:
            ctx.sink.warning(
                "spec-example-invalid",
                f"`{key}`: the spec's example at #{pointer} {problem}; it is not shown to models",
                ctx.doc.locate(pointer),
                "fix the example in the spec, or give the intent its own `input_examples`",
                tool=key,
            )
            continue
        found.append(example)
        if len(found) == MAX_INPUT_EXAMPLES:
            break
    return tuple(found)


_INCOMPLETE = "lacks a required argument"


def example_problem(example: Any, schema: dict[str, Any], *, complete_only: bool) -> str | None:
    """Why `example` cannot be shown beside `schema` (None: it can): not an object, a secret-like
    member, over `MAX_EXAMPLE_BYTES`, or invalid under `schema` (JSON Schema 2020-12 with formats,
    jsonschema_rs: the validator the runtime checks calls with). With
    `complete_only`, an example whose only fault is a missing required root argument answers
    `_INCOMPLETE`."""
    if not isinstance(example, dict):
        return "is not an object of arguments"
    secret = next(_secret_members(example, ""), None)
    if secret is not None:
        return f"has a member whose name says it holds a secret (/{secret})"
    text = json.dumps(example, ensure_ascii=False, separators=(",", ":"))
    if LONE_SURROGATE.search(text):
        return "holds a lone UTF-16 surrogate, which no JSON text can carry"
    size = len(text.encode())
    if size > MAX_EXAMPLE_BYTES:
        return f"is {size:,} bytes of JSON (at most {MAX_EXAMPLE_BYTES:,})"
    import jsonschema_rs  # imported when an example is checked: most operations have none

    try:  # the validator the runtime checks every call with (formats included)
        errors = list(jsonschema_rs.Draft202012Validator(schema, validate_formats=True).iter_errors(example))
    except ValueError as exc:  # a schema it cannot compile (a `pattern` no regex engine takes)
        return (
            f"cannot be checked against the input schema ({str(exc).splitlines()[0] if str(exc) else exc!r})"
        )
    if not errors:
        return None
    if complete_only and all(
        type(e.kind).__name__ == "Required" and not list(e.instance_path) for e in errors
    ):
        return _INCOMPLETE
    first = errors[0]
    where = "/" + "/".join(str(p) for p in first.instance_path)
    return f"does not fit the input schema at {where}: {first.message}"


def _secret_members(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}/{k}" if path else str(k)
            if secret_name(str(k)):
                yield here
            yield from _secret_members(v, here)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _secret_members(v, f"{path}/{i}" if path else str(i))


def _spec_candidates(ctx: Ctx, op: Operation, args: list[Arg]) -> list[tuple[Example, str]]:
    """Argument objects assembled from the spec's examples, with the JSON pointer of each body
    example (of the operation, when only parameters give examples)."""
    try:
        params = _parameter_values(ctx, op, args)
        bodies = _body_values(ctx, op)
    except (DiagnosticError, Skip):  # a broken `$ref` is reported where the operation is lowered
        return []
    body_args = [a for a in args if a.binding is not None and a.binding.location == "body"]
    out: list[tuple[Example, str]] = []
    for value, pointer in bodies:
        example = dict(params)
        for a in body_args:
            assert a.binding is not None
            if a.binding.wire_name == "":
                example[a.name] = value
            elif isinstance(value, dict) and a.binding.wire_name in value:
                example[a.name] = value[a.binding.wire_name]
        out.append((example, pointer))
    if not out and params:
        out.append((params, op.pointer))
    return out


def _parameter_values(ctx: Ctx, op: Operation, args: list[Arg]) -> Example:
    """Argument name -> the first example value the spec gives its parameter."""
    by_wire: dict[tuple[str, str], str] = {
        (a.binding.location, a.binding.wire_name): a.name for a in args if a.binding is not None
    }
    values: Example = {}
    for param, pointer in merged_parameters(ctx, op):
        name = by_wire.get((str(param.get("in")), str(param.get("name"))))
        if name is None:
            continue
        found = _first_example(ctx, param, pointer)
        if found is None and isinstance(param.get("schema"), dict):
            schema, schema_ptr = ctx.converter.resolve(param["schema"], join_pointer(pointer, "schema"))
            found = _first_example(ctx, schema, schema_ptr) if isinstance(schema, dict) else None
        if found is not None:
            values[name] = found[0]
    return values


def _body_values(ctx: Ctx, op: Operation) -> list[tuple[Any, str]]:
    """Each example of the request body's chosen media type (its ``example``, its ``examples``, else
    its schema's), with its pointer."""
    raw = op.node.get("requestBody")
    if raw is None:
        return []
    body, body_ptr = ctx.converter.resolve(raw, join_pointer(op.pointer, "requestBody"))
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, dict) or not content:
        return []
    media, _, _ = pick_request_media(content)
    node, ptr = content[media], join_pointer(body_ptr, "content", media)
    if not isinstance(node, dict):
        return []
    found = _examples_of(ctx, node, ptr)
    if not found and isinstance(node.get("schema"), dict):
        schema, schema_ptr = ctx.converter.resolve(node["schema"], join_pointer(ptr, "schema"))
        found = _examples_of(ctx, schema, schema_ptr) if isinstance(schema, dict) else []
    return found


def _first_example(ctx: Ctx, node: dict[str, Any], pointer: str) -> tuple[Any, str] | None:
    found = _examples_of(ctx, node, pointer)
    return found[0] if found else None


def _examples_of(ctx: Ctx, node: dict[str, Any], pointer: str) -> list[tuple[Any, str]]:
    """A media type's, parameter's or schema's example values: ``example``, then each ``examples``
    entry (an Example Object's ``value``, `$ref`s followed; a schema's list of values)."""
    out: list[tuple[Any, str]] = []
    if "example" in node:
        out.append((node["example"], join_pointer(pointer, "example")))
    examples = node.get("examples")
    if isinstance(examples, list):  # a schema's JSON Schema `examples`
        out.extend((v, join_pointer(pointer, "examples", i)) for i, v in enumerate(examples))
    elif isinstance(examples, dict):
        for name, raw in examples.items():
            entry, entry_ptr = ctx.converter.resolve(raw, join_pointer(pointer, "examples", name))
            if isinstance(entry, dict) and "value" in entry:
                out.append((entry["value"], join_pointer(entry_ptr, "value")))
    return out
