"""The semantic search option (toolgen.yaml ``search: {semantic: lsa}``): off by default, so a
default build writes the lexical ``search.json`` (format 2, no vectors) without importing numpy;
on, ``search.json`` is of format 3 with the vectors the runtime fuses; a bad value or a missing
numpy is a located error; a runtime without numpy ranks a format-3 file lexically."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolgen.builder.build import build_project
from toolgen.builder.project import load_project
from toolgen.diagnostics import DiagnosticError
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search.text_index import SEARCH_FORMAT
from toolgen.search.vector_index import SEMANTIC_FORMAT, semantic_index

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "generated"
QUERIES = [
    "lock the conversation",
    "who reviewed the pull request",
    "labels of an issue",
    "star a repository",
]


def _project(tmp_path: Path, search: str = "", api_search: str = "") -> Path:
    """A project building the repository's GitHub intent map into `tmp_path` (policy and package
    artifacts only), with the given ``search:`` lines at the project and the API level."""
    path = tmp_path / "toolgen.yaml"
    path.write_text(
        "toolgen: 1\n"
        "apis:\n"
        "  - name: github\n"
        f"    intent_map: {(REPO / 'intent_maps' / 'github.yaml').as_posix()}\n"
        "    out: out/github\n"
        "    emit: [mcp, policy]\n"
        f"{api_search}"
        f"{search}",
        encoding="utf-8",
    )
    return path


def _search_json(project: Path) -> dict[str, object]:
    outputs, _ = build_project(load_project(project))
    files = {name: content for output in outputs for name, content in output.files.items()}
    value: dict[str, object] = json.loads(files["search.json"])
    return value


def _written(tmp_path: Path, search: str) -> Path:
    """The GitHub package's policy.json, mcp.json and search.json, built with `search`, in a folder."""
    outputs, _ = build_project(load_project(_project(tmp_path, search)))
    folder = tmp_path / "pkg"
    folder.mkdir()
    for output in outputs:
        for name, content in output.files.items():
            if name in ("policy.json", "mcp.json", "search.json"):
                (folder / name).write_bytes(content)
    return folder


def test_the_default_build_writes_the_lexical_index(tmp_path: Path) -> None:
    value = _search_json(_project(tmp_path))
    assert value["format"] == SEARCH_FORMAT == 3 and "semantic" not in value
    for api in ("tickets", "github", "stripe"):
        written = json.loads((GENERATED / api / "search.json").read_text(encoding="utf-8"))
        assert written["format"] == SEARCH_FORMAT and "semantic" not in written
    assert "semantic" not in _search_json(_project(tmp_path, "search: {semantic: none}\n"))


def test_a_default_build_and_a_lexical_search_import_no_numpy(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code = (
        "import sys\n"
        "from toolgen.builder.build import build_project\n"
        "from toolgen.builder.project import load_project\n"
        "from toolgen.runtime.serving.tool_index import ToolIndex\n"
        f"build_project(load_project(__import__('pathlib').Path({str(project)!r})))\n"
        f"hits = ToolIndex.from_dir({str(GENERATED / 'github')!r}).search('lock the conversation')\n"
        "assert hits\n"
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('numpy.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("where", ["project", "api"])
def test_the_option_stores_the_vectors_and_the_runtime_ranks_with_them(tmp_path: Path, where: str) -> None:
    line = "search: {semantic: lsa}\n"
    value = _search_json(
        _project(tmp_path, line) if where == "project" else _project(tmp_path, "", "    " + line)
    )
    assert value["format"] == SEMANTIC_FORMAT
    documents = value["documents"]
    assert isinstance(documents, list)
    assert value["semantic"] == json.loads(json.dumps(semantic_index(documents)))
    (tmp_path / "w").mkdir()
    folder = _written(tmp_path / "w", line)
    fused = ToolIndex.from_dir(folder)
    assert fused._semantic is not None
    lexical = ToolIndex.from_dir(GENERATED / "github")
    assert lexical._semantic is None
    # the same documents ranked with the vectors: every score of a matching tool is raised by them
    assert any(fused.search(q) != lexical.search(q) for q in QUERIES)
    for q in QUERIES:
        assert {h.tool for h in fused.search(q, limit=50)} == {h.tool for h in lexical.search(q, limit=50)}


@pytest.mark.parametrize("text", ["search: {semantic: bert}\n", "search: {semantic: lsa, k: 3}\n"])
def test_a_bad_option_is_a_located_error(tmp_path: Path, text: str) -> None:
    project = _project(tmp_path, text)
    with pytest.raises(DiagnosticError) as raised:
        load_project(project)
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "project-invalid" and diagnostic.location is not None
    assert diagnostic.location.line == 7 and (diagnostic.location.pointer or "").startswith("/search/")


_WITHOUT_NUMPY = "import sys\nsys.modules['numpy'] = None  # `import numpy` raises ImportError\n"


def test_the_option_without_numpy_is_a_located_build_error(tmp_path: Path) -> None:
    project = _project(tmp_path, "", "    search:\n      semantic: lsa\n")
    code = _WITHOUT_NUMPY + (
        "from pathlib import Path\n"
        "from toolgen.builder.build import build_project\n"
        "from toolgen.diagnostics import DiagnosticError\n"
        "from toolgen.builder.project import load_project\n"
        "try:\n"
        f"    build_project(load_project(Path({str(project)!r})))\n"
        "except DiagnosticError as exc:\n"
        "    [d] = exc.diagnostics\n"
        "    print(d.code, d.location.line, d.location.col, d.location.pointer, d.hint, sep='|')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    code_, line, column, pointer, hint = done.stdout.strip().split("|")
    assert (code_, line, column, pointer) == (
        "search-semantic-unavailable",
        "8",
        "7",
        "/apis/0/search/semantic",
    )
    assert "pip install -e '.[semantic]' in a clone of toolgen" in hint


def test_a_runtime_without_numpy_ranks_a_format_3_file_lexically(tmp_path: Path) -> None:
    folder = _written(tmp_path, "search: {semantic: lsa}\n")
    assert json.loads((folder / "search.json").read_text(encoding="utf-8"))["format"] == SEMANTIC_FORMAT
    code = _WITHOUT_NUMPY + (
        "import json\n"
        "from toolgen.runtime.serving.tool_index import ToolIndex\n"
        f"index = ToolIndex.from_dir({str(folder)!r})\n"
        "assert index._semantic is None\n"
        f"print(json.dumps([[h.to_json() for h in index.search(q)] for q in {QUERIES!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lexical = ToolIndex.from_dir(GENERATED / "github")
    assert json.loads(done.stdout) == [[h.to_json() for h in lexical.search(q)] for q in QUERIES]
