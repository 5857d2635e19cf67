"""A missing optional extra is bad input (exit 2) that names what to install from a clone of toolgen,
never an internal error or a traceback: `toolgen eval run` without the providers' SDKs, `toolgen
serve` without the MCP SDK, a ``postgresql://`` receipt store without psycopg. Each runs `toolgen`
as a real process in which the extra's packages cannot be imported (`tests.support.without_modules`)."""

from __future__ import annotations

import os

import pytest
from tests.support.without_modules import toolgen_without

from toolgen.cli.call import _without_password, display_receipts

#: what the eval extra brings: the providers' SDKs and the HTTP client they send through
EVAL_SDKS = ("openai", "anthropic", "google.genai", "httpx2")


def _says_install_from_a_clone(stderr: str, extra: str) -> None:
    assert f'pip install -e ".[{extra}]"' in stderr, stderr
    assert f"toolgen[{extra}]" not in stderr, stderr
    assert "Traceback" not in stderr and "toolgen bug" not in stderr, stderr


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini", "openai-compatible"])
def test_eval_run_scripted_without_the_sdks_is_exit_2_naming_the_extra(provider: str) -> None:
    done = toolgen_without(
        EVAL_SDKS,
        [
            "eval",
            "run",
            "tickets",
            "--provider",
            provider,
            "--scripted",
            "--runs",
            "1",
            "--only",
            "get_ticket/*",
        ],
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    _says_install_from_a_clone(done.stderr, "eval")


def test_eval_run_names_the_one_sdk_that_is_missing() -> None:
    done = toolgen_without(
        ["anthropic"],
        [
            "eval",
            "run",
            "tickets",
            "--provider",
            "anthropic",
            "--scripted",
            "--runs",
            "1",
            "--only",
            "get_ticket/*",
        ],
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "'anthropic'" in done.stderr
    _says_install_from_a_clone(done.stderr, "eval")


def test_eval_replay_without_the_sdks_is_exit_2_naming_the_extra() -> None:
    done = toolgen_without(
        EVAL_SDKS,
        [
            "eval",
            "run",
            "tickets",
            "--replay",
            "evals/runs/tickets-anthropic-scripted",
            "--only",
            "ticket_followup/*",
        ],
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    _says_install_from_a_clone(done.stderr, "eval")


def test_serve_without_the_mcp_sdk_is_exit_2_naming_the_extra() -> None:
    for args in (["serve", "tickets"], ["serve", "tickets", "--http", "127.0.0.1:0", "--no-auth"]):
        done = toolgen_without(["mcp", "mcp_types"], [*args, "--receipts", "memory://"])
        assert done.returncode == 2, (done.returncode, done.stderr)
        assert "mcp" in done.stderr
        _says_install_from_a_clone(done.stderr, "mcp")


def test_serve_otel_without_the_sdk_is_exit_2_naming_the_extra() -> None:
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "none"}
    for args, environ in (
        (["serve", "tickets", "--otel"], env),
        (["serve", "tickets"], {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}),
    ):
        done = toolgen_without(
            ["opentelemetry.sdk", "opentelemetry.exporter"], [*args, "--receipts", "memory://"], env=environ
        )
        assert done.returncode == 2, (done.returncode, done.stderr)
        assert "otel" in done.stderr and "OpenTelemetry" in done.stderr
        _says_install_from_a_clone(done.stderr, "otel")


def test_a_postgresql_url_without_a_password_keeps_the_install_hint() -> None:
    done = toolgen_without(
        ["psycopg", "psycopg_pool"],
        [
            "call",
            "tickets",
            "get_ticket",
            "--args",
            '{"ticket_id": "T-1"}',
            "--receipts",
            "postgresql://postgres@db.example/tickets",
        ],
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "withheld" not in done.stderr
    assert "postgresql://postgres@db.example/tickets" in done.stderr  # nothing to mask
    _says_install_from_a_clone(done.stderr, "postgres")


def test_a_postgresql_url_with_a_password_still_withholds_what_quotes_it() -> None:
    done = toolgen_without(
        ["psycopg", "psycopg_pool"],
        [
            "call",
            "tickets",
            "get_ticket",
            "--args",
            '{"ticket_id": "T-1"}',
            "--receipts",
            "postgresql://postgres:install@db.example/tickets",
        ],
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert ":install@" not in done.stderr and "withheld" in done.stderr, done.stderr


@pytest.mark.parametrize("url", ["postgresql://postgres@h/db", "redis://user@h:6379/0", "postgresql://h/db"])
def test_a_url_without_a_password_is_shown_and_its_errors_kept(url: str) -> None:
    assert display_receipts(url) == url
    message = _without_password(url, ImportError("needs postgres and user h: pip install"), url)
    assert "withheld" not in message and "pip install" in message
