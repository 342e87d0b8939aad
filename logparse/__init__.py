"""logdiag: read SGLang server logs and say what happened. The public API, re-exports only."""

from logparse._version import __version__

__all__ = ["__version__"]
