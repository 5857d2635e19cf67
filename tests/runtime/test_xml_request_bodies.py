"""An XML request body (AWS's REST-XML services: CloudFront's ListDistributionsByRealtimeLogConfig,
``text/xml`` with an inline object schema; a component with ``xml.name``) is one string argument: the
runtime sends the document the model writes, byte for byte, with the spec's media type. The build
says so with a located ``request-body-xml`` warning, and the argument's description names what the
schema says the document holds, so the model is not left to guess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import Built, build
from tests.support.recording_server import RecordingServer

from toolgen.runtime.serving.registry import Actor, Registry

SPEC: dict[str, Any] = {
    "openapi": "3.0.0",
    "info": {"title": "Edge", "version": "2020-05-31"},
    "servers": [{"url": "https://edge.example.com"}],
    "components": {
        "schemas": {
            "TagsRequest": {
                "type": "object",
                "xml": {"name": "Tags", "namespace": "http://edge.example.com/doc/2020-05-31/"},
                "properties": {
                    "Items": {"type": "array", "items": {"type": "string", "xml": {"name": "Tag"}}}
                },
            }
        }
    },
    "paths": {
        "/2020-05-31/distributionsByRealtimeLogConfig/": {
            "post": {
                "operationId": "ListDistributionsByRealtimeLogConfig2020_05_31",
                "summary": "List distributions.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "text/xml": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "Marker": {"type": "string"},
                                    "MaxItems": {"type": "string"},
                                    "RealtimeLogConfigName": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {"description": "ok", "content": {"text/xml": {"schema": {"type": "object"}}}}
                },
            }
        },
        "/2020-05-31/tagging": {
            "post": {
                "operationId": "TagResource",
                "summary": "Tag a resource.",
                "requestBody": {
                    "required": True,
                    "content": {"application/xml": {"schema": {"$ref": "#/components/schemas/TagsRequest"}}},
                },
                "responses": {"204": {"description": "done"}},
            }
        },
    },
}
MAP = """\
tools:
  list_distributions:
    operation: ListDistributionsByRealtimeLogConfig2020_05_31
    effect: read
  tag_resource:
    operation: TagResource
    effect: write
    approval: never
    preview: false
"""
DOCUMENT = (
    '<?xml version="1.0" encoding="UTF-8"?><ListDistributionsByRealtimeLogConfigRequest '
    'xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><RealtimeLogConfigName>logs</RealtimeLogConfigName>'
    "</ListDistributionsByRealtimeLogConfigRequest>"
)


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("edge")
    spec = tmp / "edge.json"
    spec.write_text(json.dumps(SPEC, indent=1), encoding="utf-8")
    return build(tmp, spec, MAP, name="edge", emit="mcp,policy,report")


def test_the_build_warns_at_the_body_schema_and_describes_the_document(edge: Built) -> None:
    report = (edge.out / "REPORT.md").read_text(encoding="utf-8")
    located = [line for line in report.splitlines() if line.startswith("- `request-body-xml` edge.json:")]
    assert len(located) == 2
    assert "/content/text~1xml/schema)" in located[0] and "/content/application~1xml/schema)" in located[1]
    inputs = {t["name"]: t["inputSchema"] for t in edge.json("mcp.json")}
    body = inputs["list_distributions"]["properties"]["body"]
    assert body["type"] == "string"
    assert body["description"] == (
        "Request body: an XML document (text/xml); its schema's top-level members: "
        "Marker, MaxItems, RealtimeLogConfigName."
    )
    assert inputs["record_tag_resource"]["properties"]["body"]["description"].startswith(
        "Request body: an XML document (application/xml) whose root element is <Tags>; its schema's top-level "
        "members: Items."
    )


def test_the_document_the_model_writes_is_sent_as_is(edge: Built, tmp_path: Path) -> None:
    with RecordingServer() as server:
        server.reply(
            "POST", "distributionsByRealtimeLogConfig", 200, b"<DistributionList/>", content_type="text/xml"
        )
        registry = Registry.from_dir(edge.out, base_url=server.base_url)
        try:
            result = registry.call("list_distributions", {"body": DOCUMENT}, actor=Actor.of("a", set()))
        finally:
            registry.close()
        assert result.ok, result.error
        assert server.last.body == DOCUMENT.encode("utf-8")
        assert server.last.header("Content-Type") == "text/xml"
