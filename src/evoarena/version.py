"""The package version, in one place (the package face and the run records read it)."""

__version__ = "0.1.0"
