"""Kernel `codes.reading_codes`: the registry's codes (`toolgen.codes.table`) for reading the inputs,
none a lint rule: the project file, reading a file, the spec, the Swagger 2.0 conversion, schemas
and the intent map.

Input: nothing (the rows are data). Output: `READING_CODES` (the rows, by stage in the order a build
meets them).
"""

from __future__ import annotations

from .rows import Rows

READING_CODES: Rows = Rows()
_code = READING_CODES.add

# the project file
_code(
    "project-not-found",
    "error",
    "project",
    summary="There is no project file (toolgen.yaml) where the command looks for one.",
    fix=(
        "Run toolgen in the folder that holds toolgen.yaml, pass --project, or build one intent map: "
        "`toolgen build INTENT_MAP --out DIR`."
    ),
)
_code(
    "project-invalid",
    "error",
    "project",
    summary="toolgen.yaml breaks its schema (an unknown key, a wrong type, an API listed twice).",
    fix="Fix the member the message names.",
)
_code(
    "project-output-outside",
    "error",
    "project",
    summary="An output path of toolgen.yaml (an API's `out`, `schema_out`) resolves outside the folder that "
    "holds toolgen.yaml (`..`, an absolute path, a symbolic link), where a changed toolgen.yaml could make a "
    "build write anywhere the runner can.",
    fix="Write a path inside the project folder, or pass `toolgen build --allow-outside-project` when the "
    "folder outside is meant.",
)
_code(
    "spec-override-unknown",
    "error",
    "project",
    summary="`--spec NAME=PATH` names an API the project does not list.",
    fix="Use a name of the project's APIs (the hint lists them).",
)
_code(
    "api-unknown",
    "error",
    "project",
    summary="`toolgen build NAME` names an API the project does not list.",
    fix=(
        "Use a name of the project's APIs, or build an intent map of its own: `toolgen build "
        "INTENT_MAP --out DIR`."
    ),
)

# reading a file (an intent map, a spec, a project file)
_code(
    "file-not-found",
    "error",
    "input",
    summary="A file the command reads does not exist.",
    fix="Check the path.",
)
_code(
    "file-unreadable",
    "error",
    "input",
    summary="A file the command reads is a folder, or cannot be read.",
    fix="Name the file itself, and check its permissions.",
)
_code("file-encoding", "error", "input", summary="A file is not UTF-8 text.", fix="Save it as UTF-8.")
_code(
    "yaml-syntax",
    "error",
    "input",
    summary="A YAML file does not parse.",
    fix="Fix the YAML syntax at the position named.",
)
_code(
    "yaml-too-deep",
    "error",
    "input",
    summary="An intent map or toolgen.yaml nests mappings and sequences more than 200 levels deep, past "
    "what the YAML reader follows.",
    fix="Flatten the value at the position named: no intent map or project file nests this deep.",
)
_code(
    "json-syntax",
    "error",
    "input",
    summary="A JSON file does not parse.",
    fix="Fix the JSON syntax at the position named.",
)

# the spec
_code(
    "spec-missing",
    "error",
    "spec",
    summary="The intent map names no spec.",
    fix="Add `spec: path/to/openapi.yaml` (relative to the intent map), or pass --spec.",
)
_code(
    "spec-not-found",
    "error",
    "spec",
    summary="The spec file does not exist.",
    fix="Check the path (the intent map's `spec:`, `--spec`, or `TOOLGEN_SPEC_<NAME>`).",
)
_code(
    "spec-not-object",
    "error",
    "spec",
    summary="The spec's document is not an object.",
    fix="Point at an OpenAPI document.",
)
_code(
    "spec-encoding",
    "error",
    "spec",
    summary=(
        "Text in the spec holds an unpaired UTF-16 surrogate escape (e.g. \\ud800), which is not a "
        "Unicode character and cannot be written as UTF-8."
    ),
    fix="Write the character itself, or a complete surrogate pair in JSON.",
)
_code(
    "spec-too-deep",
    "error",
    "spec",
    doc="README.md#swagger-20",
    summary="Objects and arrays of the spec nest more than 200 levels deep.",
    fix="Flatten it with named definitions and `$ref`.",
)
_code(
    "spec-alias-expansion",
    "error",
    "spec",
    doc="README.md#swagger-20",
    summary="The spec's YAML aliases expand it past a million values.",
    fix="Use `$ref` for shared parts instead of nesting aliases of aliases.",
)
_code(
    "spec-alias-cycle",
    "error",
    "spec",
    doc="README.md#swagger-20",
    summary="A YAML alias of the spec refers to a value that contains it.",
    fix="Use a `$ref` instead of a recursive alias.",
)
_code(
    "spec-number-too-long",
    "error",
    "spec",
    doc="README.md#swagger-20",
    summary="The spec holds a number longer than Python reads.",
    fix="Shorten it, or quote it as a string.",
)
_code(
    "spec-version-missing",
    "error",
    "spec",
    summary="The document has no `openapi` (or `swagger`) version field.",
    fix="Add `openapi: 3.1.0` (or 3.0.x) at the top level.",
)
_code(
    "spec-version-unsupported",
    "error",
    "spec",
    summary="The document's OpenAPI or Swagger version is not one toolgen reads.",
    fix="toolgen reads OpenAPI 3.0.x and 3.1.x and Swagger 2.0.",
)
_code(
    "spec-invalid",
    "error",
    "spec",
    summary="A part of the document outside its schema objects breaks the OpenAPI (or Swagger) schema.",
    fix="Fix the document at the pointer named.",
)
_code(
    "ref-external",
    "error",
    "spec",
    doc="README.md#the-intent-map",
    summary="A `$ref` points at a URL; toolgen does not fetch URLs.",
    fix="Bundle the spec into one file first (e.g. `redocly bundle`), then point toolgen at it.",
)
_code(
    "ref-outside",
    "error",
    "spec",
    doc="README.md#the-intent-map",
    summary="A `$ref` reaches a file outside the spec's folder.",
    fix="Move the referenced file into the spec's folder (a spec may not read other files of the machine).",
)
_code(
    "ref-missing",
    "error",
    "spec",
    doc="README.md#the-intent-map",
    summary="A `$ref` names a file or a JSON pointer that does not exist.",
    fix="Fix the reference (a file path is relative to the file that holds the `$ref`).",
)
_code(
    "ref-invalid",
    "error",
    "spec",
    summary="A `$ref` is not a string, or not a JSON pointer.",
    fix="Write the reference as '#/components/schemas/Name'.",
)
_code(
    "ref-not-schema",
    "error",
    "spec",
    summary="A schema's `$ref` names something that is not a schema (the whole document with `#`, a path item, "
    "`info`, a response, a string).",
    fix="Point the `$ref` at a schema, e.g. '#/components/schemas/Name'.",
)
_code(
    "ref-not-path-item",
    "error",
    "spec",
    summary="A path item's `$ref` names no Path Item Object: a string, list or number, the whole document, or "
    "a chain of path item `$ref`s that loops; read as a path item, the path's operations would vanish.",
    fix="Point the `$ref` at a Path Item Object, e.g. '#/components/pathItems/Name', or write the path's "
    "operations under it.",
)
_code(
    "ref-cycle",
    "error",
    "spec",
    summary="A `$ref` cycle could not be broken into `$defs`.",
    fix="Report it as a toolgen bug, with the spec.",
)

# Swagger 2.0
_code(
    "swagger2-invalid",
    "error",
    "swagger2",
    summary="Part of a Swagger 2.0 document leaves no conversion to OpenAPI 3.0 (two bodies, an unknown "
    "security type, a top-level key that is not 2.0, ...).",
    fix="Fix the document as the message says.",
)
_code(
    "swagger2-unsupported",
    "error",
    "swagger2",
    summary=(
        "Part of a Swagger 2.0 document OpenAPI 3.0 cannot say (`collectionFormat: tsv`, `schemes` "
        "without http or https, ...)."
    ),
    fix="Change the document to what OpenAPI 3.0 can say.",
)
_code(
    "swagger2-dropped",
    "warning",
    "swagger2",
    summary="Part of a Swagger 2.0 document has no OpenAPI 3.0 equivalent and is dropped.",
    fix="Remove it from the document.",
)

# schemas
_code(
    "schema-keyword-invalid",
    "warning",
    "schema",
    summary="A keyword of a spec schema has a value JSON Schema does not allow; it is dropped.",
    fix="Fix the schema in the spec.",
)
_code(
    "schema-bound-too-large",
    "warning",
    "schema",
    summary="A length or count bound of a spec schema is above 2**53 - 1; it is lowered to that limit, "
    "which no instance reaches.",
    fix="Write a bound of at most 2**53 - 1 in the spec.",
)

# the intent map
_code(
    "intent-not-mapping",
    "error",
    "intent",
    summary="The intent map's document is not a mapping.",
    fix="Start from `toolgen init SPEC`.",
)
_code(
    "intent-invalid",
    "error",
    "intent",
    summary="A key of the intent map is unknown, or its value breaks the intent map's schema.",
    fix="Fix the key as the hint says (generated/intent-map.schema.json describes every key).",
)
_code(
    "intent-encoding",
    "error",
    "intent",
    summary=(
        "Text in the intent map holds a UTF-16 surrogate escape (e.g. \\ud800), which is not a character."
    ),
    fix="Write the character itself.",
)
