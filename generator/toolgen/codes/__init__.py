"""The diagnostic codes: one registry (`toolgen.codes.table`) and the docs tables written from it
(`toolgen.codes.docs`, `python -m toolgen.codes [--check]`)."""

from .table import CODES, STAGES, Code, UnregisteredCode, code_info, is_registered

__all__ = ["CODES", "STAGES", "Code", "UnregisteredCode", "code_info", "is_registered"]
