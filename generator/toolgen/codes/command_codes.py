"""Kernel `codes.command_codes`: the registry's codes (`toolgen.codes.table`) of the build's output
and of the commands other than build and lint: `toolgen init`, `vendor`, `diff`, `eval` task files,
and reading a `policy.json`.

Input: nothing (the rows are data). Output: `COMMAND_CODES` (the rows, by stage).
"""

from __future__ import annotations

from .rows import Rows

COMMAND_CODES: Rows = Rows()
_code = COMMAND_CODES.add

# the build
_code(
    "out-unsafe",
    "error",
    "build",
    summary=(
        "An output folder would lose data: it is a file, holds (or is) an input or the working "
        "directory, overlaps another output (also once case and Unicode normalisation are folded, as "
        "macOS and Windows fold them), holds files toolgen does not write, or has a name Windows cannot "
        "hold (`CON`, `a:b`)."
    ),
    fix="Choose another `out:` as the hint says (toolgen replaces its output folders whole).",
)
_code(
    "search-semantic-unavailable",
    "error",
    "build",
    summary="`search.semantic` is set, but numpy, which it needs, is not installed.",
    fix="Install the `semantic` extra, or remove `search.semantic` (lexical search).",
)
_code(
    "search-dense-unavailable",
    "error",
    "build",
    summary="`search.semantic: onnx` is set, but onnxruntime or tokenizers, which it needs, is not installed.",
    fix="Install the `dense` extra, or remove `search.semantic` (lexical search).",
)
_code(
    "search-dense-model",
    "error",
    "build",
    summary=(
        "The dense option's model or tokenizer file is missing, unreadable, not parseable, or not a "
        "sentence-embedding graph (inputs `input_ids`, `attention_mask`; a per-token or pooled output)."
    ),
    fix="Point `search.model` / `search.tokenizer` at a sentence-transformers ONNX export and its tokenizer.json.",
)
_code(
    "search-dense-pin-mismatch",
    "error",
    "build",
    summary="The SHA-256 of the dense option's model or tokenizer file is not the one toolgen.yaml pins.",
    fix="Use the pinned file; or, having checked where the new file came from, pin its hash (sha256sum FILE).",
)

# toolgen init
_code(
    "init-name-invalid",
    "error",
    "init",
    summary="The API name is not valid.",
    fix="Use lower-case letters, digits and '_', e.g. --name my_api.",
)
_code(
    "init-file-exists",
    "error",
    "init",
    summary="The intent map to write already exists; nothing was written.",
    fix="Pass --force to overwrite it, or --out another file.",
)

# toolgen vendor
_code(
    "slice-ref",
    "error",
    "vendor",
    summary="A `$ref` the slice needs cannot be followed (another file, or a pointer that names nothing).",
    fix="Bundle the document first, or fix the reference.",
)
_code(
    "vendor-overwrites-source",
    "error",
    "vendor",
    summary="The slice would overwrite the document it is cut from.",
    fix="Point the intent map's `spec:` (or --out) at a new file, e.g. specs/<api>.slice.json.",
)

# toolgen diff
_code(
    "diff-input-missing",
    "error",
    "diff",
    summary="A folder to compare does not exist.",
    fix="Pass two folders written by `toolgen build`.",
)
_code(
    "diff-input-invalid",
    "error",
    "diff",
    summary="A `policy.json` or `mcp.json` to compare is malformed, or of another policy format version.",
    fix="Compare folders written by this toolgen's `toolgen build` (rebuild an older base into a folder).",
)
_code(
    "diff-git-error",
    "error",
    "diff",
    summary="git failed while reading the base.",
    fix="Check the ref (e.g. `git fetch origin main` in CI) and the --dir path.",
)
_code(
    "diff-not-a-repository",
    "error",
    "diff",
    summary="Not in a git repository: there is no base to compare against.",
    fix="Run toolgen diff inside the repository, or compare two folders: `toolgen diff OLD_DIR NEW_DIR`.",
)
_code(
    "diff-no-commits",
    "error",
    "diff",
    summary="The repository has no commits yet, so the ref names nothing to compare against.",
    fix="Commit the generated folder first, or compare two folders.",
)
_code(
    "diff-unknown-ref",
    "error",
    "diff",
    summary="git knows no commit of that name.",
    fix="Check the ref (in CI, fetch it first: `git fetch origin main`), or compare two folders.",
)

# toolgen eval task files
_code(
    "eval-audit",
    "error",
    "eval",
    summary="A line of the audit log `toolgen eval from-audit` reads is not a JSON audit event.",
    fix="Pass the JSON-lines file `--audit-log` wrote (one event per line).",
    doc="docs/eval.md#tasks-from-production-failures-toolgen-eval-from-audit",
)
_code(
    "eval-yaml",
    "error",
    "eval",
    summary="The task file cannot be read, or is not valid YAML.",
    fix="Check the path and the YAML syntax.",
)
_code(
    "eval-format",
    "error",
    "eval",
    summary="The task file is not a mapping, or names a format this toolgen does not read.",
    fix="Start from `toolgen eval init API`.",
)
_code(
    "eval-field",
    "error",
    "eval",
    summary="A member of the task file is missing, unknown, or of the wrong type.",
    fix="Fix the member the pointer names (docs/eval.md describes the file).",
)
_code(
    "eval-duplicate",
    "error",
    "eval",
    summary="Two tasks have the same id.",
    fix="Give every task its own id.",
)
_code(
    "eval-split",
    "error",
    "eval",
    summary="A task's `split` disagrees with the split rule (SHA-256 of '<api>:<id>').",
    fix="Write the split the message names, or remove it.",
)
_code(
    "eval-tool",
    "error",
    "eval",
    summary="A task expects a tool the package does not have.",
    fix="Name one of the package's tools, or null.",
)
_code(
    "eval-pointer",
    "error",
    "eval",
    summary="An expected argument's `pointer` is not a JSON pointer to an argument.",
    fix="Write a pointer such as /ticket_id.",
)
_code(
    "eval-package",
    "error",
    "eval",
    summary="There is no generated package where the task file's `package` points.",
    fix="Run `toolgen build`, or fix `package` (relative to the task file).",
)

# reading policy.json
_code(
    "policy-format-invalid",
    "error",
    "policy",
    summary="A `policy.json` breaks the policy format (a member missing, unknown or of the wrong type).",
    fix="Rebuild it with this toolgen (`toolgen build`).",
)

# toolgen serve --http: why a caller's access token was refused (the 401's `code`)
_code(
    "token-not-access-token",
    "error",
    "serve",
    summary=(
        "A bearer token is not a JWT access token: its header's `typ` is not `at+jwt` (RFC 9068 §4), "
        "or, with `typ: any`, it carries an ID token's `nonce`, `at_hash` or `c_hash`; answered 401 "
        "`invalid_token`."
    ),
    fix=(
        "Present the access token the authorization server issued for this server's `resource`, never "
        "an ID token; for an authorization server that does not set `typ: at+jwt`, set `typ: any` in "
        "the authorization-server file."
    ),
)
_code(
    "token-key-unknown",
    "error",
    "serve",
    summary=(
        "A bearer token's `kid` names no key of the authorization server's JWKS that the server holds, "
        "and no fetch could find it now (it failed or ran out of time, or one ran within "
        "`min_refetch_s`); answered 401 `invalid_token`."
    ),
    fix=(
        "Retry after the delay the description names; if the authorization server just rotated its keys "
        "the next fetch finds the new one. Check that `jwks_uri` answers."
    ),
)
_code(
    "token-header-repeated",
    "error",
    "serve",
    summary=(
        "A request carries more than one `Authorization` header (a singleton field, RFC 9110 §5.3; "
        "RFC 6750 §3.1 `invalid_request`): a proxy reading one and the server another would "
        "authenticate two callers; answered 400 `invalid_request`, no token read."
    ),
    fix="Send exactly one `Authorization: Bearer <token>` header.",
)
