"""The policy kernel: the one definition of ``policy.json``, written by the build and read by the
runtime. `format` (the typed rows, `to_json`, the reader), `nodes` (the typed JSON it is read
from), `mapping` and `members` (the member names of each object), `limits` (a row's limits and
approval condition members), `conditions` (the CEL of an approval condition: checked, evaluated,
compared), `schema` (its JSON Schema, ``docs/policy.schema.json``)."""
