"""The corpus harness's calls of one built spec (`benchmarks/corpus.py`, steps 3 and 4): Prism serving
the spec, the runtime calling every tool against it, and ``toolgen serve`` called over MCP.

- `Prism`: ``prism mock SPEC`` on a free loopback port; its ``base_url`` once it listens.
- `call_tools(gen_dir, spec, base_url, records, rel, deadline)`: every read and preview tool of the
  package built at `gen_dir` (one argument example per `corpus_args.generate_args` mode, when they
  differ; the next page when a read gives a cursor) and `records` record tools (preview -> approve
  -> record), through `Registry.call` against Prism at `base_url`; one dict per call: the tool, the
  arguments, the request sent and the answer received (excerpts), the spec's own verdict on a 2xx
  body the runtime did not take as it is (`response_conformance`), and the call's outcome and cause
  (`corpuslib.classify`). No call starts after `deadline` (``time.monotonic()``).
- `serve_checks(gen_dir, base_url, calls, workdir)`: ``toolgen serve`` over stdio and Streamable HTTP
  with the official MCP client, calling up to three read tools with their in-process arguments.

Input: a built package folder (``policy.json``, ``mcp.json``) and the spec it was built from, as
loaded JSON. Needs the ``corpus`` extra (httpx, openapi-schema-validator, the ``mcp`` client).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

# benchmarks/ on the path: corpuslib is imported by file name, also when this file is loaded by path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpuslib as lib
from corpus_args import ArgumentError, generate_args

if TYPE_CHECKING:
    from toolgen.runtime import Approval


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Prism:
    """``prism mock SPEC`` on a free loopback port, started at once; `ready` waits until it listens
    (so the catalog checks run while it loads the spec); `close` stops it. It stays in the worker's
    process group, so a worker killed for its timeout takes Prism with it."""

    def __init__(self, prism: str, spec: Path, log: Path) -> None:
        self.port = _free_port()
        self.log = log
        with log.open("w", encoding="utf-8") as out:
            self.proc = subprocess.Popen(
                [prism, "mock", str(spec), "-p", str(self.port), "-h", "127.0.0.1"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def ready(self, timeout: float) -> tuple[str | None, str]:
        """``(base_url, "")`` once Prism listens, else ``(None, reason)``: one line of its output."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log.read_text(encoding="utf-8", errors="replace")
            if "Prism is listening" in text:
                return f"http://127.0.0.1:{self.port}", ""
            if self.proc.poll() is not None or time.monotonic() > deadline:
                lines = [ln for ln in text.splitlines() if ln.strip()]
                errors = [ln for ln in lines if "error" in ln.lower() or "fatal" in ln.lower()]
                reason = (errors or lines or [f"exited {self.proc.returncode}"])[-1]
                if self.proc.poll() is None:
                    reason = f"not listening after {timeout:.0f} s: " + reason
                return None, _strip_prism_log(reason)[:300]
            time.sleep(0.2)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _strip_prism_log(line: str) -> str:
    return re.sub(
        r"^\[[^\]]*\]\s*›\s*(\[[A-Z ]+\]\s*)?\S*\s*(error|fatal)?\s*", "", line.strip(), flags=re.IGNORECASE
    )


def _excerpt(value: Any, limit: int = 300) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


class Capture:
    """httpx event hooks that keep the last request the runtime sent to the operation and Prism's answer."""

    def __init__(self) -> None:
        self.request: Any = None
        self.response: Any = None

    def reset(self) -> None:
        self.request = self.response = None

    def on_request(self, request: Any) -> None:  # a redirect followed is not the operation's own exchange
        self.request = (
            request if self.request is None or request.url.path == self.request.url.path else self.request
        )

    def on_response(self, response: Any) -> None:
        response.read()
        self.response = response if response.request.url.path == self.request.url.path else self.response


def _decode(response: Any) -> tuple[Any, bool]:
    """Prism's body: ``(parsed JSON, True)`` for a JSON media type that parses, else ``(text, False)``."""
    ctype = response.headers.get("content-type", "")
    if "json" in ctype:
        try:
            return json.loads(response.content), True
        except ValueError:
            pass
    return response.content[:2000].decode("utf-8", "replace"), False


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def response_conformance(
    spec: Mapping[str, Any], row: Mapping[str, Any], status: int, ctype: str, body: Any
) -> tuple[bool | None, str | None, bool | None]:
    """Whether `body` (Prism's JSON answer) fits the spec's own schema for this operation's `status`
    response and media type, checked by openapi-schema-validator (OAS 3.0 or 3.1 rules, formats
    asserted as the runtime asserts them): ``(fits, first violation, whether the spec gives an example
    there: on the media type, the schema's root, or the very schema the violating value breaks)``; ``fits`` is ``None`` when there is
    no schema to check against."""
    from_example: bool | None = None
    try:
        from openapi_schema_validator import (
            OAS30Validator,
            OAS31Validator,
            oas30_format_checker,
            oas31_format_checker,
        )

        found = spec_operation(spec, row)
        if found is None:
            return None, None, None
        path, method = found[0], str(row["operation"]["method"]).lower()
        responses = found[1]["responses"]
        key = next(
            (
                k
                for k in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default")
                if k in responses
            ),
            None,
        )
        if key is None:
            return None, None, None
        pointer = f"#/paths/{_escape(path)}/{method}/responses/{_escape(key)}"
        response = responses[key]
        while isinstance(response, Mapping) and "$ref" in response:
            ref = str(response["$ref"])
            pointer = ref
            target: Any = spec
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            response = target
        content = response.get("content") or {}
        media = ctype.split(";")[0].strip().lower()
        chosen = (
            next((m for m in content if m.lower() == media), None)
            or next((m for m in content if m.endswith("/*") and media.startswith(m[:-1])), None)
            or next((m for m in content if "json" in m.lower()), None)
        )
        if chosen is None or "schema" not in content[chosen]:
            return None, None, None
        media_object = content[chosen]
        top = media_object["schema"]
        from_example = bool(
            media_object.get("example") is not None
            or media_object.get("examples")
            or (isinstance(top, Mapping) and top.get("example") is not None)
        )
        root = {k: v for k, v in spec.items() if k != "$ref"}
        root["$ref"] = f"{pointer}/content/{_escape(chosen)}/schema"
        oas31 = str(spec.get("openapi", "")).startswith("3.1")
        # formats asserted as the runtime asserts them (a `date-time` is RFC 3339, as OpenAPI says)
        validator = (
            OAS31Validator(root, format_checker=oas31_format_checker)
            if oas31
            else OAS30Validator(root, format_checker=oas30_format_checker)
        )
        errors = list(validator.iter_errors(body))
    except Exception as exc:  # noqa: BLE001 - an unreadable schema: say so, do not judge
        return None, f"not checked: {type(exc).__name__}", from_example
    if errors:
        e = errors[0]
        if isinstance(e.schema, Mapping) and "example" in e.schema and e.schema["example"] == e.instance:
            from_example = True  # the value is the example the spec gives at that very schema
        return False, f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}", from_example
    return True, None, from_example


#: headers httpx adds to every request (not the runtime's choice)
_HTTPX_DEFAULTS = frozenset({"host", "accept-encoding", "connection", "user-agent", "content-length"})


def spec_operation(spec: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The spec's path template and operation object of a policy row: by the row's path and method,
    else by operationId (the policy's path may differ: AWS's ``/#X-Amz-Target=...`` is sent as ``/``)."""
    op = row.get("operation") or {}
    method = str(op.get("method", "")).lower()
    paths = spec.get("paths") or {}
    item = paths.get(op.get("path"))
    if isinstance(item, Mapping) and isinstance(item.get(method), Mapping):
        return str(op["path"]), item[method]
    for path, item in paths.items():
        if (
            isinstance(item, Mapping)
            and isinstance(item.get(method), Mapping)
            and item[method].get("operationId") == op.get("id")
        ):
            return str(path), item[method]
    return None


def _declared(responses: Any) -> dict[str, Any]:  # the Observation's declared response keys
    keys = tuple(sorted(str(k) for k in responses)) if isinstance(responses, Mapping) else ()
    return {
        "declared": keys,
        "declares_success": not isinstance(responses, Mapping) or any(k[0] == "2" for k in keys),
    }


class ToolCalls:
    """The calls of one built package against Prism: a `Registry` over it with a dummy secret for every
    ``auth`` secret its policy names and an actor holding every scope, the HTTP exchanges captured
    (`Capture`); `calls` holds one dict per call, in the order made. `close` closes the registry and
    its HTTP client."""

    def __init__(self, gen_dir: Path, spec: Mapping[str, Any], base_url: str) -> None:
        import httpx

        from toolgen.runtime import Actor, Registry
        from toolgen.runtime.call.credentials import StaticCredentials

        policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
        self.catalog = {t["name"]: t for t in json.loads((gen_dir / "mcp.json").read_text(encoding="utf-8"))}
        secrets: dict[str, str] = {}
        scopes: set[str] = set()
        for row in policy["tools"]:
            scopes.update(row.get("permission") or [])
            for auth in row.get("auth") or []:
                basic = auth.get("kind") == "basic"
                secrets[auth["secret"]] = "corpus-user:corpus-secret" if basic else "corpus-secret-token"
        self.spec = spec
        self.capture = Capture()
        hooks: dict[str, list[Callable[..., Any]]] = {
            "request": [self.capture.on_request],
            "response": [self.capture.on_response],
        }
        self.client = httpx.Client(follow_redirects=False, event_hooks=hooks)
        self.registry = Registry(
            policy,
            list(self.catalog.values()),
            base_url=base_url,
            credentials=StaticCredentials(secrets),
            http_client=self.client,
        )
        self.actor = Actor.of("corpus", scopes)
        self.rows = {r["tool"]: r for r in policy["tools"]}
        self.calls: list[dict[str, Any]] = []

    def close(self) -> None:
        self.registry.close()
        self.client.close()

    def call(
        self,
        tool: str,
        args: dict[str, Any] | None,
        example: str,
        argen_error: str | None = None,
        approval: Approval | None = None,
    ) -> dict[str, Any]:
        """Call `tool` with `args` (the argument example named `example`; none when `argen_error` says
        why none could be made), record the call in `calls` and return its dict."""
        self.capture.reset()
        found = spec_operation(self.spec, row := self.rows[tool])
        obs = lib.Observation(
            argen_error=argen_error,
            route=found[0] if found else None,
            **_declared(found[1].get("responses") if found else None),
        )
        entry: dict[str, Any] = {"tool": tool, "mode": row["mode"], "example": example}
        started = time.perf_counter()
        if argen_error is None:
            entry["args"] = _excerpt(args, 2000)
            self._send(tool, args, approval, obs, entry)
            if self.capture.request is not None:
                entry["sent"] = self._sent(obs)
            if self.capture.response is not None:
                self._received(row, obs, entry)
            if obs.result is not None:
                _result_fields(obs.result, entry)
        entry["outcome"], entry["cause"] = lib.classify(obs)
        entry["obs"] = lib.observation_record(obs)
        entry["seconds"] = round(time.perf_counter() - started, 3)
        self.calls.append(entry)
        return entry

    def _send(
        self,
        tool: str,
        args: dict[str, Any] | None,
        approval: Approval | None,
        obs: lib.Observation,
        entry: dict[str, Any],
    ) -> None:
        """`Registry.call`: its result into `obs`; an internal error's or a raise's exception into `entry`."""
        try:
            res = self.registry.call(tool, args, actor=self.actor, approval=approval)
            obs.result = res.to_json()
            if res.error is not None and res.error.code == "internal_error":
                events = [e for e in getattr(self.registry.audit, "events", []) if e.code == "internal_error"]
                if events:
                    obs.exception = None
                    entry["exception"] = (events[-1].detail or {}).get("error")
        except Exception as exc:  # noqa: BLE001 - the harness reports it: the runtime promised not to raise
            obs.exception = type(exc).__name__
            entry["exception"] = f"{type(exc).__name__}: {str(exc)[:200]}"

    def _sent(self, obs: lib.Observation) -> dict[str, Any]:
        """The request the runtime sent (an excerpt; the headers httpx adds left out)."""
        req = self.capture.request
        obs.sent_type = req.headers.get("content-type")
        return {
            "method": req.method,
            "url": _excerpt(str(req.url), 200),
            "headers": sorted(k for k in req.headers if k.lower() not in _HTTPX_DEFAULTS),
            "content_type": req.headers.get("content-type"),
            "body": _excerpt(req.content.decode("utf-8", "replace"), 200) if req.content else None,
        }

    def _received(self, row: Mapping[str, Any], obs: lib.Observation, entry: dict[str, Any]) -> None:
        """Prism's answer into `obs` and `entry` (``received``): its violations, and the spec's own
        verdict on a 2xx JSON body the runtime did not take as it is (``spec_check``)."""
        resp = self.capture.response
        obs.status = resp.status_code
        obs.headers = dict(resp.headers)
        obs.body, is_json = _decode(resp)
        ctype = resp.headers.get("content-type", "")
        entry["received"] = {"status": resp.status_code, "content_type": ctype, "body": _excerpt(obs.body)}
        violations = lib.prism_violations(obs.headers, obs.body)
        if violations:
            entry["received"]["violations"] = violations[:5]
        result = obs.result or {}
        answer_violations = lib.prism_violations(obs.headers, obs.body, side="response")
        if answer_violations:
            entry["received"]["answer_violations"] = answer_violations[:5]
        if 200 <= resp.status_code < 300 and (not result.get("ok") or result.get("warnings")) and is_json:
            obs.body_conforms, obs.body_violation, obs.from_example = response_conformance(
                self.spec, row, resp.status_code, ctype, obs.body
            )
            entry["spec_check"] = obs.body_violation or ("fits" if obs.body_conforms else "not checked")
            entry["spec_example"] = obs.from_example

    def examples(self, tool: str) -> list[tuple[str, dict[str, Any] | None, str | None]]:
        """``(mode, arguments, None)`` per `corpus_args.generate_args` mode whose arguments differ from
        the earlier mode's, or ``(mode, None, why)`` when none can be made; the cursor argument left out."""
        schema = self.catalog[tool]["inputSchema"]
        cursor = (self.rows[tool].get("pagination") or {}).get("cursor_arg")
        if cursor and cursor in schema.get("properties", {}):
            # the cursor is the runtime's own (it issues and signs it): a caller only passes one back
            schema = {
                **schema,
                "properties": {k: v for k, v in schema["properties"].items() if k != cursor},
                "required": [r for r in schema.get("required", []) if r != cursor],
            }
        out: list[tuple[str, dict[str, Any] | None, str | None]] = []
        seen: list[Any] = []
        for mode in ("required", "full"):
            try:
                args = generate_args(schema, mode)
            except ArgumentError as exc:
                out.append((mode, None, str(exc)))
                break
            if args not in seen:
                seen.append(args)
                out.append((mode, args, None))
        return out

    def call_reads(self, deadline: float) -> None:
        """Every read and preview tool with each of its argument examples, and the next page of a read
        that answered with a cursor; none started after `deadline`."""
        for tool in sorted(self.rows):
            if self.rows[tool]["mode"] not in ("read", "preview"):
                continue
            if time.monotonic() > deadline:
                break
            for mode, args, err in self.examples(tool):
                first = self.call(tool, args, mode, err)
                cursor = (self.rows[tool].get("pagination") or {}).get("cursor_arg")
                if cursor and first.get("next_cursor") and args is not None:
                    self.call(tool, {**args, cursor: first["next_cursor"]}, "next-page")

    def call_records(self, records: int, rel: str, deadline: float) -> None:
        """`records` record tools of the spec at `rel` (a deterministic sample), each run preview ->
        approve -> record; none started after `deadline`."""
        record_tools = sorted(
            (t for t in self.rows if self.rows[t]["mode"] == "record"),
            key=lambda t: lib.sample_order(rel + "#" + t),
        )[:records]
        for tool in sorted(record_tools):
            if time.monotonic() > deadline:
                break
            self.call_record(tool, rel)

    def call_record(self, tool: str, rel: str) -> None:
        """Record tool `tool`: its preview called first when it takes a ``preview_id``, an idempotency
        key of its own, an approval when its row requires one."""
        from toolgen.runtime import Approval

        row = self.rows[tool]
        schema = self.catalog[tool]["inputSchema"]
        preview_tool = row.get("pair")
        props = schema.get("properties", {})
        preview_id: str | None = None
        if "preview_id" in props and preview_tool in self.rows:
            (_mode, args, err), *_ = self.examples(preview_tool)
            prev = self.call(preview_tool, args, "for-record", err)
            if not prev.get("ok"):
                return
            shown = self.registry.call(preview_tool, args, actor=self.actor)
            preview_id = shown.result["preview_id"]  # type: ignore[index]
        try:
            rec_args = generate_args(schema, "required")
        except ArgumentError as exc:
            self.call(tool, None, "record", str(exc))
            return
        if preview_id is not None:
            rec_args["preview_id"] = preview_id
        key = (row.get("idempotency") or {}).get("arg")
        if key:
            rec_args[key] = f"corpus-{lib.sample_order(rel + tool)[:12]}"
        approval: Approval | None = None
        if row.get("approval") == "required":
            approval = Approval(preview_id or "", approved_by="corpus")
        if approval is not None and preview_id is None:
            unkeyed = {k: v for k, v in rec_args.items() if k != key}
            previewed = self.registry.call(preview_tool, unkeyed, actor=self.actor)
            approval = Approval(str((previewed.result or {}).get("preview_id", "")), approved_by="corpus")
        self.call(tool, rec_args, "record", approval=approval)


def _result_fields(result: Mapping[str, Any], entry: dict[str, Any]) -> None:
    """What a call's result says, into `entry`: ``ok``, a next page's cursor, the error, the warnings."""
    entry["ok"] = result.get("ok")
    shaped = result.get("result")
    if isinstance(shaped, Mapping) and isinstance(shaped.get("next_cursor"), str):
        entry["next_cursor"] = shaped["next_cursor"]
    if not result.get("ok"):
        err = result.get("error", {})
        entry["error"] = {"code": err.get("code"), "message": _excerpt(err.get("message", ""), 300)}
        if isinstance(err.get("details"), Mapping) and "pointer" in err["details"]:
            entry["error"]["pointer"] = err["details"]["pointer"]
    if result.get("warnings"):
        entry["warnings"] = [_excerpt(w, 300) for w in result["warnings"][:3]]


def call_tools(
    gen_dir: Path, spec: Mapping[str, Any], base_url: str, records: int, rel: str, deadline: float
) -> list[dict[str, Any]]:
    """Every read and preview tool (two argument examples when they differ), and `records` record
    tools (preview -> approve -> record), through `Registry.call`; one dict per call."""
    tool_calls = ToolCalls(gen_dir, spec, base_url)
    try:
        tool_calls.call_reads(deadline)
        tool_calls.call_records(records, rel, deadline)
    finally:
        tool_calls.close()
    return tool_calls.calls


def serve_checks(gen_dir: Path, base_url: str, calls: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    """`toolgen serve` over stdio and Streamable HTTP with the official MCP client: list the tools,
    then call up to three read tools (those that conformed in-process first) with the arguments
    they had in-process, and compare the outcome (an error code, or none)."""
    import anyio

    policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
    scopes = sorted({s for r in policy["tools"] for s in r.get("permission") or []})
    env = {**os.environ}
    for row in policy["tools"]:
        for auth in row.get("auth") or []:
            env[auth["secret"]] = (
                "corpus-user:corpus-secret" if auth.get("kind") == "basic" else "corpus-secret-token"
            )
    # a next page's cursor was issued (and signed) by the in-process registry: not replayable elsewhere
    picks = [
        c
        for c in calls
        if c["mode"] == "read"
        and c.get("args")
        and c["outcome"] != "argen_failed"
        and c["example"] != "next-page"
    ]
    picks = sorted(picks, key=lambda c: c["outcome"] != "conforms")[:3]
    picks_args = []
    for c in picks:
        try:
            picks_args.append(
                (
                    c["tool"],
                    json.loads(c["args"]),
                    (c.get("error") or {}).get("code"),
                    bool(c.get("warnings")),
                )
            )
        except ValueError:
            continue
    common = ["--scopes", ",".join(scopes) or "", "--base-url", base_url, "--receipts", "memory://"]
    toolgen = [sys.executable, "-m", "toolgen"]

    async def exercise(client: Any) -> dict[str, Any]:
        listed = await client.list_tools()
        out: dict[str, Any] = {"listed": len(listed.tools), "calls": []}
        for tool, args, expected, warned in picks_args:
            res = await client.call_tool(tool, args)
            err = (res.structured_content or {}).get("error") if res.is_error else None
            code = (err or {}).get("code")
            out["calls"].append(
                {
                    "tool": tool,
                    "ok": not res.is_error,
                    "code": code,
                    "same": code == expected,
                    "warned_in_process": warned,
                }
            )
        return out

    async def stdio() -> dict[str, Any]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(
            command=toolgen[0], args=[*toolgen[1:], "serve", str(gen_dir), *common], env=env, cwd=str(workdir)
        )
        with anyio.fail_after(120):
            async with Client(params) as client:
                return await exercise(client)

    async def http_client(url: str) -> dict[str, Any]:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(120):
            async with Client(streamable_http_client(url)) as client:
                return await exercise(client)

    def http() -> dict[str, Any]:
        port = _free_port()
        proc = subprocess.Popen(
            [*toolgen, "serve", str(gen_dir), *common, "--http", f"127.0.0.1:{port}", "--no-auth"],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            line = ""
            while (
                True
            ):  # the server prints its warnings, then the bound address (the run's timeout bounds this)
                line = proc.stderr.readline()
                if "serving MCP on" in line or not line:
                    break
            url = re.search(r"http://\S+/mcp", line)
            if not url:
                return {"error": f"serve --http did not start: {line.strip()[:200]}"}
            return anyio.run(http_client, url[0])
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    result: dict[str, Any] = {}
    runs: tuple[tuple[str, Callable[[], Any]], ...] = (("stdio", lambda: anyio.run(stdio)), ("http", http))
    for name, fn in runs:
        try:
            result[name] = fn()
        except BaseException as exc:  # noqa: BLE001 - exception groups from the client's task groups
            leaf = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            result[name] = {"error": f"{type(leaf).__name__}: {str(leaf)[:200]}"}
    return result
