"""Stage `lower`: spec operations + intents -> the frozen IR (see `intents`)."""

from .intents import lower, operation_parameters, operation_response

__all__ = ["lower", "operation_parameters", "operation_response"]
