"""Scaffolding: `init` (a spec -> a draft intent map) and `draft_lowering` (the draft lowered
to measure its tools)."""
