"""A loopback server that answers `toolgen describe`'s writer requests in four providers' wire formats
(OpenAI Responses, Chat Completions, Anthropic Messages, Gemini generateContent) with text a test
chooses, so the official SDKs run for real against it. Not a model: `answer(prompt)` gives the text.

`requests` keeps every request body (parsed JSON), by wire format, so a test can read what the writer
was shown. An answer that is JSON goes to Anthropic as the forced tool call's input; any other text as
a text block (what a model that ignores the tool would send).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolgen.testing.loopback import LoopbackServer

Answer = Callable[[str], str]


def _prompt(route: str, body: dict[str, Any]) -> str:
    if route == "responses":
        return str(body.get("input"))
    if route == "chat":
        return str(body["messages"][-1]["content"])
    if route == "messages":
        return str(body["messages"][-1]["content"])
    return str(body["contents"][-1]["parts"][0]["text"])


def _encode(route: str, body: dict[str, Any], text: str) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 10}
    if route == "responses":
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": body["model"],
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                **usage,
                "total_tokens": 20,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
    if route == "chat":
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    if route == "messages":
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        block: dict[str, Any] = (
            {"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"], "input": data}
            if isinstance(data, dict)
            else {"type": "text", "text": text}
        )
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [block],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": usage,
        }
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
    }


def _route(path: str) -> str | None:
    path = path.split("?", 1)[0]
    for suffix, route in (
        ("/responses", "responses"),
        ("/chat/completions", "chat"),
        ("/messages", "messages"),
        (":generateContent", "gemini"),
    ):
        if path.endswith(suffix):
            return route
    return None


class WriterModelServer(LoopbackServer):
    """The server of the module docstring; `base_url(provider)` is what a writer is pointed at."""

    def __init__(self, answer: Answer) -> None:
        self.requests: dict[str, list[dict[str, Any]]] = {
            "responses": [],
            "chat": [],
            "messages": [],
            "gemini": [],
        }
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                route = _route(self.path)
                if route is None:
                    self._send(404, {"error": {"message": "not a writer request"}})
                    return
                body = json.loads(raw)
                seen[route].append(body)
                self._send(200, _encode(route, body, answer(_prompt(route, body))))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(ThreadingHTTPServer(("127.0.0.1", 0), Handler))

    def base_url(self, provider: str) -> str:
        address: Any = self.httpd.server_address
        root = f"http://{address[0]!s}:{address[1]}"
        return root if provider in ("anthropic", "gemini") else f"{root}/v1"
