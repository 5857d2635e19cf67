"""Stage `lower`: spec operations + intents -> the frozen IR (`ApiIR` of `Tool`s).

Input: a `SpecDocument` and a `LoadedIntentMap`. Output: `ApiIR`. Per operation this builds one
canonical input schema (path, query, header and cookie parameters plus the request body's
properties, collision-safe), the binding table (argument -> location + wire name), the output schema
(projected, paginated, wrapped to an object root) and the policy row. Write and destructive intents
become `preview_<name>` (mode preview, effect read) and `record_<name>` (mode record).

Modules: `intents` (the driver: explicit intents, include groups), `tools` (one intent -> its tools
and policy rows), `operation` (one operation lowered once) from `parameters`, `body`, `security`,
`outputs` and `paging`; `text` (descriptions), `routing` (the near neighbours each description
names, toolset descriptions) and `context` (what they share).
`operation_parameters` and `operation_response` (`operation_success`: with its declared headers)
give `toolgen init` and `toolgen lint` the same
parameter and response choice as the build.
"""

from .intents import lower
from .outputs import operation_response, operation_success
from .parameters import operation_parameters

__all__ = ["lower", "operation_parameters", "operation_response", "operation_success"]
