"""Token files of `toolgen serve --http` (`toolgen.runtime.serving.mcp_http.load_token_file`): a file
of callers by SHA-256 digest loads and verifies a presented bearer token in constant time, JSON too,
with a warning when the file is readable by others; every malformed file is an error naming
file:line:col and what is wrong, never echoing a plain token; and, as properties, only the exact token
verifies and any file content loads or fails located. The callers are `tests.support.token_files`'.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime.serving.mcp_http import (
    StaticToken,
    StaticTokenVerifier,
    TokenFileError,
    load_token_file,
    token_sha256,
)

pytest.importorskip("mcp")  # a verified token is the mcp SDK's AccessToken

# ------------------------------------------------------------------------------------------------
# token files


def test_token_file_loads_and_verifies_in_constant_time_by_digest(tmp_path: Path) -> None:
    verifier_, warnings = load_token_file(write_token_file(tmp_path / "t.yaml"))
    assert warnings == []
    assert [t.actor for t in verifier_.tokens] == ["reader", "writer", "admin"]
    token = anyio.run(verifier_.verify_token, TOKENS["writer"][0])
    assert (
        token is not None and token.client_id == "writer" and token.scopes == ["ticket:read", "ticket:write"]
    )
    assert TOKENS["writer"][0] not in token.token  # the plain token is not kept
    for forged in (
        "",
        "writer-token-77ab",
        TOKENS["writer"][0] + " ",
        token_sha256(TOKENS["writer"][0]),
        "x" * 5000,
        "\ud800",
    ):
        assert anyio.run(verifier_.verify_token, forged) is None, forged


def test_token_file_json_and_world_readable_warning(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(
        json.dumps({"tokens": [{"actor": "bot", "sha256": token_sha256("t0k3n").upper(), "scopes": []}]}),
        encoding="utf-8",
    )
    path.chmod(0o644)
    verifier_, warnings = load_token_file(path)
    assert verifier_.lookup("t0k3n") is not None and verifier_.lookup("t0k3n").scopes == ()  # type: ignore[union-attr]
    assert len(warnings) == 1 and "chmod 600" in warnings[0] and "0644" in warnings[0]


GOOD = token_sha256("abc")


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("tokens: [\n  {actor: a, sha256: " + GOOD + ", scopes: [x]\n", "3:1", "not valid YAML"),
        ("", "1:1", "empty"),
        ("tokens:\n  - \x07\n", "2:5", "not valid YAML"),
        ("- a\n", "1:1", "must be a mapping"),
        ("users: []\n", "1:1", "unknown key 'users'"),
        ("tokens: []\n", "1:9", "non-empty list"),
        ("tokens:\n  - actor: a\n    token: s3cr3t-plain\n    scopes: []\n", "3:5", "store its SHA-256"),
        ("tokens:\n  - actor: a\n    sha256: abc\n    scopes: []\n", "3:13", "64 hex digits"),
        ("tokens:\n  - actor: a\n    scopes: []\n", "2:5", "no `sha256`"),
        ("tokens:\n  - actor: ''\n    sha256: " + GOOD + "\n    scopes: []\n", "2:12", "non-empty string"),
        ("tokens:\n  - actor: 7\n    sha256: " + GOOD + "\n    scopes: []\n", "2:12", "non-empty string"),
        (
            "tokens:\n  - actor: a\n    sha256: " + GOOD + "\n    scopes: ticket:read\n",
            "4:13",
            "list of scope",
        ),
        ("tokens:\n  - actor: a\n    sha256: " + GOOD + "\n    scopes: [[x]]\n", "4:14", "every scope"),
        (
            "tokens:\n  - actor: a\n    sha256: " + GOOD + "\n    scopes: []\n    role: x\n",
            "5:5",
            "unknown key 'role'",
        ),
        (
            "tokens:\n  - actor: a\n    actor: b\n    sha256: " + GOOD + "\n    scopes: []\n",
            "3:5",
            "duplicate key",
        ),
        (
            "tokens:\n  - {actor: a, sha256: "
            + GOOD
            + ", scopes: []}\n  - {actor: b, sha256: "
            + GOOD
            + ", scopes: []}\n",
            "3:24",
            "already the token of the entry at",
        ),
    ],
)
def test_token_file_errors_are_located(tmp_path: Path, text: str, where: str, says: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TokenFileError) as caught:
        load_token_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{where}: "), message
    assert says in message
    assert "s3cr3t-plain" not in message


def test_missing_token_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot read"):
        load_token_file(tmp_path / "absent.yaml")


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=80).filter(lambda t: t not in {token for token, _ in TOKENS.values()}))
def test_only_the_exact_token_verifies(presented: str) -> None:
    verifier_ = StaticTokenVerifier(
        StaticToken(bytes.fromhex(token_sha256(token)), actor, tuple(scopes))
        for actor, (token, scopes) in TOKENS.items()
    )
    found = verifier_.lookup(presented)
    assert found is None
    for actor, (token, _) in TOKENS.items():
        hit = verifier_.lookup(token)
        assert hit is not None and hit.actor == actor


@settings(max_examples=examples(150), deadline=None)
@given(
    st.one_of(
        st.text(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["tokens", "actor", "sha256", "scopes", "token", "x"]), inner, max_size=4
                )
            ),
            max_leaves=12,
        ).map(json.dumps),
    )
)
def test_any_token_file_loads_or_fails_located(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """Whatever a token file holds: a verifier, or a `TokenFileError` naming file:line:col — never
    another exception, never a plain token echoed."""
    path = tmp_path_factory.mktemp("tokens") / "tokens.yaml"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    try:
        verifier_, _ = load_token_file(path)
    except TokenFileError as exc:
        assert str(exc).startswith(f"{path}:"), str(exc)
        where = str(exc)[len(str(path)) + 1 :].split(":", 2)
        assert where[0].isdigit() and where[1].isdigit(), str(exc)
    else:
        assert verifier_.tokens
