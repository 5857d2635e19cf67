"""The declared answers of `test_declared_answers` judged by a third party: the corpus harness runs a
small spec through ``toolgen init``, ``build``, the provider SDK checks and the runtime against
Prism (``prism mock``), which checks each request against the spec and answers from it.

- the ``text/html`` read and the redirect-only download link conform (Prism's answers are the ones
  the spec declares, and the runtime returns them);
- the form-urlencoded body declared as a plain string is sent as that string; Prism decodes every
  form body into an object, so it cannot judge such a body and the harness counts it apart
  (``prism_limit``), never as a conforming call.

Slow by nature (Prism starts a Node process and loads the spec).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(
    os.environ.get("TOOLGEN_CORPUS_CACHE", str(Path.home() / ".cache" / "toolgen-corpus"))
).expanduser()
PRISM = os.environ.get("TOOLGEN_PRISM") or str(CACHE / "node_modules" / ".bin" / "prism")

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Declared answers", "version": "1"},
    "servers": [{"url": "https://declared.example.com"}],
    "paths": {
        "/form": {
            "post": {
                "operationId": "postForm",
                "summary": "Submit a form",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {"type": "string", "example": "a=1&b=2"}
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                                "example": {"ok": True},
                            }
                        },
                    }
                },
            }
        },
        "/page": {
            "get": {
                "operationId": "getPage",
                "summary": "Get the status page",
                "responses": {
                    "200": {
                        "description": "an HTML page",
                        "content": {
                            "text/html": {
                                "schema": {"type": "string"},
                                "example": "<html><body>ok</body></html>",
                            }
                        },
                    }
                },
            }
        },
        "/files/{id}/download": {
            "get": {
                "operationId": "downloadFile",
                "summary": "Download a file",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "302": {
                        "description": "to the file",
                        "headers": {
                            "Location": {"schema": {"type": "string"}, "example": "https://cdn.example.net/f"}
                        },
                    }
                },
            }
        },
    },
}


@pytest.mark.slow
def test_prism_judges_the_declared_answers(tmp_path: Path) -> None:
    if not Path(PRISM).is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no prism at {PRISM} (CI installs it: see .ci/run)")
        pytest.skip(f"no prism at {PRISM}")
    spec = tmp_path / "declared.json"
    spec.write_text(json.dumps(SPEC, indent=1), encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "corpus.py"),
            "--spec",
            str(spec),
            "--cache",
            str(tmp_path / "cache"),
            "--prism",
            PRISM,
            "--serve",
            "0",
            "--run",
            "declared",
            "--out",
            str(tmp_path / "report.md"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (result,) = (tmp_path / "cache" / "results" / "declared").glob("*.result.json")
    calls = {
        c["tool"]: c
        for c in json.loads(result.read_text(encoding="utf-8"))["calls"]
        if c["mode"] != "preview"
    }
    assert calls["get_page"]["outcome"] == "conforms", calls["get_page"]
    assert calls["get_page"]["received"]["content_type"].startswith("text/html")
    assert calls["download_file"]["outcome"] == "conforms", calls["download_file"]
    form = calls["record_post_form"]
    assert form["sent"]["content_type"] == "application/x-www-form-urlencoded"
    previewed = json.loads(
        next(
            c
            for c in json.loads(result.read_text(encoding="utf-8"))["calls"]
            if c["tool"] == "preview_post_form"
        )["args"]
    )["body"]
    assert form["sent"]["body"] == previewed  # the string, as the preview showed it
    assert (form["outcome"], form["cause"]) == (
        "prism_limit",
        "Prism decodes a form body into an object: a form body the spec declares as a string never fits",
    )
