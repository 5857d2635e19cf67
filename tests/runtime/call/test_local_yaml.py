"""The three files an operator writes for the runtime (token file, authorization-server file,
caller-secrets file) are read by one YAML reader (`toolgen.runtime.call.local_yaml`): a syntax
error, or a character YAML does not allow, is refused with the file's line and column, whichever
file it is in, and nothing is read from it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolgen.runtime.call.caller_credentials import CallerSecretsError, load_caller_secrets
from toolgen.runtime.call.local_yaml import compose_located
from toolgen.runtime.serving.access_tokens import AuthorizationServerError, load_authorization_server
from toolgen.runtime.serving.mcp_http import TokenFileError, load_token_file

LOADERS: list[tuple[Callable[[Path], Any], type[Exception]]] = [
    (load_token_file, TokenFileError),
    (load_authorization_server, AuthorizationServerError),
    (load_caller_secrets, CallerSecretsError),
]


@pytest.mark.parametrize("load,error", LOADERS, ids=["tokens", "authorization-server", "caller-secrets"])
@pytest.mark.parametrize(
    "text,where",
    [
        ("a: [1,\n", "2:1"),  # a flow sequence never closed: the parser's mark
        ("a: 1\nb:\n  - \x07\n", "3:5"),  # a character YAML does not allow: the reader's offset
    ],
)
def test_a_bad_file_is_refused_at_its_line_and_column(
    tmp_path: Path, load: Callable[[Path], Any], error: type[Exception], text: str, where: str
) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    with pytest.raises(error) as exc:
        load(path)
    assert str(exc.value).startswith(f"{path}:{where}: not valid YAML/JSON: "), str(exc.value)


def test_an_empty_text_is_no_tree() -> None:
    assert compose_located(Path("f.yaml"), "", ValueError) is None
