"""run_all.py: reproducible bytes, replay of a failing case, clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sim import sweep

ROOT = Path(__file__).resolve().parents[2]


def run_all(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "run_all.py", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def test_two_runs_are_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    first = run_all("--cases", "12", "--no-shrink", "--jobs", "2", "--out", str(a))
    second = run_all("--cases", "12", "--no-shrink", "--jobs", "1", "--out", str(b))
    assert first.returncode == 0, first.stdout + first.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    assert first.stdout.splitlines()[0].startswith("run_all: seed=0 cases=12")
    ta, tb = tree(a), tree(b)
    assert ta.keys() == tb.keys()
    assert [k for k in ta if ta[k] != tb[k]] == []
    assert "traces/index.json" in ta and "violations_by_system_tier.svg" in ta
    assert str(tmp_path).encode() not in b"".join(ta.values())


def test_replay_reproduces_a_failing_case():
    record = next(r for r in map(sweep.case, range(100)) if r["cells"]["naive/t2"][2])
    refunded, _, reasons = record["cells"]["naive/t2"][:3]
    out = run_all("--replay", str(record["seed"]), "--system", "naive", "--tier", "t2")
    assert out.returncode == 1
    assert f"refunded ${refunded} of $20" in out.stdout
    assert "verdict FAIL (" + ", ".join(reasons) + ")" in out.stdout


def test_bad_arguments_give_one_line_errors():
    for args in (["--cases", "-1"], ["--replay", "3", "--system", "nope", "--tier", "t1"],
                 ["--fault", "no such fault", "--system", "kernel", "--tier", "t1"],
                 ["--plan", "{bad", "--system", "kernel", "--tier", "t1"],
                 ["--plan", '{"colour": 1}', "--system", "kernel", "--tier", "t1"]):
        out = run_all(*args)
        assert out.returncode == 2, args
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr


def test_help_explains():
    out = run_all("--help")
    assert out.returncode == 0 and "--replay" in out.stdout and "t1d" in out.stdout
