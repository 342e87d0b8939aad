"""The package version, read by hatchling and by `logdiag --version`."""

__version__ = "0.1.0"
