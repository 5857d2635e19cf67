"""Scaffolding: `init` (a spec -> a draft intent map), `draft_text` (the draft written as YAML with
its comments) and `draft_lowering` (the draft lowered to measure its tools)."""
