"""The key of toolgen's code (`toolgen.builder.cache.environment_key`) is read cheaply and still changes
with what it names: each library's metadata folder and each file of the package and its templates."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from tests.support.build import REPO

from toolgen.builder.cache import _LIBRARIES, _code_files, _library


def _key(generator: Path, path: list[Path]) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in [generator, *path])}
    code = "from toolgen.builder.cache import environment_key; print(environment_key())"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stdout.strip()


def test_each_library_is_named_by_the_version_its_metadata_states() -> None:
    """The key names an installed library by its ``.dist-info`` folder rather than by parsing the
    metadata file: the folder names the version the metadata states, so the key changes exactly
    when that version does."""
    installed = 0
    for name in _LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert _library(name) == f"{name} absent"
            continue
        installed += 1
        named = _library(name)
        assert named.startswith(f"{name} ") or named == f"{name}=={version}"
        if named.endswith(".dist-info"):
            assert named.removesuffix(".dist-info").rsplit("-", 1)[1] == version, named
    assert installed >= 10  # pydantic, jinja2, black... are the build's own dependencies


def test_a_library_without_a_dist_info_folder_is_named_by_its_metadata(tmp_path: Path) -> None:
    """An ``.egg-info`` distribution first on the path (no ``name-version.dist-info`` folder to
    read) is named by the version its metadata states: another version is another key."""
    folders = []
    for version in ("98.0", "99.0"):
        info = tmp_path / version / "lark.egg-info"
        info.mkdir(parents=True)
        text = f"Metadata-Version: 2.1\nName: lark\nVersion: {version}\n"
        (info / "PKG-INFO").write_text(text, encoding="utf-8")
        folders.append(info.parent)
    generator = REPO / "generator"
    assert len({_key(generator, []), *(_key(generator, [folder]) for folder in folders)}) == 3


def test_the_code_files_are_listed_as_their_paths_sort(tmp_path: Path) -> None:
    """`_code_files` lists what ``sorted(root.rglob("*"))`` filtered to the code's suffixes gave
    (the order of the key's parts): by path parts, so ``a/x.py`` comes before ``a-b/x.py`` although
    ``-`` sorts before ``/``; ``__pycache__`` and other suffixes are left out."""
    for relative in ("a/x.py", "a-b/x.py", "a/b/c.j2", "z.json", "a/__pycache__/x.py", "a/x.pyc", "M.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x", encoding="utf-8")
    expected = [
        p.relative_to(tmp_path).as_posix()
        for p in sorted(tmp_path.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".j2", ".json", ".md")
    ]
    assert _code_files(tmp_path) == expected == ["M.md", "a/b/c.j2", "a/x.py", "a-b/x.py", "z.json"]


def test_an_edit_of_the_package_or_a_template_changes_the_key(tmp_path: Path) -> None:
    """A copy of the package and its templates: the same bytes give the same key; one byte more in a
    nested module, a new module, or an edited template is another key; a file the key does not read
    (bytecode) is not."""
    generator, templates = tmp_path / "generator", tmp_path / "templates"
    shutil.copytree(
        REPO / "generator" / "toolgen", generator / "toolgen", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "templates", templates)
    first = _key(generator, [])
    assert _key(generator, []) == first
    (generator / "toolgen" / "scratch.pyc").write_bytes(b"not code")
    assert _key(generator, []) == first
    module = generator / "toolgen" / "compile" / "lower" / "resolve.py"
    module.write_bytes(module.read_bytes() + b"\n")
    second = _key(generator, [])
    (generator / "toolgen" / "compile" / "extra.py").write_text("", encoding="utf-8")
    third = _key(generator, [])
    template = min(templates.rglob("*.j2"))
    template.write_bytes(template.read_bytes() + b" ")
    assert len({first, second, third, _key(generator, [])}) == 4
