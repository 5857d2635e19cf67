"""server.json for the MCP registry (format 2025-12-11): written for an API whose toolgen.yaml entry
has ``registry:``, validated against the registry's published JSON Schema (vendored byte for byte,
provenance in generator/toolgen/schemas/README.md), located refusals of a bad listing, and
``build --check`` seeing a change of the listing."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, TICKETS_SPEC_PATH, run
from tests.support.profiles import examples

from toolgen.compile.ir import ApiIR
from toolgen.dialects import RegistryListing
from toolgen.emit.server_json import (
    SCHEMA_FILE,
    SCHEMA_URL,
    registry_schema,
    server_json,
    server_json_problems,
)

SCHEMAS_README = REPO / "generator" / "toolgen" / "schemas" / "README.md"


def test_the_vendored_schema_is_the_published_file() -> None:
    digest = hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest()
    assert f"`{digest}`" in SCHEMAS_README.read_text(encoding="utf-8")
    assert registry_schema()["$id"] == SCHEMA_URL
    jsonschema.Draft7Validator.check_schema(registry_schema())


def test_the_repositorys_server_json_conforms() -> None:
    doc = json.loads((REPO / "generated" / "tickets" / "server.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(registry_schema()).validate(doc)
    assert doc["$schema"] == SCHEMA_URL and doc["remotes"][0]["type"] == "streamable-http"
    assert doc["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["tools"] == 10


def test_the_schema_check_can_fail() -> None:
    good = {"$schema": SCHEMA_URL, "name": "com.example/t", "description": "d", "version": "1"}
    assert server_json_problems(good) == []
    assert server_json_problems({**good, "name": "no-slash"})
    assert server_json_problems({**good, "description": "x" * 101})
    assert server_json_problems({**good, "remotes": [{"type": "streamable-http", "url": "ftp://x"}]})
    assert [
        p.split(":")[0] for p in server_json_problems({k: v for k, v in good.items() if k != "version"})
    ] == ["/"]


def _project(tmp: Path, registry: str | None) -> Path:
    shutil.copy(TICKETS_SPEC_PATH, tmp / "tickets.yaml")
    (tmp / "intent.yaml").write_text(
        "toolgen: 1\nspec: tickets.yaml\napi: {name: tickets}\nauth:\n  oauth: {secret: TICKETS_TOKEN}\n"
        'tools:\n  get_ticket: {operation: getTicket, effect: read, permission: "ticket:read"}\n',
        encoding="utf-8",
    )
    entry = "  - name: tickets\n    intent_map: intent.yaml\n    out: out\n"
    if registry is not None:
        entry += f"    registry: {registry}\n"
    project = tmp / "toolgen.yaml"
    project.write_text(
        f"toolgen: 1\nemit: [mcp, policy, registry]\nschema_out: null\napis:\n{entry}", encoding="utf-8"
    )
    return project


def test_a_project_listing_writes_server_json(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        '{name: io.github.acme/tickets, version: 2.0.1, url: "https://t.example.com/mcp", '
        'repository: "https://github.com/acme/tools", website: "https://acme.example"}',
    )
    result = run("build", "--project", str(project), "-q")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "server.json").read_text(encoding="utf-8"))
    assert server_json_problems(doc) == []
    assert (doc["name"], doc["version"], doc["repository"], doc["websiteUrl"]) == (
        "io.github.acme/tickets",
        "2.0.1",
        {"url": "https://github.com/acme/tools", "source": "github"},
        "https://acme.example",
    )
    assert doc["remotes"][0]["headers"][0]["isSecret"] is True
    assert run("build", "--project", str(project), "--check").exit_code == 0
    project.write_text(
        project.read_text(encoding="utf-8").replace("t.example.com", "u.example.com"), encoding="utf-8"
    )
    stale = run("build", "--project", str(project), "--check")
    assert stale.exit_code == 1 and "u.example.com" in stale.output


def test_without_a_listing_no_server_json(tmp_path: Path) -> None:
    assert run("build", "--project", str(_project(tmp_path, None)), "-q").exit_code == 0
    assert not (tmp_path / "out" / "server.json").exists()


@pytest.mark.parametrize(
    ("registry", "key"),
    [
        ("{name: tickets}", "name"),  # no namespace
        ('{name: com.example/t, url: "tickets.example.com"}', "url"),  # not an http(s) URL
        ('{name: com.example/t, version: "^1.2"}', "version"),  # a range
        ("{name: com.example/t, description: " + "x" * 101 + "}", "description"),
        ("{name: com.example/t, icon: x}", "icon"),  # unknown key
    ],
)
def test_a_bad_listing_is_a_located_refusal(tmp_path: Path, registry: str, key: str) -> None:
    result = run("build", "--project", str(_project(tmp_path, registry)), "-q")
    assert result.exit_code == 2
    assert re.search(
        rf"toolgen.yaml:8:\d+ \(#/apis/0/registry/{key}\): error\[project-invalid\]", result.output
    ), result.output
    assert not (tmp_path / "out").exists()


NAMES = st.from_regex(r"[a-z0-9.-]{1,20}/[a-zA-Z0-9._-]{1,30}", fullmatch=True)
URLS = st.from_regex(r"https://[a-z]{1,12}\.example/[a-z/]{0,12}", fullmatch=True)


@settings(max_examples=examples(100), deadline=None)
@given(
    name=NAMES,
    title=st.text(max_size=150),
    version=st.text(max_size=300),
    url=st.none() | URLS,
    repository=st.none() | URLS,
)
def test_every_document_conforms_to_the_published_schema(
    name: str, title: str, version: str, url: str | None, repository: str | None
) -> None:
    """Whatever the spec's title and version (any text, any length), a listing the project reader accepts
    gives a server.json the registry's schema accepts."""
    ir = ApiIR("api", title, version, "", "s", "i", (), (), ())
    doc: dict[str, Any] = server_json(ir, RegistryListing(name, url=url, repository=repository))
    assert server_json_problems(doc) == [], doc
    assert server_json(ir, RegistryListing(name, url=url, repository=repository)) == doc
