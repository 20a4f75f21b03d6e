"""The shared-cap scenario in the main world: the kernel holds the $30 cap in every fixed row
and every sweep case, the baselines do not, and a kernel whose reservation is not part of
the admission append (the planted bug) lets the cap break, which kernel.invariants flags as
G7."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sim import sharedcap

ROOT = Path(__file__).resolve().parents[2]
SEED, CASES = 1, 200
REPRO = f"python -m sim.sharedcap --seed {SEED} --cases {CASES} --out /tmp/sharedcap"


@pytest.fixture(scope="module")
def doc() -> dict:
    return sharedcap.sweep(SEED, CASES)


@pytest.fixture(scope="module")
def planted() -> dict:
    return sharedcap.sweep(SEED, CASES, planted=True)


def test_every_system_runs_every_row(doc: dict) -> None:
    assert {(r["row"], r["system"]) for r in doc["fixed"]} == {
        (row, s) for row in sharedcap.FIXED for s in ("naive", "idempotency", "durable",
                                                      "kernel")}


def test_the_kernel_holds_the_cap_in_every_run(doc: dict) -> None:
    broken = [r["row"] for r in doc["fixed"] if r["system"] == "kernel" and not r["held"]]
    assert broken == [], f"kernel broke the cap in {broken}; reproduce: {REPRO}"
    assert doc["sweep_held"]["kernel"] == CASES, f"reproduce: {REPRO}"
    assert doc["kernel_runs_flagged"] == 0, f"reproduce: {REPRO}"
    judged = [r for r in doc["fixed"] if r["system"] == "kernel" and r["judged"]]
    assert judged == []


def test_the_baselines_break_the_cap(doc: dict) -> None:
    for name in ("naive", "idempotency", "durable"):
        assert doc["sweep_held"][name] < CASES, name
        assert any(not r["held"] for r in doc["fixed"] if r["system"] == name), name


def test_a_reservation_outside_the_admission_breaks_the_cap(planted: dict) -> None:
    fixed = {r["row"]: r for r in planted["fixed"] if r["system"] == "kernel"}
    assert not fixed["together, no crash"]["held"]
    assert "G7" in fixed["together, no crash"]["judged"]
    assert planted["sweep_held"]["kernel"] < CASES
    assert planted["kernel_runs_flagged"] >= CASES - planted["sweep_held"]["kernel"]


def test_cli_writes_the_same_bytes_for_the_same_seed(tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        run = subprocess.run([sys.executable, "-m", "sim.sharedcap", "--cases", "20", "--out",
                              str(tmp_path / name)], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("seed 1\n")
        outs.append([(tmp_path / name / f).read_bytes() for f in ("sharedcap.md",
                                                                  "sharedcap.json")])
    assert outs[0] == outs[1]
    help_run = subprocess.run([sys.executable, "-m", "sim.sharedcap", "--help"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    assert help_run.returncode == 0 and "--cases" in help_run.stdout
    bad = subprocess.run([sys.executable, "-m", "sim.sharedcap", "--cases", "x"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 254 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
