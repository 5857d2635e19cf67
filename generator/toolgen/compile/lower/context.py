"""Stage `lower`, shared types. What the lowering modules share while one API is lowered: the context (`Ctx`), an argument under
construction (`Arg`), an operation lowered once for both tools of a write (`Lowered`), and `Skip`,
raised when an operation cannot become a tool (an error for an explicit intent; for an include
group, a located warning and the operation is skipped). `Ctx` holds the input (document, intent
map, sink, schema converter); `Lowered` is the output of `toolgen.compile.lower.operation`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...diagnostics import DiagnosticSink, SourceLocation
from ...remember import Remember
from ...results import Redirect, ResponseBody, Shape
from ..intent import LoadedIntentMap
from ..ir import ArgBinding, AuthBinding, BodyEncoding, FixedValue, NarrowedArg, Pagination, Toolset
from ..load import SpecDocument
from ..schema import SchemaConverter

#: locates a key of the intent being lowered (for an include group: the operation in the spec)
Locate = Callable[..., SourceLocation | None]


@dataclass
class Arg:
    name: str
    schema: dict[str, Any]
    binding: ArgBinding | None
    required: bool
    #: a member an optional request body requires: required whenever another member of the body is
    #: given (the input schema's `dependentRequired`), optional otherwise
    required_in_body: bool = False


@dataclass
class Lowered:
    """An operation lowered once, shared by the preview and record tools of one intent."""

    args: list[Arg]
    encoding: BodyEncoding
    content_type: str | None
    output_schema: dict[str, Any]
    pagination: Pagination | None
    fixed: tuple[FixedValue, ...]
    auth: tuple[AuthBinding, ...]
    success: tuple[int, ...]
    op_scopes: tuple[str, ...]
    narrowed: tuple[NarrowedArg, ...] = ()
    shape: Shape = "object"
    body: ResponseBody = "json"
    accept: str | None = None
    #: the API's schema of the parameter or body member the idempotency key is sent in, if declared
    key_schema: dict[str, Any] | None = None
    redirect: Redirect | None = None


@dataclass
class Ctx:
    doc: SpecDocument
    intents: LoadedIntentMap
    sink: DiagnosticSink
    api: str
    converter: SchemaConverter
    names: dict[str, str] = field(default_factory=dict)  # tool name -> operation pointer
    toolsets: dict[str, Toolset] = field(default_factory=dict)  # toolsets used so far, by name
    #: ``remember(key, compute)``: each operation's lowering remembered between builds
    #: (`toolgen.compile.lower.reuse`); None: every operation is lowered
    remember: Remember | None = None
    keys: Any = None  # the `reuse.OperationKeys` of this document, with `remember`
    #: the last build's tools of each intent (`remembered_tools.IntentTools`), with `keys`; None: computed
    tools: Any = None


class Skip(Exception):
    """An operation cannot be lowered; carries (code, message, location, hint)."""

    def __init__(self, code: str, message: str, location: SourceLocation | None, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.location, self.hint = code, message, location, hint
