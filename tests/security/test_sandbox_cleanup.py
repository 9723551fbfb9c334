"""Sandbox clean-up never changes anything outside the scratch dir (issue 12, item 4): sandboxed code plants
`d/l -> VICTIM` and makes `d` read-only, so removing `d/l` fails and the clean-up retries; the retry must make `d`
writable, never chmod through the link. Only an unprivileged user sees the failure (root ignores modes), so the
scenario runs as `nobody` when the tests run as root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from unprivileged import as_unprivileged

SCENARIO = textwrap.dedent("""
    import json, os, stat, tempfile
    from evoarena.sandbox.scratch import remove_tree
    base = tempfile.mkdtemp(prefix="evoarena-cleanup-test-")
    victim = os.path.join(base, "victim")
    os.mkdir(victim, 0o500)  # a directory of the user's, deliberately not writable
    scratch = os.path.join(base, "scratch")
    os.makedirs(os.path.join(scratch, "d"))
    os.symlink(victim, os.path.join(scratch, "d", "l"))
    os.chmod(os.path.join(scratch, "d"), 0o500)
    remove_tree(scratch)
    mode = stat.S_IMODE(os.stat(victim).st_mode)
    print(json.dumps({"victim_mode": oct(mode), "scratch_left": os.path.exists(scratch),
                      "victim_left": os.path.isdir(victim)}))
    os.chmod(victim, 0o700)
    os.rmdir(victim)
    os.rmdir(base)
""")


def test_cleanup_retry_never_chmods_through_a_planted_symlink() -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}
    done = subprocess.run([*as_unprivileged(), sys.executable, "-c", SCENARIO], capture_output=True, text=True,
                          timeout=60, env=env, cwd="/tmp")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"victim_mode": "0o500", "scratch_left": False, "victim_left": True}
