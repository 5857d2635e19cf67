"""Stage `compile`: an OpenAPI document and an intent map -> the typed IR (`ApiIR`).

Input: the spec's file (`load`: JSON or YAML, OpenAPI 3.0/3.1, external `$ref`s `bundle`d when the
intent map allows) and the intent map (`intent`). Output: the `ApiIR` (`ir`), built by `lower` from
the spec's `operations`, their schemas converted to canonical JSON Schema 2020-12 (`schema`) and
their paging detected (`pagination`). `sourcemap` puts diagnostics at file:line:col; `inputs` finds
the API name and the spec an intent map names.
"""
