"""evoarena: a lab for self-evolving agent harnesses."""

__version__ = "0.1.0"
