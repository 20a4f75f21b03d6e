"""The fixed fault table reproduces DESIGN.md section 6, and the kernel is ok in every cell."""

from __future__ import annotations

import pytest

from faults.plans import CATALOGUE, REFERENCE, REFERENCE_FAILS
from faults.systems import SYSTEM_NAMES
from sim import fixed
from sim.tiers import TIER_NAMES

REPLAY = "python run_all.py --fault '{}' --system {} --tier {}"


@pytest.mark.parametrize("cell", sorted(REFERENCE), ids=lambda c: "/".join(c))
def test_reference_cell(cell):
    fault, system, tier = cell
    doc = fixed.run_cell(cell)
    dollars, word = REFERENCE[cell]
    how = REPLAY.format(fault, system, tier)
    assert doc["refunded"] == dollars, f"${doc['refunded']} != ${dollars}; replay: {how}"
    assert word in doc["outcome"], f"{doc['outcome']!r} lacks {word!r}; replay: {how}"
    fails = REFERENCE_FAILS.get((fault, system))
    if system == "kernel":
        assert doc["verdict"] == "ok", f"{doc['reasons']}; replay: {how}"
    elif fails is not None and tier == "t1":
        assert (doc["verdict"] == "FAIL") == fails, f"{doc['reasons']}; replay: {how}"
    assert doc["matches_reference"] is True


@pytest.mark.parametrize("fault", list(CATALOGUE))
def test_kernel_is_ok_at_every_tier(fault):
    for tier in TIER_NAMES:
        doc = fixed.run_cell((fault, "kernel", tier))
        how = REPLAY.format(fault, "kernel", tier)
        assert doc["verdict"] == "ok", f"{doc['reasons']}; replay: {how}"
        assert doc["oracle"] is None or doc["oracle"]["valid"] is True, how
        spec = doc["spec_check"]
        assert spec is None or spec["valid"] is True, f"not a Kernel.tla trace: {spec}; {how}"
        if doc["metrics"]["ambiguous"]:
            assert tier in ("t1d", "t3"), f"AMBIGUOUS at a tier with a lookup; replay: {how}"


def test_dedupe_only_never_resends_when_the_world_moved():
    for fault in ("manual refund during outage", "lease revoked during outage"):
        doc = fixed.run_cell((fault, "kernel", "t1d"))
        assert "AMBIGUOUS" in doc["outcome"]
        assert doc["metrics"]["applications"] == 0


def test_every_baseline_fails_somewhere_and_every_cell_has_a_trace():
    cells = fixed.cells()
    assert len(cells) == len(CATALOGUE) * len(SYSTEM_NAMES) * len(TIER_NAMES)
    for system in ("naive", "idempotency", "durable"):
        doc = fixed.run_cell(("manual refund during outage", system, "t1"))
        assert doc["verdict"] == "FAIL" and doc["refunded"] == 40
        assert doc["events"] and doc["intervals"]
