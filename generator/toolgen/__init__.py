"""toolgen: compile an OpenAPI spec plus an intent map into narrow, strict, policy-enforced agent tools.

The layout is the architecture. Each layer imports only the layers below it (`lint-imports` checks
the contracts in pyproject.toml):

    cli        the `toolgen` commands and their exit codes; the only package that imports click
    build      the pipeline, in memory: load -> intent -> lower -> lint -> emit (`write` puts it on disk)
    review     lint (rules, linter, formats; the build runs the linter too), diff, init
    emit       IR + catalogs -> files in memory: catalogs, policy table, report, Python package
    dialects   IR tools -> OpenAI, Anthropic and MCP tool objects, and each provider's rules
    compile    OpenAPI document + intent map -> the typed IR (`ApiIR`)
    kernel     diagnostics, pointer, naming, tokens, yaml_text (the one reader of toolgen.yaml)

`project` (toolgen.yaml) and `write` sit between emit and review. The `runtime` enforces a generated
package's policy table on every call and depends on the kernel only.
"""

__version__ = "0.1.0"
