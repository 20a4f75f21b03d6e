"""The committed results/ and viewer data are exactly what run_all.py regenerates.

Runs the full default job (2,000 sweep cases, every system and tier) into a temporary folder
and compares every file byte for byte with the committed ones (``results/mutants/`` is
written by ``run_all.py --mutants`` and checked by tests/sim/test_sim_mutations.py).
A difference means either the
code changed behaviour without regenerating results (run `python3 run_all.py` and commit), or
the output is not deterministic (a bug).
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VIEWER_DATA = ("traces.js", "sweep.js", "sweep_traces.js")
VIEWER_FOLDERS = ("faults", "replays")  # per-fault runs and compact replays, loaded lazily
SEPARATE = ("mutants", "coding")  # written by `run_all.py --mutants` / `--coding`


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and p.relative_to(folder).parts[0] not in SEPARATE}


def test_run_all_regenerates_the_committed_results(tmp_path):
    out, viewer = tmp_path / "results", tmp_path / "viewer"
    if (ROOT / "results" / "coding").is_dir():  # an input of the viewer data, from --coding
        shutil.copytree(ROOT / "results" / "coding", out / "coding")
    cmd = [sys.executable, str(ROOT / "run_all.py"), "--out", str(out),
           "--viewer-out", str(viewer / "traces.js")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    committed = _files(ROOT / "results")
    assert _files(out) == committed, "run_all.py writes other files than are committed"
    differ = [name for name in sorted(committed)
              if not filecmp.cmp(out / name, ROOT / "results" / name, shallow=False)]
    names = list(VIEWER_DATA)
    for folder in VIEWER_FOLDERS:
        written = {str(p.relative_to(viewer)) for p in (viewer / folder).rglob("*.js")}
        kept = {str(p.relative_to(ROOT / "viewer"))
                for p in (ROOT / "viewer" / folder).rglob("*.js")}
        assert written == kept, f"viewer/{folder}: run_all.py writes other files than are committed"
        names += sorted(written)
    differ += [f"viewer/{name}" for name in names
               if not filecmp.cmp(viewer / name, ROOT / "viewer" / name, shallow=False)]
    assert not differ, f"regenerated files differ from the committed ones: {differ[:10]} " \
                       f"(reproduce: python3 run_all.py && git status)"
