"""Runs the shared TLA+ conformance suite (without the benchmark) against the checker."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO.parent / "shared" / "tla-conformance"


@pytest.mark.skipif(not (SUITE / "check_manifest.py").exists(),
                    reason=f"conformance suite not found at {SUITE}")
def test_conformance_suite_passes():
    checker = f"{sys.executable} -m spec.checker --json -config {{cfg}} {{spec}}"
    proc = subprocess.run(
        [sys.executable, str(SUITE / "check_manifest.py"), "--checker", checker,
         "--cwd-project", str(REPO), "--exit-codes", "--timeout", "120"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONHASHSEED": "0"})  # pinned: the CLI need not run itself again
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    assert lines[-1].endswith(" 0 failed"), proc.stdout
    assert proc.returncode == 0, proc.stdout
