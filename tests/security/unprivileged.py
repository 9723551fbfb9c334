"""How a test run as root reaches a path only an unprivileged user takes (root ignores file modes): the command prefix
that runs a program as `nobody`, or a skip that says why it cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest


def as_unprivileged() -> list[str]:
    """`[]` when the tests do not run as root; else a `setpriv` prefix to `nobody` under which this interpreter can
    import evoarena — or a skip (no setpriv, or a checkout under a directory only root may enter, as `mktemp -d`)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: an unprivileged user's path cannot be reached")
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--reset-env"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import evoarena.harness, evoarena.sandbox"],
                           capture_output=True, timeout=60, cwd="/tmp", check=False)
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot import evoarena with {sys.executable} (a checkout or venv under a directory only "
                    "root may enter): an unprivileged user's path cannot be reached from here")
    return prefix
