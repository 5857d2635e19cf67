"""The build: `build` (one API, a project), `incremental` (the pieces a build reuses),
`cache` (the build cache on disk), `worker` (the forked worker), `project` (``toolgen.yaml``)
and `output_files` (writing and checking ``generated/``)."""
