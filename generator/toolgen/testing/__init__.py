"""Test tooling, shipped for the package's users and its own tests alike, never imported by
the runtime: `contract` (a contract suite derived from any generated package), `scripted` (a
scripted model server for `toolgen eval`), `loopback` and `tickets_server` (example API
servers on loopback)."""
