"""Planted bugs: the sweep alone (sim.judge, not the unit tests) catches every one.

The quick version of ``python run_all.py --mutants``: each mutant of the catalogue is
patched into a copy of kernel/ and swept in a subprocess until its first failing case (at
most 500 cases). Also: every snippet still applies to kernel/ exactly once (a refreshed
kernel must refresh the catalogue), a stale snippet is a one-line error, and the unpatched
kernel run through the same worker fails nowhere.
"""

from __future__ import annotations

import pytest

from sim import mutants


def test_the_catalogue_has_at_least_twelve_stories():
    assert len(mutants.MUTANTS) >= 12
    assert all(m.story and m.old != m.new for m in mutants.MUTANTS)


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_snippet_applies_once(mutant, tmp_path):
    patched = mutants.apply(mutant, mutants.ROOT / "kernel", tmp_path)
    assert mutant.new in (patched / mutant.file).read_text(encoding="utf-8")


def test_a_stale_snippet_is_an_error(tmp_path):
    stale = mutants.Mutant("stale", "gone", "recovery.py", "no such line", "x")
    with pytest.raises(mutants.MutantError, match="stale: its snippet occurs 0 times"):
        mutants.apply(stale, mutants.ROOT / "kernel", tmp_path)


def test_the_unpatched_kernel_fails_nowhere():
    report = mutants.worker("control", 25, False, str(mutants.ROOT / "kernel"))
    assert report["failing_runs"] == 0 and report["runs"] == 100
    coding = mutants.coding_worker("control", 25, False)
    assert coding["failing_runs"] == 0 and coding["runs"] == 25


def test_the_sweep_alone_catches_every_planted_bug():
    reports = mutants.run_all(500, stop_first=True, jobs=2)
    missed = [r["mutant"] for r in reports if r["first_failing_seed"] is None]
    assert not missed, f"not caught within 500 cases: {missed} (python run_all.py --mutants)"
