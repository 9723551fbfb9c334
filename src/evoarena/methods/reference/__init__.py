"""`reference`: a harness the user gives, installed as it is and never evolved — the positive control beside `frozen`.

Modules: `method` (the params, reading a directory of files, installing and showing them). See
docs/methods/reference.md.
"""

from evoarena.methods.reference.method import Reference

__all__ = ["Reference"]
