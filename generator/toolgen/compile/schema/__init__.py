"""OpenAPI Schema Objects -> canonical, self-contained JSON Schema 2020-12 (see `converter`)."""

from .converter import (
    SchemaBudget,
    SchemaConverter,
    copy_tree,
    def_name_for_pointer,
    limit_depth,
    object_view,
    project_schema,
    schema_nodes,
)

__all__ = [
    "SchemaBudget",
    "SchemaConverter",
    "copy_tree",
    "def_name_for_pointer",
    "limit_depth",
    "object_view",
    "project_schema",
    "schema_nodes",
]
