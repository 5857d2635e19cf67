"""``python -m toolgen.codes [--check] [--root DIR]``: the docs tables from the registry of codes."""

import sys

from .docs import main

sys.exit(main())
