"""The call path's parts beneath the steps of `toolgen.runtime.pipeline`: the arguments
(`arguments`, `dialect_args`, `nulls`), the tool (`toolspec`, `host`), the request
(`request`, `credentials`), the answer (`response_body`, `shaping`, `page_cursor`), the
stored previews a record executes (`stored_previews`) and the timing (`deadline`,
`backoff`). Sans IO like the steps."""
