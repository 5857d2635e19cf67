"""Where the jinja2 templates live: inside the wheel (`toolgen/templates/`) or, in a source
checkout, the repository's `templates/` folder."""

from __future__ import annotations

from pathlib import Path


def template_dir() -> Path:
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"
