"""The performance scripts in perf/ stay runnable: each one's seconds-long `--smoke` version runs in a fresh process and
prints its table (the measured figures are in docs/performance.md, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PERF = Path(__file__).resolve().parent.parent / "perf"


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("script", "expect"), [
    ("concurrency.py", "speed-up"), ("rerun.py", "rerun / first"), ("scale.py", "ms/attempt"),
    ("overhead.py", "scripted arith-basics end to end"), ("sandbox.py", "bare python ms"),
    ("channel.py", "in process us/call"), ("ceiling.py", "calls/s median"),
])
def test_smoke(script: str, expect: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(PERF / script), "--smoke"], cwd=PERF, capture_output=True, text=True,
                         timeout=170, env={"PATH": "/usr/bin:/bin", "EVOARENA_CACHE_DIR": str(tmp_path),
                                           "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert expect in out.stdout
