"""Output paths from a project file or the command line: refused, with a located error and nothing
written, when they name no file, could not be checked out on Windows, or overlap another output once
case and Unicode normalisation are folded (macOS and Windows file systems fold both)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, run
from tests.support.profiles import examples

from toolgen.builder.output_files import Output, check_destinations
from toolgen.builder.project import load_project
from toolgen.diagnostics import DiagnosticError

_FILES = {"policy.json": b"{}"}


def _refusals(root: Path, *outs: str) -> list[str]:
    """The messages `check_destinations` gives for output folders `outs` under `root` (the cwd)."""
    return [d.message for d in check_destinations([Output(root / o, _FILES) for o in outs], [])]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("generated/Tickets", "generated/tickets"),
        ("generated/\u00e9", "generated/e\u0301"),  # NFC and NFD spellings of é
        ("generated/STRASSE", "generated/straße"),  # full case folding
        ("Generated/a", "generated/a/b"),  # one inside the other, once folded
    ],
)
def test_outputs_equal_once_case_and_normalisation_are_folded_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str, second: str
) -> None:
    monkeypatch.chdir(tmp_path)
    problems = _refusals(tmp_path, first, second)
    assert problems and all("differ only in case or Unicode normalisation" in p for p in problems), problems


@pytest.mark.parametrize(
    "name",
    ["CON", "aux.json", "Nul", "com1.txt", "LPT9", "a:b", "a|b", "a?b", 'a"b', "a<b", "x.", "x ", "a\tb"],
)
def test_an_output_windows_cannot_hold_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for out in (f"generated/{name}", f"{name}/api"):
        problems = _refusals(tmp_path, out)
        assert len(problems) == 1 and "cannot be written portably" in problems[0], problems
        assert not (tmp_path / out).exists()


def test_names_that_are_only_like_device_names_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        _refusals(tmp_path, "generated/console", "generated/auxiliary", "generated/com10", "generated/a.b")
        == []
    )


def _key(name: str) -> str:
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


_LETTERS = st.text(alphabet=st.sampled_from("aAbBßsSéEÉ\u0301\u00c5\u212b"), min_size=1, max_size=6)


@settings(max_examples=examples(200), deadline=None)
@given(first=_LETTERS, second=_LETTERS)
def test_two_outputs_are_refused_exactly_when_they_fold_to_one_folder(first: str, second: str) -> None:
    """`folded` against an independent spelling: NFD, case folded, NFD again (the comparison a
    case-insensitive, normalisation-insensitive file system makes)."""
    root = Path.cwd()
    outs = [Output(root / "gen" / first, _FILES), Output(root / "gen" / second, _FILES)]
    problems = check_destinations(outs, [])
    same = _key(first) == _key(second)
    assert bool(problems) == same, (first, second, [p.message for p in problems])


@pytest.mark.parametrize("key", ["out", "intent_map", "spec"])
@pytest.mark.parametrize("char", ["\\0", "\\n", "\\x1b"])
def test_a_control_character_in_a_project_path_is_a_located_error(
    tmp_path: Path, key: str, char: str
) -> None:
    paths = {"intent_map": "x.yaml", "out": "generated/x", "spec": "s.yaml"}
    paths[key] = f"a{char}b"
    entry = ", ".join(f'{k}: "{v}"' for k, v in paths.items())
    (tmp_path / "toolgen.yaml").write_text(f"toolgen: 1\napis:\n  - {{name: x, {entry}}}\n", "utf-8")
    with pytest.raises(DiagnosticError) as caught:
        load_project(tmp_path / "toolgen.yaml")
    (diag,) = caught.value.diagnostics
    assert diag.code == "project-invalid" and "control character" in diag.message
    assert diag.location is not None and diag.location.line == 3 and diag.location.pointer == f"/apis/0/{key}"


def test_a_nul_in_the_intent_maps_spec_path_is_a_located_error(tmp_path: Path) -> None:
    intent = tmp_path / "x.yaml"
    spec = (REPO / "specs" / "tickets.yaml").as_posix()
    intent.write_text(
        f'toolgen: 1\nspec: "{spec}\\0x"\napi: {{name: x}}\ninclude: [{{match: "*"}}]\n', "utf-8"
    )
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "-q")
    assert result.exit_code == 2, result.output
    assert (
        "x.yaml:2:1 (#/spec): error[intent-invalid]" in result.output and "control character" in result.output
    )
    assert "internal error" not in result.output and not (tmp_path / "out").exists()
