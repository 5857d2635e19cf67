"""Stage `load`: an OpenAPI file on disk -> `SpecDocument` (raw data + typed model + source map).

Input: a path to an OpenAPI 3.0.x or 3.1.x, or a Swagger 2.0, document in JSON or YAML.
Output: `SpecDocument` holding the raw JSON data (what later stages read), the openapi-pydantic
model picked by the document's `openapi` version (what proves the document's structure), and a
lazy source map from JSON pointer to 1-based line/column. A Swagger 2.0 document is read as the
OpenAPI 3.0.3 document `toolgen.compile.swagger2` converts it to: `data` is the converted document,
and `locate` turns each of its pointers back into the 2.0 pointer it came from, so every diagnostic
names the line, column and pointer of the file the user wrote.

Errors (raised as `DiagnosticError`, exit code 2): unreadable file, syntax error (with line and
column), a text no reader should walk (nested deeper than `MAX_DEPTH`, YAML aliases that expand past
`MAX_ALIAS_EXPANSION` values or contain themselves, a number longer than Python reads), a Swagger 2.0 construct that has no OpenAPI 3 equivalent, a missing or unsupported
`openapi` version, and structural errors outside schema objects (the openapi-pydantic model's
findings: `toolgen.compile.spec_validation`). Problems inside schema objects (e.g. `type: 'null'`
in a 3.0 document, which real specs contain) are warnings: the schema stage normalises both
dialects anyway. So is a key written twice in one object (``spec-duplicate-key``, at the occurrence
that is read, naming the ones dropped: `toolgen.compile.duplicates`).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Literal, NamedTuple

import yaml

from ..diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation, display_path
from ..pointer import SURROGATE_ESCAPE, escape_token, parse_pointer, surrogate_paths
from ..remember import Remember, computed
from .duplicates import DuplicateKey, json_duplicate_keys, yaml_duplicate_keys
from .sourcemap import locate_json_many, locate_yaml, yaml_nodes
from .spec_validation import validate_model
from .swagger2 import PointerMap, convert_swagger2, is_swagger2

OpenAPIVersion = Literal["3.0", "3.1"]

try:  # the C loader is ~10x faster on multi-megabyte specs; fall back when libyaml is absent
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _YamlLoader = yaml.SafeLoader


def yaml_reader() -> str:
    """Which reader `read_structured` parses YAML with: PyYAML's version, its loader class and, for
    the C loader, the libyaml version it runs (``"PyYAML 6.0.2 CSafeLoader libyaml 0.2.5"``). The two
    loaders disagree on edge inputs (a tab after a key's colon is a value to libyaml and a syntax
    error to the pure-Python scanner), so every remembered result of parsing YAML is keyed by it:
    `SpecDocument.content_key` of a YAML document, and `toolgen.builder.cache.environment_key`."""
    name = getattr(_YamlLoader, "__name__", str(_YamlLoader))
    reader = f"PyYAML {yaml.__version__} {name}"
    if name.startswith("C"):
        try:
            from yaml import _yaml

            reader += f" libyaml {_yaml.get_version_string()}"
        except (ImportError, AttributeError):  # pragma: no cover - depends on the PyYAML build
            pass
    return reader


@dataclass
class SpecDocument:
    """A loaded OpenAPI document.

    `data` is the document as plain JSON values (dict/list/str/int/float/bool/None).
    `display` is the path shown in diagnostics (relative to the working directory when possible,
    never needed to be absolute). `version` is ``"3.0"`` or ``"3.1"``. For a Swagger 2.0 file,
    `swagger` is its version (``"2.0"``), `data` the converted OpenAPI 3.0.3 document, `text` the 2.0
    text and `pointers` the map from converted pointers to 2.0 ones that `locate` applies; the
    locations it returns carry the 2.0 pointer.
    """

    path: Path
    display: str
    #: the file's text, or its bytes, decoded when `text` is first read (`load_spec` of a JSON file
    #: whose tree the build cache kept: a 13 MB text is 52 MB once one character needs four bytes)
    source: str | bytes
    data: dict[str, Any]
    format: Literal["json", "yaml"]
    version: OpenAPIVersion
    openapi: str
    swagger: str | None = None
    pointers: PointerMap | None = field(default=None, repr=False)
    #: whether the text may write a key twice in one object (False: the YAML loader proved it does not)
    repeats: bool = field(default=True, repr=False)
    _lines: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _yaml_root: Any = field(default=None, repr=False)
    _content_key: str | None = field(default=None, repr=False)
    #: SHA-256 (hex) of the file's bytes `text` was decoded from (`load_spec`), when known
    source_sha256: str | None = field(default=None, repr=False, compare=False)
    #: where the line and column of a batch of pointers are remembered, by `content_key` and the
    #: pointers (`_resolve`; the build cache's spec table, so a build whose spec did not change does
    #: not scan its text again)
    remember: Remember = field(default=computed, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The file's text: `source`, or its bytes decoded as `load_spec` decoded them when it read
        the file (UTF-8, a byte-order mark dropped), once."""
        if isinstance(self.source, bytes):
            self.source = _decoded(self.source)
        return self.source

    @property
    def content_key(self) -> str:
        """SHA-256 (hex) of what `data` is a pure function of: the file's text, its format, the
        version read from it (a Swagger 2.0 text is converted the same way each time) and, for YAML,
        the reader that parsed it (`yaml_reader`: the C and pure-Python loaders differ). The key of
        what later stages compute from the document alone (its validation, each operation's
        `toolgen.compile.lower.reuse.OperationKeys.reads`), remembered between builds. When the
        SHA-256 of the file's bytes is known (`source_sha256`), it stands for the text: the text is
        their decoding, a pure function of them (a 13 MB text is not encoded again to be hashed)."""
        if self._content_key is None:
            h = hashlib.sha256()
            reader = yaml_reader() if self.format == "yaml" else ""
            source = (
                ("spec 2", self.source_sha256) if self.source_sha256 is not None else ("spec 1", self.text)
            )
            for part in (
                source[0],
                self.format,
                reader,
                self.version,
                self.openapi,
                self.swagger or "",
                source[1],
            ):
                data = part.encode("utf-8", "surrogatepass")
                h.update(len(data).to_bytes(8, "big"))
                h.update(data)
            self._content_key = h.hexdigest()
        return self._content_key

    def source_pointer(self, pointer: str) -> str:
        """The pointer of the file's text that `pointer` (a pointer of `data`) names: itself, or for a
        converted Swagger 2.0 document the 2.0 pointer it came from (``/components/schemas/Pet`` ->
        ``/definitions/Pet``). For a message that prints a pointer, as `locate` is for its location."""
        return self.pointers.source(pointer) if self.pointers is not None else pointer

    def locate(self, pointer: str) -> SourceLocation:
        """Location of the value at JSON `pointer` of `data` (``""`` is the root): file and pointer
        (in the file's text: the 2.0 pointer for a converted Swagger 2.0 document) now, line and
        column filled in later by `fill_locations` (one pass over the text for all diagnostics, since
        finding one position in a 13 MB document costs as much as finding a thousand)."""
        if self.pointers is not None:
            pointer = self.pointers.source(pointer)
        if pointer in self._lines:
            line, col = self._lines[pointer]
            return SourceLocation(self.display, line, col, pointer)
        return SourceLocation(self.display, None, None, pointer)

    def locate_now(self, pointer: str) -> SourceLocation:
        """`locate` with line and column resolved immediately."""
        self._resolve([self.pointers.source(pointer) if self.pointers is not None else pointer])
        return self.locate(pointer)

    def _resolve(self, pointers: Iterable[str]) -> None:
        wanted = sorted({p for p in pointers if p not in self._lines})
        if not wanted:
            return
        if self.remember is computed:
            found = self._located(wanted)
        else:  # a pure function of the text (its content key) and the pointers
            h = hashlib.sha256()
            for pointer in wanted:
                data = pointer.encode("utf-8", "surrogatepass")
                h.update(len(data).to_bytes(8, "big"))
                h.update(data)
            found = self.remember(
                f"{self.content_key} locations 1 {h.hexdigest()}", partial(self._located, wanted)
            )
        self._lines.update(found)

    def _located(self, wanted: list[str]) -> dict[str, tuple[int, int]]:
        if self.format == "json":
            return locate_json_many(self.text, wanted)
        root = self.yaml_tree()
        return {p: locate_yaml(root, parse_pointer(p)) for p in wanted}

    def yaml_tree(self) -> Any:
        """The representation tree of a YAML document's text (`yaml_nodes`, with the loader that read
        it), composed once per document for every batch of pointers to locate and for
        `duplicate_keys`."""
        if self._yaml_root is None:
            self._yaml_root = yaml_nodes(self.text, _YamlLoader)
        return self._yaml_root

    def fill_locations(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Diagnostics with line/column filled in for every location in this document (whose
        pointers are pointers of the file's text, as `locate` returns them)."""
        items = list(diagnostics)
        pending = [
            d.location.pointer
            for d in items
            if d.location is not None
            and d.location.file == self.display
            and d.location.line is None
            and d.location.pointer is not None
        ]
        self._resolve(pending)
        out = []
        for d in items:
            loc = d.location
            if loc is not None and loc.file == self.display and loc.line is None and loc.pointer is not None:
                line_col = self._lines.get(loc.pointer)
                if line_col is not None:
                    d = replace(d, location=SourceLocation(self.display, *line_col, loc.pointer))
            out.append(d)
        return out


def read_structured(
    path: Path, display: str, remember: Remember = computed
) -> tuple[str, Any, Literal["json", "yaml"]]:
    """Read a JSON or YAML file -> (text, data, format). Raises `DiagnosticError` (located).
    `remember`: a ``.json`` file's tree, else whether a JSON text's tree is shallow enough
    (`_shallow`), kept by the SHA-256 of the file's bytes (the build cache's spec table: `_read`)."""
    read = _read(path, display, remember)
    return read.text, read.data, read.format


class _Read(NamedTuple):
    """A file as `_read` read it."""

    #: its text, or its bytes when the text was not needed to give `data` (`SpecDocument.source`)
    source: str | bytes
    data: Any
    format: Literal["json", "yaml"]
    #: whether the text may repeat a key in one object (`_read`)
    repeats: bool
    #: SHA-256 (hex) of the file's bytes (`SpecDocument.source_sha256`)
    source_sha256: str

    @property
    def text(self) -> str:
        return self.source if isinstance(self.source, str) else _decoded(self.source)


def _decoded(raw: bytes) -> str:
    """The text of a file's bytes: UTF-8, a byte-order mark dropped (`_read` refuses other bytes)."""
    return raw.decode("utf-8-sig")


def _read(path: Path, display: str, remember: Remember = computed) -> _Read:
    """`read_structured`, the SHA-256 of the file's bytes, and whether the text may repeat a key in
    one object: always True for JSON
    (`toolgen.compile.duplicates.json_duplicate_keys` finds out), for YAML True only when a mapping
    loaded with fewer keys than it was written with (a repeated key, or a merge key's entry
    overridden) or two keys became one string (``200`` and ``'200'``), which costs the loader one
    comparison per mapping.

    With `remember`, a ``.json`` file's tree is kept by the SHA-256 of its bytes (a pure function of
    them: their text's `json.loads`, proved shallow), and the text is decoded only when a later
    stage reads it: a build whose spec did not change reads the tree back (`_json_tree`), not a
    decoding and a parse (and 52 MB of text for GitHub's 13 MB, which holds a character outside the BMP)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DiagnosticError.one(
            "file-not-found",
            f"file not found: {display}",
            SourceLocation(display),
            "check the path (relative paths are resolved against the file that names them)",
        ) from None
    except IsADirectoryError:
        raise DiagnosticError.one(
            "file-unreadable",
            f"{display} is a folder, not a file",
            SourceLocation(display),
            "name the OpenAPI document itself (a .json or .yaml file)",
        ) from None
    except OSError as exc:
        raise DiagnosticError.one(
            "file-unreadable",
            f"cannot read {display}: {exc.strerror}",
            SourceLocation(display),
            "check that the file exists and is readable",
        ) from None
    source = hashlib.sha256(raw).hexdigest()
    if remember is computed or path.suffix.lower() != ".json":
        return _parsed(path, display, raw, source, remember)
    return _Read(raw, _json_tree(path, display, raw, source, remember), "json", True, source)


def _json_tree(path: Path, display: str, raw: bytes, source: str, remember: Remember) -> Any:
    """The tree `_parsed` gives of a JSON file's bytes `raw` (or its error), remembered as its
    `marshal` (exact for JSON's values, a fifth of pickle's time) by `source`, their SHA-256. The
    depth is proved on a miss (`MAX_DEPTH` is far below marshal's own bound); a remembered value
    that does not read back is parsed again."""
    made: list[Any] = []

    def compute() -> bytes:
        made.append(_parsed(path, display, raw, source, computed).data)
        return marshal.dumps(made[0])

    dumped = remember(f"{source} json tree 2", compute)
    if made:
        return made[0]
    try:
        return marshal.loads(dumped)
    except (EOFError, ValueError, TypeError):
        return _parsed(path, display, raw, source, computed).data


def _parsed(path: Path, display: str, raw: bytes, source: str, remember: Remember) -> _Read:
    """`_read` of the file's bytes `raw` (whose SHA-256 is `source`): decoded and parsed."""
    try:
        text = _decoded(raw)
    except UnicodeDecodeError as exc:
        raise DiagnosticError.one(
            "file-encoding",
            f"{display} is not UTF-8 (byte {exc.start})",
            SourceLocation(display),
            "save the file as UTF-8",
        ) from None
    stripped = text.lstrip()
    if path.suffix.lower() == ".json" or stripped.startswith("{"):
        try:
            data = json.loads(text)
            # a JSON document is a tree (no aliases): only its depth needs proving, located when too deep
            shallow = (
                _shallow(data)
                if remember is computed
                else remember(f"{source} shallow 1", partial(_shallow, data))
            )
            return _Read(text, data if shallow else checked_tree(data, text, display), "json", True, source)
        except RecursionError:
            raise _too_deep(text, display) from None
        except ValueError as exc:
            if not isinstance(exc, json.JSONDecodeError):
                raise _too_long(text, display, exc) from None
            if path.suffix.lower() == ".json":
                before = text[: exc.pos].rstrip()
                hint = "fix the JSON syntax at this position"
                if before.endswith(",") and exc.msg.startswith(
                    ("Expecting value", "Expecting property name")
                ):
                    hint = "remove the trailing comma before this position (JSON allows none)"
                raise DiagnosticError.one(
                    "json-syntax",
                    f"invalid JSON: {exc.msg}",
                    SourceLocation(display, exc.lineno, exc.colno),
                    hint,
                ) from None
    try:
        loader = _counting_loader(_YamlLoader)(text)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except RecursionError:
        raise _too_deep(text, display) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = exc.problem or str(exc)
        raise DiagnosticError.one(
            "yaml-syntax",
            f"invalid YAML: {problem}",
            SourceLocation(display, line, col),
            "fix the YAML syntax at this position",
        ) from None
    except yaml.YAMLError as exc:
        raise DiagnosticError(
            [Diagnostic("yaml-syntax", "error", f"invalid YAML: {exc}", SourceLocation(display))]
        ) from None
    except ValueError as exc:  # an integer longer than Python reads
        raise _too_long(text, display, exc) from None
    merged: list[bool] = []
    data = _jsonify(checked_tree(data, text, display), merged)
    return _Read(text, data, "yaml", loader.fewer_keys or bool(merged), source)


@lru_cache(maxsize=4)
def _counting_loader(base: Any) -> Any:
    """`base` (a PyYAML loader class) whose instances note, in ``fewer_keys``, a mapping that loaded
    with fewer keys than its node holds (after merge keys are expanded)."""

    class Counting(base):  # type: ignore[misc]
        fewer_keys = False

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            mapping = super().construct_mapping(node, deep=deep)
            if len(mapping) != len(node.value):
                self.fewer_keys = True
            return mapping

    return Counting


#: how deeply a document may nest objects and arrays: far beyond any real API description (whose
#: schemas nest a few dozen levels), and shallow enough that every recursive stage stays in Python's
#: stack
MAX_DEPTH = 200
#: how many values a document may hold once YAML aliases are expanded, beyond the values written
MAX_ALIAS_EXPANSION = 1_000_000
_LONG_NUMBER = re.compile(f"[0-9]{{{sys.get_int_max_str_digits() + 1},}}")


def _too_long(text: str, display: str, exc: ValueError) -> DiagnosticError:
    """The error for a number longer than Python reads (`sys.get_int_max_str_digits`), at its first
    digit."""
    found = _LONG_NUMBER.search(text)
    where = SourceLocation(display, *_line_col(text, found.start())) if found else SourceLocation(display)
    return DiagnosticError.one(
        "spec-number-too-long",
        f"a number too long to read: {str(exc).split(':')[0]}",
        where,
        "no API description needs such a number: shorten it, or quote it as a string",
    )


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _too_deep(text: str, display: str) -> DiagnosticError:
    """The error for a document nested past what the parser reads, at the first bracket that nests
    deeper than `MAX_DEPTH` (a flow-style or JSON document), else at the file."""
    return _depth_error(_deepest_bracket(text, display))


def yaml_too_deep(text: str, display: str) -> DiagnosticError:
    """The error (``yaml-too-deep``) for one of toolgen's own YAML files (an intent map, toolgen.yaml)
    nested past what its reader follows (ruamel.yaml recurses once a level: a few hundred flow
    brackets end in a RecursionError), at the first bracket deeper than `MAX_DEPTH`, else at the file."""
    return DiagnosticError.one(
        "yaml-too-deep",
        f"mappings and sequences nest more than {MAX_DEPTH} levels deep, past what the YAML reader follows",
        _deepest_bracket(text, display),
        "no intent map or project file nests this deep: flatten the value at this position",
    )


def _deepest_bracket(text: str, display: str) -> SourceLocation:
    """Where the first bracket nesting deeper than `MAX_DEPTH` opens (brackets in double-quoted
    strings skipped), else the file."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (not escaped and ch == "\\"), in_string and (escaped or ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return SourceLocation(display, *_line_col(text, i))
        elif ch in "]}":
            depth -= 1
    return SourceLocation(display)


def _depth_error(location: SourceLocation) -> DiagnosticError:
    return DiagnosticError.one(
        "spec-too-deep",
        f"objects and arrays nest more than {MAX_DEPTH} levels deep",
        location,
        "no API description nests this deep: flatten it with named definitions and $ref",
    )


def _shallow(data: Any) -> bool:
    """Whether the tree `data` (as `json.loads` builds it: no value reached twice) nests at most
    `MAX_DEPTH` containers deep. Walks the containers only; `checked_tree` locates a failure."""
    level: list[Any] = [data] if type(data) in (dict, list) else []
    depth = 0
    while level:
        if depth > MAX_DEPTH:
            return False
        depth += 1
        nxt: list[Any] = []
        for node in level:
            for value in node.values() if type(node) is dict else node:
                if type(value) is dict or type(value) is list:
                    nxt.append(value)
        level = nxt
    return True


def checked_tree(data: Any, text: str, display: str) -> Any:
    """`data` as parsed, after proving it is a tree no deeper than `MAX_DEPTH` (the JSON pointer of
    the first value too deep is the error's location) whose YAML aliases expand to at most
    `MAX_ALIAS_EXPANSION` values more than were written (a "billion laughs" document, or a recursive
    alias, would otherwise exhaust memory or time in every stage that walks it). Raises
    `DiagnosticError`."""
    sizes: dict[int, int] = {}  # id of a container -> values under it, aliases expanded
    distinct = 0
    on_path: set[int] = set()
    # iterative post-order walk: (node, pointer tokens, children pushed?)
    stack: list[tuple[Any, list[str], bool]] = [(data, [], False)]
    while stack:
        node, tokens, expanded = stack.pop()
        if not isinstance(node, (dict, list)):
            distinct += 1  # a scalar as written (those under an alias are never pushed)
            continue
        key = id(node)
        if expanded:
            on_path.discard(key)
            items = node.values() if isinstance(node, dict) else node
            sizes[key] = 1 + sum(sizes.get(id(v), 1) for v in items)
            continue
        if key in sizes:
            continue  # an alias of a value already measured
        if key in on_path or len(tokens) > MAX_DEPTH:
            pointer = "".join("/" + escape_token(t) for t in tokens)
            if key in on_path:
                raise DiagnosticError.one(
                    "spec-alias-cycle",
                    "a YAML alias refers to a value that contains it",
                    SourceLocation(display, None, None, pointer),
                    "use a $ref instead of a recursive alias",
                )
            raise _depth_error(SourceLocation(display, None, None, pointer))
        distinct += 1
        on_path.add(key)
        stack.append((node, tokens, True))
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, [*tokens, str(k)], False) for k, v in pairs)
    total = sizes.get(id(data), 1)
    if total - distinct > MAX_ALIAS_EXPANSION:
        raise DiagnosticError.one(
            "spec-alias-expansion",
            f"YAML aliases expand the document to {total:,} values (from {distinct:,} written)",
            SourceLocation(display, 1, 1, ""),
            "use $ref for shared parts instead of nesting aliases of aliases",
        )
    return data


def _jsonify(value: Any, merged: list[bool]) -> Any:
    """YAML -> JSON values: dates/timestamps become ISO strings, non-string keys become strings
    (`merged` gets an entry for each mapping where two keys became one string)."""
    if isinstance(value, dict):
        out = {str(k) if not isinstance(k, str) else k: _jsonify(v, merged) for k, v in value.items()}
        if len(out) != len(value):
            merged.append(True)
        return out
    if isinstance(value, list):
        return [_jsonify(v, merged) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def join_tokens(tokens: list[str]) -> str:
    return "".join("/" + escape_token(t) for t in tokens)


def load_spec(
    path: Path, display: str | None = None, sink: DiagnosticSink | None = None, remember: Remember = computed
) -> SpecDocument:
    """Load and structurally validate an OpenAPI 3.0/3.1 document, or a Swagger 2.0 one (converted
    to OpenAPI 3.0.3 by `toolgen.compile.swagger2`, located in the 2.0 text).

    Raises `DiagnosticError` for unreadable files, syntax errors, 2.0 constructs without an OpenAPI 3
    equivalent, unknown versions and structural errors. Schema-internal validation problems, what a
    2.0 conversion drops and each key written twice in one object (`duplicate_key_warnings`) go to
    `sink` as warnings; with a `sink`, an error raised after the text is read comes with those
    warnings (a dropped duplicate is often its cause). `remember`: the validation's findings (by pointer, `model_findings`) and the
    duplicate keys (`duplicate_keys`), kept by the document's `SpecDocument.content_key` (the build
    cache passes one, so a build whose spec did not change neither imports nor runs openapi-pydantic,
    nor parses the text again for duplicates), and a ``.json`` file's tree, by its bytes (`_read`).
    """
    display = display or display_path(path)
    read = _read(path, display, remember)
    try:
        return _load(path, display, read, sink, remember)
    except DiagnosticError as exc:
        if sink is None or any(d.code == "spec-duplicate-key" for d in exc.diagnostics):
            raise
        # an error raised before the model validation (`_checked`) may be a dropped duplicate's doing too
        found = duplicate_key_warnings(
            SpecDocument(
                path,
                display,
                read.text,
                read.data,
                read.format,
                "3.0",
                "",
                repeats=read.repeats,
                remember=remember,
            )
        )
        if not found:
            raise
        raise DiagnosticError([*exc.diagnostics, *found]) from None


#: `SURROGATE_ESCAPE` over a file's bytes (its pattern is ASCII)
_SURROGATE_ESCAPE_BYTES = re.compile(SURROGATE_ESCAPE.pattern.encode("ascii"))


def _escapes_surrogate(source: str | bytes) -> bool:
    """Whether the text (or the UTF-8 bytes it is decoded from) holds a surrogate escape
    (`SURROGATE_ESCAPE`): the bytes give the text's answer, since the pattern is ASCII and UTF-8
    writes each ASCII character as its own byte, and no other character with an ASCII byte."""
    if isinstance(source, bytes):
        return _SURROGATE_ESCAPE_BYTES.search(source) is not None
    return SURROGATE_ESCAPE.search(source) is not None


def _load(
    path: Path, display: str, read: _Read, sink: DiagnosticSink | None, remember: Remember
) -> SpecDocument:
    """`load_spec` after the file is read: the document's checks, and the Swagger 2.0 conversion."""
    text, data, fmt, repeats = read.source, read.data, read.format, read.repeats
    if not isinstance(data, dict):
        raise DiagnosticError.one(
            "spec-not-object",
            "an OpenAPI document must be a mapping at its top level",
            SourceLocation(display, 1, 1, ""),
            "is this the right file?",
        )
    if _escapes_surrogate(text):
        bad = surrogate_paths(data)
        if bad:
            probe = SpecDocument(path, display, text, data, fmt, "3.0", str(data.get("openapi", "")))
            raise DiagnosticError(
                probe.fill_locations(
                    [
                        Diagnostic(
                            "spec-encoding",
                            "error",
                            "text holds an unpaired UTF-16 surrogate escape (e.g. \\ud800), "
                            "which is not a Unicode character and cannot be written as UTF-8",
                            probe.locate(join_tokens(p)),
                            "write the character itself, or a complete surrogate pair in JSON",
                        )
                        for p in bad
                    ]
                )
            )
    if is_swagger2(data):
        return _load_swagger2(path, display, text, data, fmt, sink, remember, repeats)
    version_field = data.get("openapi")
    if not isinstance(version_field, str):
        raise DiagnosticError.one(
            "spec-version-missing",
            "no `openapi` version field: is this an OpenAPI document?",
            SourceLocation(display, 1, 1, ""),
            "add `openapi: 3.1.0` (or 3.0.x) at the top level",
        )
    version_text = version_field
    if re.match(r"^3\.0(\.\d+)?", version_text):
        version: OpenAPIVersion = "3.0"
    elif re.match(r"^3\.1(\.\d+)?", version_text):
        version = "3.1"
    else:
        doc_probe = SpecDocument(path, display, text, data, fmt, "3.0", version_text)
        raise DiagnosticError.one(
            "spec-version-unsupported",
            f"OpenAPI version {version_text!r} is not supported",
            doc_probe.locate_now("/openapi"),
            "toolgen reads OpenAPI 3.0.x and 3.1.x",
        )
    return _checked(
        SpecDocument(
            path,
            display,
            text,
            data,
            fmt,
            version,
            version_text,
            repeats=repeats,
            remember=remember,
            source_sha256=read.source_sha256,
        ),
        sink,
        remember,
    )


#: how many duplicate keys are reported one by one; the rest are counted in one more warning
MAX_DUPLICATE_WARNINGS = 20


def duplicate_keys(doc: SpecDocument) -> tuple[DuplicateKey, ...]:
    """The keys written more than once in one object of the document's text
    (`toolgen.compile.duplicates`), with pointers and positions of the text (for a Swagger 2.0
    document, the 2.0 text). A pure function of `doc.content_key`."""
    if doc.format == "json":
        return json_duplicate_keys(doc.text)
    return yaml_duplicate_keys(doc.yaml_tree()) if doc.repeats else ()


def duplicate_key_warnings(doc: SpecDocument, remember: Remember = computed) -> list[Diagnostic]:
    """A ``spec-duplicate-key`` warning for each key of `duplicate_keys` (through `remember`, by the
    document's `SpecDocument.content_key`), at the occurrence the reader keeps (file:line:col and
    the JSON pointer of that member), naming the lines of the ones it dropped; after
    `MAX_DUPLICATE_WARNINGS`, one warning counts the rest. A warning, not an error: real specs have
    them, and the document is read as every JSON and YAML reader reads it."""
    found: tuple[DuplicateKey, ...] = remember(
        doc.content_key + " duplicate keys 1", partial(duplicate_keys, doc)
    )
    out: list[Diagnostic] = []
    for dup in found[:MAX_DUPLICATE_WARNINGS]:
        line, col = dup.positions[-1] if dup.positions else (None, None)
        dropped = ", ".join(f"{ln}:{c}" for ln, c in dup.positions[:-1])
        out.append(
            Diagnostic(
                "spec-duplicate-key",
                "warning",
                f"key `{dup.key}` is written {len(dup.positions)} times in this object: only this last one is "
                f"read, the one{'s' if len(dup.positions) > 2 else ''} at line:column {dropped or '?'} "
                f"{'are' if len(dup.positions) > 2 else 'is'} ignored",
                SourceLocation(doc.display, line, col, dup.member),
                "keep one: merge what the others say into it and delete them (object keys must be unique: "
                "RFC 8259 section 4, YAML 1.2 section 3.2.1.1)",
            )
        )
    if len(found) > MAX_DUPLICATE_WARNINGS:
        out.append(
            Diagnostic(
                "spec-duplicate-key",
                "warning",
                f"{len(found) - MAX_DUPLICATE_WARNINGS} more keys are written twice in one object (not listed)",
                SourceLocation(doc.display, 1, 1, ""),
                "fix the ones listed, then build again to see the rest",
            )
        )
    return out


def _checked(doc: SpecDocument, sink: DiagnosticSink | None, remember: Remember) -> SpecDocument:
    """`doc` after its duplicate keys went to `sink` and its model validation ran (`validate_model`);
    a validation error is raised with the duplicate-key warnings beside it (a dropped duplicate is
    often its cause)."""
    duplicates = duplicate_key_warnings(doc, remember) if sink is not None else []
    try:
        validate_model(doc, sink, remember)
    except DiagnosticError as exc:
        raise DiagnosticError([*exc.diagnostics, *duplicates]) from None
    if sink is not None:
        sink.extend(duplicates)
    return doc


def _load_swagger2(
    path: Path,
    display: str,
    text: str | bytes,
    data: dict[str, Any],
    fmt: Literal["json", "yaml"],
    sink: DiagnosticSink | None,
    remember: Remember = computed,
    repeats: bool = True,
) -> SpecDocument:
    """A Swagger 2.0 document, read as the OpenAPI 3.0.3 document it converts to (module docstring)."""
    source = SpecDocument(path, display, text, data, fmt, "3.0", str(data.get("swagger")))
    try:
        converted = convert_swagger2(data, display)
    except DiagnosticError as exc:
        raise DiagnosticError(source.fill_locations(exc.diagnostics)) from None
    if sink is not None:
        sink.extend(source.fill_locations(converted.warnings))
    doc = SpecDocument(
        path,
        display,
        text,
        converted.data,
        fmt,
        "3.0",
        str(converted.data["openapi"]),
        swagger=str(data["swagger"]),
        pointers=converted.pointers,
        repeats=repeats,
        remember=remember,
    )
    return _checked(doc, sink, remember)
