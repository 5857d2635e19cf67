"""The three files an operator writes for the runtime (the token file, the authorization-server file,
the caller secrets) are read and checked by one function (`toolgen.runtime.call.local_yaml.
read_operator_file`), each reader keeping its own permission rule, error class and message: a file
whose mode the reader refuses is refused with the message it had, and a symbolic link is followed
(its target's mode is what counts), as before; an unreadable or non-UTF-8 file says why."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.token_files import write_token_file

from toolgen.runtime.call.caller_credentials import CallerSecretsError, load_caller_secrets
from toolgen.runtime.call.local_yaml import UnreadableFile, UnsafeMode, read_operator_file
from toolgen.runtime.serving.access_tokens import AuthorizationServerError, load_authorization_server
from toolgen.runtime.serving.token_files import TokenFileError, load_token_file

SERVER = "issuer: https://a.test/\njwks_uri: https://a.test/j\nresource: https://t.test/mcp\n"
SECRETS = "callers:\n  alice: {api_token: s3cret}\n"


def _file(folder: Path, name: str, text: str, mode: int) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def _link(folder: Path, target: Path) -> Path:
    link = folder / f"link-to-{target.name}"
    link.symlink_to(target)
    return link


def _refusal(load: Callable[[Path], Any], path: Path, error: type[Exception]) -> str:
    with pytest.raises(error) as caught:
        load(path)
    return str(caught.value)


def test_the_token_file_keeps_its_rule_and_its_messages(tmp_path: Path) -> None:
    """Writable by every user: refused; readable by every user: a warning; by its group: nothing."""
    for mode in (0o602, 0o666):
        path = write_token_file(tmp_path / f"tokens-{mode:o}.yaml", mode)
        expected = (
            f"{path}: the token file is writable by every user of this machine (mode {mode:04o}), "
            f"so anyone could add a token; run `chmod 600 {path}`"
        )
        assert _refusal(load_token_file, path, TokenFileError) == expected
        link = _link(tmp_path, path)  # a link is followed: its target's mode is refused, named by the link
        assert _refusal(load_token_file, link, TokenFileError) == expected.replace(str(path), str(link))
    readable = write_token_file(tmp_path / "readable.yaml", 0o644)
    assert load_token_file(readable)[1] == [
        f"{readable} is readable by every user of this machine (mode 0644); run `chmod 600 {readable}`"
    ]
    assert load_token_file(write_token_file(tmp_path / "group.yaml", 0o640))[1] == []
    assert load_token_file(_link(tmp_path, write_token_file(tmp_path / "own.yaml")))[1] == []
    missing = tmp_path / "missing.yaml"
    assert _refusal(load_token_file, missing, TokenFileError) == (
        f"{missing}: cannot read the token file: FileNotFoundError: No such file or directory"
    )
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"tokens: [\xff]\n")
    assert _refusal(load_token_file, latin, TokenFileError).startswith(
        f"{latin}: cannot read the token file: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
    )


def test_the_authorization_server_file_keeps_its_rule_and_its_messages(tmp_path: Path) -> None:
    """Writable by every user: refused; readable by every user (it holds no secret): read."""
    for mode in (0o646, 0o777):
        path = _file(tmp_path, f"server-{mode:o}.yaml", SERVER, mode)
        expected = (
            f"{path}: writable by every user of this machine (mode {mode:04o}): anyone could name their "
            f"own issuer; run `chmod 644 {path}`"
        )
        assert _refusal(load_authorization_server, path, AuthorizationServerError) == expected
        link = _link(tmp_path, path)
        assert _refusal(load_authorization_server, link, AuthorizationServerError) == expected.replace(
            str(path), str(link)
        )
    for mode in (0o644, 0o664):
        assert load_authorization_server(_file(tmp_path, f"ok-{mode:o}.yaml", SERVER, mode)).issuer == (
            "https://a.test/"
        )
    assert load_authorization_server(_link(tmp_path, _file(tmp_path, "s.yaml", SERVER, 0o600))).resource
    missing = tmp_path / "missing.yaml"
    assert _refusal(load_authorization_server, missing, AuthorizationServerError) == (
        f"{missing}: cannot read the authorization-server file: No such file or directory"
    )


def test_the_caller_secrets_keep_their_rule_and_their_messages(tmp_path: Path) -> None:
    """Any access by group or others: refused (it holds secrets)."""
    for mode in (0o640, 0o604, 0o620, 0o601, 0o644):
        path = _file(tmp_path, f"secrets-{mode:o}.yaml", SECRETS, mode)
        expected = (
            f"{path}: other users may read or write it (mode {mode:04o}); it holds secrets: "
            f"run `chmod 600 {path}`"
        )
        assert _refusal(load_caller_secrets, path, CallerSecretsError) == expected
        link = _link(tmp_path, path)
        assert _refusal(load_caller_secrets, link, CallerSecretsError) == expected.replace(
            str(path), str(link)
        )
    own = _file(tmp_path, "own.yaml", SECRETS, 0o600)
    assert load_caller_secrets(_link(tmp_path, own)).get("alice", "api_token") == "s3cret"
    missing = tmp_path / "missing.yaml"
    assert _refusal(load_caller_secrets, missing, CallerSecretsError) == (
        f"{missing}: cannot read the caller secrets file: No such file or directory"
    )


def test_read_operator_file_refuses_with_typed_errors(tmp_path: Path) -> None:
    path = _file(tmp_path, "f.yaml", "a: 1\r\nb: 2\n", 0o640)
    text, mode = read_operator_file(path, refused_bits=stat.S_IWOTH)
    assert text == "a: 1\nb: 2\n" and stat.S_IMODE(mode) == 0o640  # universal newlines, as read_text
    with pytest.raises(UnsafeMode) as unsafe:
        read_operator_file(path, refused_bits=stat.S_IRWXG | stat.S_IRWXO)
    assert unsafe.value.mode == 0o640 and unsafe.value.file == path
    with pytest.raises(UnreadableFile) as unreadable:
        read_operator_file(tmp_path / "absent", refused_bits=0)
    assert isinstance(unreadable.value.cause, FileNotFoundError)
    assert unreadable.value.detail == os.strerror(2)
    path.write_bytes(b"\xc3\x28")
    with pytest.raises(UnreadableFile) as undecodable:
        read_operator_file(path, refused_bits=0)
    assert isinstance(undecodable.value.cause, UnicodeDecodeError)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(UnreadableFile):  # a folder is no file (IsADirectoryError)
        read_operator_file(folder, refused_bits=0)
