"""What a command prints for a human to read and decide on, made safe for a terminal: the kernel's
`toolgen.shown_text.terminal_safe` (the runtime's approval rounds show text through it too)."""

from __future__ import annotations

from ..shown_text import terminal_safe

__all__ = ["terminal_safe"]
