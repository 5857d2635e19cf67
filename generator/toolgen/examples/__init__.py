"""Runnable examples that ship with toolgen: the tickets API server used by the README and the tests."""
