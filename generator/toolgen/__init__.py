"""toolgen: compile an OpenAPI spec plus an intent map into narrow, strict, policy-enforced agent tools.

Pipeline (pure stages, IO at the edges): load -> intent -> lower -> lint -> emit -> write.
"""

__version__ = "0.1.0"
