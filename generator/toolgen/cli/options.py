"""Option blocks that several commands share, each declared once.

A block is a decorator that adds its options to a command in the order listed, as the same
``@click.option`` lines stacked there would (so ``--help`` lists them in that order):

- `actor_options(default, scopes_help)`: ``--scopes`` and ``--actor`` (`toolgen call`, `toolgen serve`:
  who the caller is when no token says so);
- `registry_options`: ``--base-url``, ``--receipts``, ``--audit-log`` (`toolgen call`, `toolgen serve`:
  where the registry sends, keeps receipts and writes audit events);
- `model_options(provider_help)`: ``--provider`` and ``--model`` (`toolgen eval run`, `toolgen
  describe`, `toolgen init --describe`);
- `endpoint_options`: the provider's ``--base-url`` and ``--api-key-env`` (the same three).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..evals.provider_names import PROVIDERS
from ..runtime.identity import ISSUER_CALLER_PREFIX, RESERVED_ACTOR

F = TypeVar("F", bound=Callable[..., Any])

RECEIPTS_HELP = (
    "Receipt store: a SQLite file path, or a URL — redis://HOST:PORT/DB or "
    "postgresql://HOST/DB (shared by many workers), sqlite:///FILE, memory:// (env: TOOLGEN_RECEIPTS; default .toolgen/receipts.sqlite3)."
)


def stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator applying `options` (``click.option(...)`` decorators) as if stacked in this
    order above a command."""

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


def local_actor(actor_id: str) -> str:
    """`actor_id` of `--actor` (`toolgen call`, `toolgen serve` over stdio or ``--no-auth``) when it
    does not begin with `ISSUER_CALLER_PREFIX` (``jwt:``): such an id is an authorization server's
    caller (``jwt:<iss>#<sub>``), and acting as it would spend that caller's limits, stored previews
    and issued approvals. Raises `click.BadParameter` (exit 2) for one that does."""
    if actor_id.startswith(ISSUER_CALLER_PREFIX):
        raise click.BadParameter(
            f"{RESERVED_ACTOR}; to approve such a caller's preview use `toolgen approve --actor ID`",
            param_hint="'--actor'",
        )
    return actor_id


def actor_options(default: str, scopes_help: str) -> Callable[[F], F]:
    """``--scopes`` (`scopes_help`) and ``--actor`` (into ``actor_id``, default `default`; a ``jwt:``
    id is refused by `local_actor`)."""
    return stacked(
        click.option("--scopes", default=None, help=scopes_help),
        click.option(
            "--actor",
            "actor_id",
            default=default,
            show_default=True,
            callback=lambda ctx, param, value: local_actor(value),
            help="Actor id for audit and receipts (not a jwt: id: those are an authorization server's callers).",
        ),
    )


def registry_options(func: F) -> F:
    """``--base-url`` of the API, ``--receipts`` (into ``receipts_spec``) and ``--audit-log``."""
    return stacked(
        click.option("--base-url", default=None, help="Override the API base URL of the policy table."),
        click.option("--receipts", "receipts_spec", default=None, metavar="PATH_OR_URL", help=RECEIPTS_HELP),
        click.option(
            "--audit-log",
            type=click.Path(path_type=Path),
            default=None,
            help="Append audit events as JSON lines to this file.",
        ),
    )(func)


def model_options(provider_help: str) -> Callable[[F], F]:
    """``--provider`` (one of `PROVIDERS`, `provider_help`) and ``--model``."""
    return stacked(
        click.option("--provider", type=click.Choice(PROVIDERS), default=None, help=provider_help),
        click.option("--model", default=None, help="Model name as the provider spells it."),
    )


def endpoint_options(func: F) -> F:
    """The provider's ``--base-url`` and ``--api-key-env``."""
    return stacked(
        click.option(
            "--base-url", default=None, help="Provider endpoint (needed for openai-compatible servers)."
        ),
        click.option(
            "--api-key-env",
            default=None,
            help="Environment variable holding the API key (default per provider).",
        ),
    )(func)


__all__ = [
    "RECEIPTS_HELP",
    "actor_options",
    "endpoint_options",
    "local_actor",
    "model_options",
    "registry_options",
    "stacked",
]
