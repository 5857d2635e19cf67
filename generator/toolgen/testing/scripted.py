"""A scripted model behind a loopback HTTP server that speaks four providers' wire formats.

No model is reachable from a build machine, so this is what the runner's adapters are exercised
against offline. It is NOT a language model and its scores say nothing about one: it is a fixed
lexical heuristic, named ``scripted-lexical`` wherever it appears.

Wire formats (the paths the official SDKs call, on ``http://127.0.0.1:<port>``):
``POST /v1/responses`` (OpenAI Responses), ``POST /v1/chat/completions`` (OpenAI-compatible chat),
``POST /v1/messages`` (Anthropic Messages), ``POST /v1beta/models/<model>:generateContent``
(Gemini). Each request is parsed into the user's prompt, the tools it offers (and which are
deferred) and the calls already made with their results; `LexicalModel.decide` picks the next
step; the answer is encoded in the same wire format, with usage counted as bytes / 4 ("scripted
estimate", not a provider's tokenizer).

The heuristic: the first step ranks the request's tools with the runtime's tool search
(`toolgen.runtime.ToolIndex`) over the prompt and calls the best one (a write's ``preview_*``
first); arguments are read from the prompt (an enum value named in it, a substring matching the
argument's pattern, or the words after the argument's name); a deferred tool not loaded yet is first
loaded by a tool-search step (Responses: ``tool_search_call`` + ``tool_search_output`` items;
Anthropic: ``server_tool_use`` + ``tool_search_tool_result`` blocks). Where the request offers the
client-run ``search_tools`` function instead (Chat Completions, Gemini) and the best tool is not in
the request, the model calls ``search_tools`` once with the tool's name in words (``limit`` null when
the function requires it) and, after the answer, picks again among the tools the next request
carries. After a result: an approved
preview is recorded with its ``preview_id`` and a fresh action id; a retryable error is retried
once; anything else ends with a text answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from ..runtime import ToolIndex
from ..search.tool import SEARCH_TOOL_NAME
from .loopback import LoopbackServer

MODEL_NAME = "scripted-lexical"


@dataclass
class Conversation:
    """A provider request, read: the prompt, tools (name → schema), deferred tool names, tools
    already loaded by search, and the calls made so far as (name, arguments, result JSON or None)."""

    prompt: str
    tools: dict[str, Mapping[str, Any]]
    deferred: set[str] = field(default_factory=set)
    loaded: set[str] = field(default_factory=set)
    history: list[tuple[str, Any, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Decision:
    """The next step: a call (`tool`, `arguments`) or a text answer (`tool` None)."""

    tool: str | None
    arguments: Mapping[str, Any] | None = None
    text: str = ""


def _human(name: str) -> str:
    return name.replace("_", " ")


def _kind(schema: Mapping[str, Any]) -> str | None:
    types = schema.get("type")
    if isinstance(types, list):
        types = next((t for t in types if str(t).lower() != "null"), None)
    return str(types).lower() if types else None


def _nullable(schema: Mapping[str, Any]) -> bool:
    types = schema.get("type")
    return bool(schema.get("nullable")) or (isinstance(types, list) and "null" in types)


class LexicalModel:
    """The scripted heuristic of the module docstring, over one generated package."""

    def __init__(self, package: Path) -> None:
        self.index = ToolIndex.from_dir(package)
        policy = json.loads((package / "policy.json").read_text(encoding="utf-8"))
        self.modes = {str(r["tool"]): str(r.get("mode")) for r in policy.get("tools", [])}

    def decide(self, conv: Conversation) -> Decision:
        if not conv.history:
            return self._first(conv)
        name, args, result = conv.history[-1]
        if name == SEARCH_TOOL_NAME and isinstance(result, dict) and result.get("ok") is not False:
            return self._first(conv)  # the found tools are in this request: pick again
        if not isinstance(result, dict):
            return Decision(None, text="I could not read the tool's answer.")
        if result.get("ok") is False:
            error = result.get("error") or {}
            retried = len(conv.history) >= 2 and conv.history[-2][0] == name and conv.history[-2][1] == args
            if error.get("retryable") and not retried:
                return Decision(name, args)
            return Decision(None, text=f"The call failed: {error.get('code')}.")
        approval = result.get("approval")
        record = "record_" + name.removeprefix("preview_")
        if self.modes.get(name) == "preview" and isinstance(approval, dict) and record in conv.tools:
            action = "act-" + hashlib.sha256(conv.prompt.encode()).hexdigest()[:12]
            filled: dict[str, Any] = {k: None for k in conv.tools[record].get("required") or []}
            filled.update({"preview_id": approval.get("preview_id"), "action_id": action})
            props = conv.tools[record].get("properties") or {}
            return Decision(record, {k: v for k, v in filled.items() if k in props})
        return Decision(None, text="Done.")

    def _first(self, conv: Conversation) -> Decision:
        searched = any(name == SEARCH_TOOL_NAME for name, _, _ in conv.history)
        search = conv.tools.get(SEARCH_TOOL_NAME)
        for hit in self.index.search(conv.prompt, limit=8):
            tool = hit.tool
            preview = "preview_" + tool.removeprefix("record_")
            if tool.startswith("record_") and preview in conv.tools:
                tool = preview
            if tool in conv.tools:
                return Decision(tool, fill_arguments(conv.prompt, conv.tools[tool]))
            if search is not None and not searched:
                query: dict[str, Any] = {"query": _human(tool.removeprefix("record_"))}
                if "limit" in (search.get("required") or []):
                    query["limit"] = None
                return Decision(SEARCH_TOOL_NAME, query)
        return Decision(None, text="No tool is needed for this.")


def fill_arguments(prompt: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for `schema` read from `prompt` (see the module docstring); a required argument not
    found is null when the schema admits null, else left out (the runtime then says what is missing)."""
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    names = sorted(props, key=len, reverse=True)
    out: dict[str, Any] = {}
    for name in props:
        value = _find(prompt, name, props[name], names)
        if value is not None:
            out[name] = value
        elif name in required and _nullable(props[name]):
            out[name] = None
    return out


def _find(prompt: str, name: str, schema: Mapping[str, Any], names: list[str]) -> Any:
    kind = _kind(schema)
    for value in schema.get("enum") or []:
        if isinstance(value, str) and re.search(rf"\b{re.escape(value)}\b", prompt, re.IGNORECASE):
            return value
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            found = re.search(pattern.removeprefix("^").removesuffix("$"), prompt)
        except re.error:
            found = None
        if found:
            return found.group(0)
    others = "|".join(re.escape(_human(n)) for n in names if n != name)
    stop = rf"(?=,\s(?:{others})\s|\.\s|\.$|\?|$)" if others else r"(?=\.\s|\.$|\?|$)"
    found = re.search(rf"\b{re.escape(_human(name))}\s+(.+?){stop}", prompt, re.IGNORECASE)
    if not found:
        return None
    raw = found.group(1).strip()
    if kind == "integer":
        return int(raw) if re.fullmatch(r"-?[0-9]+", raw) else None
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            return None
    if kind == "boolean":
        return raw.lower() == "true" if raw.lower() in ("true", "false") else None
    return raw if kind == "string" else None


def _tokens(data: bytes) -> int:
    return max(1, len(data) // 4)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _loads(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


# -- OpenAI Responses ----------------------------------------------------------------------------


def _read_responses(body: Mapping[str, Any]) -> Conversation:
    tools: dict[str, Mapping[str, Any]] = {}
    deferred: set[str] = set()
    for tool in body.get("tools") or []:
        inner = tool.get("tools") if tool.get("type") == "namespace" else [tool]
        for fn in inner or []:
            if fn.get("type") == "function":
                tools[str(fn["name"])] = fn.get("parameters") or {}
                if fn.get("defer_loading"):
                    deferred.add(str(fn["name"]))
    items = body.get("input") or []
    prompt = next((str(i.get("content")) for i in items if i.get("role") == "user"), "")
    conv = Conversation(prompt, tools, deferred)
    outputs = {
        i.get("call_id"): _loads(i.get("output")) for i in items if i.get("type") == "function_call_output"
    }
    for item in items:
        if item.get("type") == "function_call":
            conv.history.append(
                (str(item["name"]), _loads(item.get("arguments")), outputs.get(item.get("call_id")))
            )
        elif item.get("type") == "tool_search_output":
            for tool in item.get("tools") or []:
                conv.loaded.update(str(t["name"]) for t in tool.get("tools") or [tool])
    return conv


def _responses_tool(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for fn in tool.get("tools") or []:
                if fn.get("name") == name:
                    return {
                        "type": "namespace",
                        "name": tool["name"],
                        "description": tool.get("description", ""),
                        "tools": [fn],
                    }
        elif tool.get("name") == name:
            return dict(tool)
    return {"type": "function", "name": name}


def _namespace_of(body: Mapping[str, Any], name: str) -> str | None:
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace" and any(fn.get("name") == name for fn in tool.get("tools") or []):
            return str(tool["name"])
    return None


def _write_responses(body: Mapping[str, Any], conv: Conversation, d: Decision, raw: bytes) -> dict[str, Any]:
    rid = _digest(raw)
    n = len(conv.history) + 1
    output: list[dict[str, Any]] = []
    if d.tool is not None and d.tool in conv.deferred and d.tool not in conv.loaded:
        output.append(
            {
                "type": "tool_search_call",
                "id": f"ts_{rid}",
                "call_id": f"tsc_{n}",
                "execution": "server",
                "status": "completed",
                "arguments": {"query": _human(d.tool)},
            }
        )
        output.append(
            {
                "type": "tool_search_output",
                "id": f"tso_{rid}",
                "call_id": f"tsc_{n}",
                "execution": "server",
                "status": "completed",
                "tools": [_responses_tool(body, d.tool)],
            }
        )
    if d.tool is not None:
        call: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{rid}",
            "call_id": f"call_{n}",
            "name": d.tool,
            "arguments": json.dumps(d.arguments or {}, sort_keys=True),
            "status": "completed",
        }
        namespace = _namespace_of(body, d.tool)
        if namespace:
            call["namespace"] = namespace
        output.append(call)
    else:
        output.append(
            {
                "type": "message",
                "id": f"msg_{rid}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": d.text, "annotations": []}],
            }
        )
    out = json.dumps(output).encode()
    return {
        "id": f"resp_{rid}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": _tokens(raw),
            "output_tokens": _tokens(out),
            "total_tokens": _tokens(raw) + _tokens(out),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


# -- OpenAI chat completions ---------------------------------------------------------------------


def _read_chat(body: Mapping[str, Any]) -> Conversation:
    tools = {
        str(t["function"]["name"]): t["function"].get("parameters") or {} for t in body.get("tools") or []
    }
    messages = body.get("messages") or []
    prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    conv = Conversation(prompt, tools)
    outputs = {m.get("tool_call_id"): _loads(m.get("content")) for m in messages if m.get("role") == "tool"}
    for m in messages:
        for c in m.get("tool_calls") or []:
            conv.history.append(
                (str(c["function"]["name"]), _loads(c["function"].get("arguments")), outputs.get(c["id"]))
            )
    return conv


def _write_chat(body: Mapping[str, Any], conv: Conversation, d: Decision, raw: bytes) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": d.text if d.tool is None else None}
    if d.tool is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{len(conv.history) + 1}",
                "type": "function",
                "function": {"name": d.tool, "arguments": json.dumps(d.arguments or {}, sort_keys=True)},
            }
        ]
    out = json.dumps(message).encode()
    return {
        "id": f"chatcmpl-{_digest(raw)}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if d.tool else "stop"}],
        "usage": {
            "prompt_tokens": _tokens(raw),
            "completion_tokens": _tokens(out),
            "total_tokens": _tokens(raw) + _tokens(out),
        },
    }


# -- Anthropic Messages --------------------------------------------------------------------------


def _read_messages(body: Mapping[str, Any]) -> Conversation:
    tools: dict[str, Mapping[str, Any]] = {}
    deferred: set[str] = set()
    for tool in body.get("tools") or []:
        if "input_schema" in tool:
            tools[str(tool["name"])] = tool["input_schema"]
            if tool.get("defer_loading"):
                deferred.add(str(tool["name"]))
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages else ""
    prompt = first if isinstance(first, str) else " ".join(str(b.get("text", "")) for b in first or [])
    conv = Conversation(prompt, tools, deferred)
    results: dict[Any, Any] = {}
    for m in messages:
        for block in m.get("content") if isinstance(m.get("content"), list) else []:
            if block.get("type") == "tool_result":
                results[block.get("tool_use_id")] = _loads(block.get("content"))
    for m in messages:
        for block in m.get("content") if isinstance(m.get("content"), list) else []:
            if block.get("type") == "tool_use":
                conv.history.append((str(block["name"]), block.get("input"), results.get(block.get("id"))))
            elif block.get("type") == "tool_search_tool_result":
                conv.loaded.update(
                    str(r["tool_name"]) for r in (block.get("content") or {}).get("tool_references") or []
                )
    return conv


def _write_messages(body: Mapping[str, Any], conv: Conversation, d: Decision, raw: bytes) -> dict[str, Any]:
    rid = _digest(raw)
    n = len(conv.history) + 1
    content: list[dict[str, Any]] = []
    if d.tool is not None and d.tool in conv.deferred and d.tool not in conv.loaded:
        content.append(
            {
                "type": "server_tool_use",
                "id": f"srvtoolu_{rid}",
                "name": "tool_search_tool_bm25",
                "input": {"query": _human(d.tool)},
            }
        )
        content.append(
            {
                "type": "tool_search_tool_result",
                "tool_use_id": f"srvtoolu_{rid}",
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": d.tool}],
                },
            }
        )
    if d.tool is not None:
        content.append(
            {"type": "tool_use", "id": f"toolu_{n:04d}", "name": d.tool, "input": dict(d.arguments or {})}
        )
    else:
        content.append({"type": "text", "text": d.text})
    out = json.dumps(content).encode()
    return {
        "id": f"msg_{rid}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "tool_use" if d.tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens(raw), "output_tokens": _tokens(out)},
    }


# -- Gemini generateContent ----------------------------------------------------------------------


def _read_gemini(body: Mapping[str, Any]) -> Conversation:
    tools: dict[str, Mapping[str, Any]] = {}
    for tool in body.get("tools") or []:
        for fn in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            tools[str(fn["name"])] = fn.get("parameters") or fn.get("parametersJsonSchema") or {}
    contents = body.get("contents") or []
    prompt = next(
        (
            str(p.get("text"))
            for c in contents
            if c.get("role") == "user"
            for p in c.get("parts") or []
            if "text" in p
        ),
        "",
    )
    conv = Conversation(prompt, tools)
    responses = [
        p.get("functionResponse") or {}
        for c in contents
        for p in c.get("parts") or []
        if "functionResponse" in p
    ]
    calls = [
        p.get("functionCall") or {} for c in contents for p in c.get("parts") or [] if "functionCall" in p
    ]
    for i, call in enumerate(calls):
        response = (responses[i].get("response") or {}) if i < len(responses) else None
        result = None
        if response is not None:
            result = response.get("result", response.get("error"))
        conv.history.append((str(call.get("name")), call.get("args") or {}, result))
    return conv


def _write_gemini(body: Mapping[str, Any], conv: Conversation, d: Decision, raw: bytes) -> dict[str, Any]:
    part: dict[str, Any] = (
        {"functionCall": {"name": d.tool, "args": dict(d.arguments or {})}}
        if d.tool is not None
        else {"text": d.text}
    )
    out = json.dumps(part).encode()
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": _tokens(raw),
            "candidatesTokenCount": _tokens(out),
            "totalTokenCount": _tokens(raw) + _tokens(out),
        },
        "modelVersion": MODEL_NAME,
        "responseId": _digest(raw),
    }


_CODECS = {
    "responses": (_read_responses, _write_responses),
    "chat": (_read_chat, _write_chat),
    "messages": (_read_messages, _write_messages),
    "gemini": (_read_gemini, _write_gemini),
}


def _route(path: str) -> str | None:
    path = path.split("?", 1)[0]
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/messages"):
        return "messages"
    if path.endswith(":generateContent"):
        return "gemini"
    return None


class ScriptedModelServer(LoopbackServer):
    """The loopback server of the module docstring for one package (one request at a time). `base_url(provider)` is what an
    adapter is pointed at; `requests` counts the requests per wire format."""

    def __init__(self, package: Path, port: int = 0) -> None:
        models: list[LexicalModel] = []  # made in the serving thread: the index is an SQLite connection
        self.requests: dict[str, int] = {k: 0 for k in _CODECS}
        counts = self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                route = _route(self.path)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                if route is None or not isinstance(body, dict):
                    self._send(
                        404 if route is None else 400, {"error": {"message": "not a scripted-model request"}}
                    )
                    return
                counts[route] += 1
                read, write = _CODECS[route]
                conv = read(body)
                if not models:
                    models.append(LexicalModel(package))
                self._send(200, write(body, conv, models[0].decide(conv), raw))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload, sort_keys=True).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(HTTPServer(("127.0.0.1", port), Handler))

    def base_url(self, provider: str) -> str:
        """The base URL an adapter of `provider` takes (the SDKs add their own paths below it)."""
        address: Any = self.httpd.server_address
        root = f"http://{address[0]!s}:{address[1]}"
        return root if provider in ("anthropic", "gemini") else f"{root}/v1"
