"""Stage helper `schema`: OpenAPI Schema Objects -> canonical, self-contained JSON Schema 2020-12.

Input: one Schema Object of a loaded `SpecDocument` (a raw dict from ``doc.data``, possibly a
``{"$ref": ...}``), the JSON pointer where it sits (for diagnostics) and a context, ``"input"``
(request parameters and bodies) or ``"output"`` (responses).

Output: a fresh JSON Schema 2020-12 dict (never sharing objects with the document or with earlier
results) in *canonical form*:

* every local ``$ref`` is inlined, except schemas that take part in a reference cycle; those are
  kept once under ``$defs/<Name>`` and referenced as ``{"$ref": "#/$defs/<Name>"}``, so every
  ``$ref`` in a result resolves inside that result. A root that is itself recursive is inlined one
  level, so the root keeps its own keywords (e.g. ``type: object``);
* OpenAPI 3.0 ``nullable`` (and ``x-nullable``) becomes a JSON Schema null type; 3.1 type arrays
  are kept with ``null`` last; no ``nullable`` key remains;
* ``readOnly`` properties are removed from input schemas, ``writeOnly`` ones from output schemas
  (also from ``required``), at every depth and through ``$ref``;
* ``allOf`` is merged into one schema (a conflict raises ``schema-allof-conflict``); ``oneOf`` and
  ``anyOf`` are kept (dialects rewrite them);
* OpenAPI-only keywords (``discriminator``, ``xml``, ``externalDocs``, ``example``, ``examples``)
  and ``x-*`` extensions are dropped; 3.0 boolean ``exclusiveMinimum``/``exclusiveMaximum`` take
  the 2020-12 numeric form; ``enum`` values are de-duplicated; arrays get ``items`` (``{}`` when
  absent); ``type: file`` becomes ``{"type": "string", "format": "binary"}``; ``{}`` stays ``{}``.

Errors raise `DiagnosticError` (they are *not* added to the sink, so a caller may downgrade them,
e.g. skip one operation): ``ref-external``, ``ref-missing``, ``ref-invalid``, ``ref-cycle`` (a
``$ref``/``allOf`` loop without schema content), ``schema-allof-conflict`` and
``schema-too-large`` (node or depth budget exceeded). The sink gets ``schema-cycle`` (info,
once per group of mutually recursive schemas) and ``schema-invalid`` (warning: a non-schema value where a
schema was expected; read as ``{}``).

Implementation notes: converted ``$ref`` targets are memoised per (pointer, context) and shared
while a result is assembled; node counts and depth are measured on that shared graph, so a schema
that would explode when inlined is rejected without being expanded; the tree is copied only when
it fits the budget. Cycles are found with Tarjan's algorithm over sorted edges, so names,
messages and output do not depend on dict or set iteration order.

Modules: `converter` (`SchemaConverter`: the structure, and the budget) delegates each keyword family
to its own module: `refs` (``$ref`` resolution, the reference graph, recursive schemas), `composition`
(``allOf``), `nullability` (``nullable``, readOnly/writeOnly) and `formats` (type, format, bounds,
enum and the other value keywords). `tree` holds what they share; `projection` the helpers on
canonical schemas (`object_view`, `project_schema`, `limit_depth`).
"""

from .converter import SchemaBudget, SchemaConverter
from .projection import limit_depth, object_view, project_schema
from .refs import def_name_for_pointer
from .tree import Interner, copy_tree, json_size, schema_nodes

__all__ = [
    "Interner",
    "SchemaBudget",
    "SchemaConverter",
    "copy_tree",
    "def_name_for_pointer",
    "json_size",
    "limit_depth",
    "object_view",
    "project_schema",
    "schema_nodes",
]
