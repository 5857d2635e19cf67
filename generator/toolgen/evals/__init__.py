"""toolgen evals: measure whether a model picks, fills and recovers with a generated package's tools (docs/eval.md)."""
