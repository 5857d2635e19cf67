"""Review tools: lint intent maps, diff the generated tool surface, draft an intent map."""
