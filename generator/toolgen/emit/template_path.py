"""Stage `emit`: where the jinja2 templates of the generated package live.

Input: none. Output: the folder: inside the wheel (`toolgen/templates/`) or, in a source checkout,
the repository's `templates/` folder.
"""

from __future__ import annotations

from pathlib import Path


def template_dir() -> Path:
    here = Path(__file__).resolve()  # toolgen/emit/template_path.py
    packaged = here.parents[1] / "templates"
    if packaged.is_dir():
        return packaged
    return here.parents[3] / "templates"
