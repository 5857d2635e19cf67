"""Stage `swagger2`, its security schemes: a Swagger 2.0 Security Scheme Object (an entry of
``securityDefinitions``) -> the OpenAPI 3.0.3 Security Scheme Object (section 4.7.27).

``basic`` -> ``{type: http, scheme: basic}``; ``apiKey`` stays (its ``name`` and ``in: query`` or
``in: header`` required); ``oauth2`` -> ``flows`` with one flow: implicit / password / application /
accessCode -> implicit / password / clientCredentials / authorizationCode, its URLs and scopes.
``description`` and ``x-*`` are kept. Anything else is a ``swagger2-invalid`` error at the 2.0
pointer. Pure: the input is not changed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..pointer import join_pointer

#: a 2.0 oauth2 ``flow`` -> (the 3.0 flow's name, the URLs it carries)
_OAUTH_FLOWS = {
    "implicit": ("implicit", ("authorizationUrl",)),
    "password": ("password", ("tokenUrl",)),
    "application": ("clientCredentials", ("tokenUrl",)),
    "accessCode": ("authorizationCode", ("authorizationUrl", "tokenUrl")),
}


def security_scheme(
    node: Any, src: str, dst: str, at: Callable[[str, str], None], error: Callable[[str, str, str, str], None]
) -> Any:
    """The 3.0 form of the 2.0 security scheme `node` (at 2.0 pointer `src`, converted pointer
    `dst`): `at(dst, src)` records where each converted member came from, `error(code, message, src,
    hint)` reports what cannot be converted (then ``{}`` is returned)."""
    at(dst, src)
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    kind = node.get("type")
    out: dict[str, Any] = {}
    if kind == "basic":
        out = {"type": "http", "scheme": "basic"}
        at(dst + "/type", src + "/type")
        at(dst + "/scheme", src + "/type")
    elif kind == "apiKey":
        if not isinstance(node.get("name"), str) or not node["name"]:
            error(
                "swagger2-invalid",
                "an apiKey security scheme needs the `name` of its header or query parameter",
                src + ("/name" if "name" in node else ""),
                "add e.g. `name: X-Api-Key`",
            )
            return {}
        if node.get("in") not in ("query", "header"):
            error(
                "swagger2-invalid",
                f"an apiKey is sent `in: query` or `in: header`, not {node.get('in')!r}",
                src + ("/in" if "in" in node else ""),
                "write `in: header` or `in: query`",
            )
            return {}
        out = {key: copy.deepcopy(node[key]) for key in ("type", "name", "in") if key in node}
    elif kind == "oauth2":
        flow = node.get("flow")
        if not isinstance(flow, str) or flow not in _OAUTH_FLOWS:
            error(
                "swagger2-invalid",
                f"unknown oauth2 flow {flow!r}",
                src + ("/flow" if "flow" in node else ""),
                "use one of implicit, password, application, accessCode",
            )
            return {}
        name, urls = _OAUTH_FLOWS[str(flow)]
        flow_dst = dst + "/flows/" + name
        at(dst + "/flows", src + "/flow")
        at(flow_dst, src + "/flow")
        body: dict[str, Any] = {}
        for key in urls:
            body[key] = copy.deepcopy(node.get(key))
            at(join_pointer(flow_dst, key), join_pointer(src, key) if key in node else src + "/flow")
        body["scopes"] = copy.deepcopy(node.get("scopes") or {})
        at(flow_dst + "/scopes", src + "/scopes" if "scopes" in node else src + "/flow")
        out = {"type": "oauth2", "flows": {name: body}}
        at(dst + "/type", src + "/type")
    else:
        error(
            "swagger2-invalid",
            f"unknown security scheme type {kind!r}",
            src + ("/type" if "type" in node else ""),
            "use basic, apiKey or oauth2",
        )
        return {}
    for key, value in node.items():
        if key == "description" or key.startswith("x-"):
            out[key] = copy.deepcopy(value)
            at(join_pointer(dst, key), join_pointer(src, key))
    return out
