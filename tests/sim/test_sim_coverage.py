"""Coverage floors: every fault took effect in at least 5% of the kernel runs of every tier
where it applies, in the committed default sweep (results/sweep_summary.json)."""

from __future__ import annotations

import json
from pathlib import Path

from sim import coverage, sweep

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_sweep_meets_every_floor():
    summary = json.loads((ROOT / "results" / "sweep_summary.json").read_text())
    missed = coverage.misses(summary["coverage"])
    assert not missed, "coverage floors missed (python3 run_all.py, results/coverage.md): " + \
        "; ".join(missed)


def test_a_missed_floor_is_reported():
    cov = coverage.Coverage()
    for _ in range(100):
        cov.add("t2", ["slow send"])
    cov.add("t2", ["torn write"])
    missed = coverage.misses(cov.result())
    assert any(m.startswith("torn write at t2: took effect in 1 of 101") for m in missed)
    assert not any(m.startswith("slow send at t2") for m in missed)


def test_took_effect_is_what_happened_not_what_was_planned():
    def took(seed: int, tier: str) -> list[str]:
        cell = sweep.case(seed, None, ("kernel",))["cells"][f"kernel/{tier}"]
        return cell[4].get("took", []) if len(cell) > 4 else []

    lagged = [s for s in range(60) if "lookup lag" in took(s, "t2")]
    assert lagged, "no lookup lag took effect at t2 in 60 cases"
    assert not any("lookup lag" in took(s, "t3") for s in lagged), \
        "a lookup lag cannot take effect where nothing is looked up"
