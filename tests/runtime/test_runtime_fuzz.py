"""Fuzzing the argument boundary of every committed tool (generated/tickets, generated/github,
generated/stripe): arbitrary JSON values and arbitrary Python values — lone surrogates, CR/LF/NUL,
dot segments, huge integers, NaN and infinities, bytes, UUIDs, datetimes, Decimals, opaque objects,
non-string keys, nesting 50 to 5,000 deep — as the arguments of each tool, against a recording
loopback API.

Guarantees attacked, for every call (and the preview a record call needs):

- `Registry.call` returns a `CallResult` whose JSON form is strict JSON; it never raises;
- a result of ``invalid_arguments`` means the API received nothing, and a preview never sends;
- whenever a request was sent, the arguments were plain JSON once UUIDs/datetimes/dates/Decimals are
  given their JSON form (no NaN/infinity, bytes, objects, non-string keys, lone surrogates, nesting
  of 900 or more) and passed the tool's input schema.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import GENERATED

from toolgen.runtime import Actor, Approval, CallResult, MemoryReceiptStore, Registry
from toolgen.runtime.call.nulls import normalise_nulls
from toolgen.testing.contract import CannotSynthesise, valid_args

PACKAGES = ("tickets", "github", "stripe")
#: Nesting at or beyond this depth must never reach the wire.
REFUSED_DEPTH = 900


class AnySecret:
    """Every secret resolves to a recognisable dummy value."""

    def get(self, secret: str) -> str | None:
        return f"dummy-{secret.lower()}"


def _folder(api: str) -> Path:
    return GENERATED / api


def _tools() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for api in PACKAGES:
        policy_file = _folder(api) / "policy.json"
        if policy_file.is_file():
            policy = json.loads(policy_file.read_text(encoding="utf-8"))
            out += [(api, str(row["tool"])) for row in policy["tools"]]
    return out


TOOLS = _tools()


# --------------------------------------------------------------------------------------------------
# hostile values


@dataclass(frozen=True)
class Deep:
    """A placeholder for `depth` nested lists or objects (materialised right before the call, so
    that failing examples print in one line)."""

    depth: int
    kind: str

    def build(self) -> Any:
        value: Any = "leaf"
        for _ in range(self.depth):
            value = [value] if self.kind == "list" else {"a": value}
        return value


class Opaque:
    """A Python object with no JSON form."""

    def __repr__(self) -> str:
        return "Opaque()"


SURROGATES = st.text(alphabet=st.characters(categories=["Cs"]), min_size=1, max_size=3)
AWKWARD = st.text(
    alphabet=st.sampled_from(["\r", "\n", "\x00", ".", "/", "[", "]", "é", "%", "?", "#", " "]), max_size=6
)

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**400, -(2**63), 2**53 + 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.0, -0.0, 1e300]),
    st.text(max_size=12),
    SURROGATES,
    AWKWARD,
    st.sampled_from(["", ".", "..", "T-102", "cus_1", "octo", "example"]),
    st.binary(max_size=6),
    st.uuids(),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
    st.dates(),
    st.decimals(allow_nan=True, allow_infinity=True, places=2),
    st.builds(Opaque),
    st.builds(Deep, depth=st.sampled_from([50, REFUSED_DEPTH, 5000]), kind=st.sampled_from(["list", "dict"])),
)

VALUES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
        st.dictionaries(
            st.one_of(st.integers(-3, 3), SURROGATES, st.just(("tuple", "key"))), children, max_size=2
        ),
    ),
    max_leaves=10,
)


#: Plain JSON values: most of them pass a permissive schema, so calls get past validation.
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["example", "T-102", "cus_1", "open", "public"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def materialise(value: Any) -> Any:
    """Replace `Deep` placeholders by their nesting (the surrounding structure is shallow)."""
    if isinstance(value, Deep):
        return value.build()
    if isinstance(value, dict):
        return {k: materialise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [materialise(v) for v in value]
    return value


class NotJson(Exception):
    """The value has no JSON form, so it must not be sent."""


def json_form(value: Any) -> Any:
    """The JSON form of a materialised value (iterative): UUID → text, datetime/date → ISO 8601,
    finite Decimal → number; raises `NotJson` for anything that cannot be sent as JSON."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 1)]
    while stack:
        item, parent, slot, depth = stack.pop()
        if depth >= REFUSED_DEPTH:
            raise NotJson("too deep")
        out: Any
        if isinstance(item, dict):
            out = {}
            for k, v in item.items():
                if not isinstance(k, str):
                    raise NotJson("non-string key")
                _text(k)
                out[k] = None
                stack.append((v, out, k, depth + 1))
        elif isinstance(item, (list, tuple)):
            out = [None] * len(item)
            for i, v in enumerate(item):
                stack.append((v, out, i, depth + 1))
        elif isinstance(item, str):
            out = _text(item)
        elif item is None or isinstance(item, (bool, int)):
            out = item
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise NotJson("non-finite float")
            out = item
        elif isinstance(item, uuid.UUID):
            out = str(item)
        elif isinstance(item, (dt.datetime, dt.date)):
            out = item.isoformat()
        elif isinstance(item, decimal.Decimal):
            if not item.is_finite():
                raise NotJson("non-finite Decimal")
            out = int(item) if item == item.to_integral_value() else float(item)
        else:
            raise NotJson(type(item).__name__)
        parent[slot] = out
    return root[0]


def _text(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NotJson("lone surrogate") from None
    return value


# --------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def api_server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def registries(api_server: RecordingServer) -> Iterator[dict[str, Registry]]:
    regs: dict[str, Registry] = {}
    for api in PACKAGES:
        if not (_folder(api) / "policy.json").is_file():
            continue
        reg = Registry.from_dir(
            _folder(api), credentials=AnySecret(), receipts=MemoryReceiptStore(), cursor_key=b"f" * 32
        )
        prefix = str(reg.policy.get("base_url") or "").split("://", 1)[-1]
        path = "/" + prefix.split("/", 1)[1] if "/" in prefix else ""
        reg.base_url = api_server.base_url + path.rstrip("/")
        regs[api] = reg
    yield regs
    for reg in regs.values():
        reg.close()


def _everyone(reg: Registry) -> Actor:
    scopes = {s for name in reg.tool_names() for s in reg.row_json(name).get("permission") or []}
    return Actor.of("fuzzer", scopes)


_STRATEGIES: dict[tuple[str, str], st.SearchStrategy[Any]] = {}


def arguments(reg: Registry, api: str, tool: str) -> st.SearchStrategy[Any]:
    """Arbitrary arguments, valid arguments with a few members replaced, or no object at all."""
    cached = _STRATEGIES.get((api, tool))
    if cached is not None:
        return cached
    names = sorted(reg.specs[tool].input_schema.get("properties") or {})
    key_names = st.sampled_from(names) | st.text(max_size=8) if names else st.text(max_size=8)
    options: list[st.SearchStrategy[Any]] = [st.dictionaries(key_names, VALUES, max_size=5), VALUES]
    try:
        base = valid_args(reg, tool)
    except CannotSynthesise:
        base = None
    if base is not None and names:
        key = (reg.row_json(tool).get("idempotency") or {}).get("arg")
        fresh_key = st.uuids().map(lambda u: {key: str(u)} if key else {})

        def over(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
            return st.builds(
                lambda k, o: {**base, **k, **o},
                fresh_key,
                st.dictionaries(st.sampled_from(names), values, max_size=2),
            )

        options = [over(VALUES), over(VALUES), over(JSON_VALUES), over(st.nothing()), *options]
    strategy = st.one_of(*options)
    _STRATEGIES[(api, tool)] = strategy
    return strategy


def _call(reg: Registry, tool: str, args: Any, actor: Actor, approval: Approval | None) -> CallResult:
    failure = ""
    try:
        result = reg.call(tool, args, actor=actor, approval=approval)
    except Exception as exc:  # noqa: BLE001 - the guarantee under test is that nothing is raised
        failure = f"Registry.call({tool!r}) raised {type(exc).__name__}: {str(exc)[:300]}"
    assert not failure, failure
    assert isinstance(result, CallResult), type(result)
    json.dumps(result.to_json(), allow_nan=False)  # strict JSON, whatever the input was
    return result


def _check(
    reg: Registry, server: RecordingServer, tool: str, args: Any, actor: Actor, approval: Approval | None
) -> CallResult:
    before = len(server.requests)
    result = _call(reg, tool, args, actor, approval)
    sent = server.requests[before:]
    code = result.error.code if result.error is not None else None
    event(f"{reg.row_json(tool).get('mode')}: {'sent' if sent else code or 'ok'}")
    if (
        reg.row_json(tool).get("mode") == "preview"
    ):  # a composite's preview runs its reads, and writes nothing
        reads = len(reg.specs[tool].steps)
        assert all(r.method == "GET" for r in sent) and len(sent) <= reads, (
            f"preview {tool} sent {len(sent)} request(s)"
        )
    if code == "invalid_arguments":
        assert sent == [], f"{tool}: invalid_arguments, yet {len(sent)} request(s) reached the API"
    if sent:
        try:
            plain = json_form({} if args is None else args)  # no arguments means {}
        except NotJson as exc:
            pytest.fail(f"{tool} sent a request for arguments without a JSON form ({exc})")
        assert isinstance(plain, dict), f"{tool} sent a request for non-object arguments"
        spec = reg.specs[tool]
        normalised = normalise_nulls(plain, spec.input_schema, spec.send_null)
        errors = [e.message for e in Draft202012Validator(spec.input_schema).iter_errors(normalised)]
        assert errors == [], f"{tool} sent a request for arguments its input schema refuses: {errors[:2]}"
    return result


@pytest.mark.parametrize("api,tool", TOOLS, ids=[f"{a}-{t}" for a, t in TOOLS])
@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_any_arguments_give_a_structured_result(
    api: str, tool: str, data: st.DataObject, registries: dict[str, Registry], api_server: RecordingServer
) -> None:
    reg = registries.get(api)
    if reg is None:
        pytest.skip(f"generated/{api} is not built")
    actor = _everyone(reg)
    drawn = data.draw(arguments(reg, api, tool), label="arguments")
    args = materialise(drawn)
    row = reg.row_json(tool)
    approval: Approval | None = None
    if row.get("mode") == "record" and row.get("pair") in reg.specs:
        key = (row.get("idempotency") or {}).get("arg")
        shown_args = {k: v for k, v in args.items() if k != key} if isinstance(args, dict) else args
        shown = _check(reg, api_server, str(row["pair"]), shown_args, actor, None)
        if shown.ok and shown.result is not None:
            approval = Approval(shown.result["preview_id"], approval_id=str(uuid.uuid4()))  # a new approval
    _check(reg, api_server, tool, args, actor, approval)
