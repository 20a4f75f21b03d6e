"""The checker's own parity specs (tests/checker/specs): each construct TLA+ users write that
the checker once blamed or refused, with its expected result in manifest.json (counts worked
out by hand; the shared suite's runner compares them, so the judge shares no code with us)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = Path(__file__).resolve().parent / "specs"
RUNNER = REPO.parent / "shared" / "tla-conformance" / "check_manifest.py"


@pytest.mark.skipif(not RUNNER.exists(), reason=f"shared runner not found at {RUNNER}")
def test_parity_specs_match_their_manifest():
    checker = f"{sys.executable} -m spec.checker --json -config {{cfg}} {{spec}}"
    cmd = [sys.executable, str(RUNNER), "--manifest", str(SPECS / "manifest.json"),
           "--checker", checker, "--cwd-project", str(REPO), "--timeout", "120"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONHASHSEED": "0"})  # the CLI pins it anyway
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].endswith(" 0 failed"), \
        f"{proc.stdout}\nreproduce: {' '.join(cmd)}"
