"""Every model config gives the result recorded in spec/manifest.json.

How it works. Each manifest entry (spec, cfg) is checked with the project's checker
(``spec.checker.check``): ok entries must match result, distinct states and depth exactly;
violations must name the same invariant or property with the same trace length. The
nightly entry runs only with NIGHTLY=1. Broken variants must be what spec/broken/make.py
generates from Kernel.tla and Coord.tla, and each one must yield a counterexample.
"""
from __future__ import annotations

import os

import pytest

from spec.broken import make
from spec.conformance import manifest

ENTRIES = manifest.load()
NIGHTLY = os.environ.get("NIGHTLY") == "1"


def entry_id(e: dict) -> str:
    return e["cfg"]


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_config_gives_its_manifest_result(entry: dict) -> None:
    if "nightly" in entry["cfg"] and not NIGHTLY:
        pytest.skip("nightly config: set NIGHTLY=1")
    got = manifest.run(entry["spec"], entry["cfg"])
    assert manifest.differences(got, entry) == []


def test_manifest_lists_every_config() -> None:
    listed = {(e["spec"], e["cfg"]) for e in ENTRIES}
    assert set(manifest.pairs(nightly=True)) == listed


def test_broken_variants_are_generated_from_kernel() -> None:
    for name, text in make.variants().items():
        assert (manifest.SPEC_DIR / "broken" / name).read_text() == text, \
            f"spec/broken/{name} is stale: run python spec/broken/make.py"


def test_every_removed_decision_has_a_counterexample() -> None:
    for name in make.EDITS:
        results = [e for e in ENTRIES if e["spec"] == f"broken/{name}.tla"]
        assert results, f"no config for broken/{name}.tla"
        assert all(e["result"] == "invariant" for e in results), name


def test_witnesses_are_reached() -> None:
    """Reachability witnesses must be violated: COMMITTED, REFUSED, AMBIGUOUS are reachable."""
    reach = [e for e in ENTRIES if "_reach_" in e["cfg"]]
    assert len(reach) >= 10
    for e in reach:
        assert e["result"] == "invariant" and e["violated"].startswith("Never"), e["cfg"]


def test_liveness_is_checked_and_can_fail() -> None:
    unfair = next(e for e in ENTRIES if e["cfg"] == "MC_t2_unfair.cfg")
    assert (unfair["result"], unfair["violated"]) == ("property", "K9_Resolution")
    moved = next(e for e in ENTRIES if e["cfg"] == "MC_t2_progress_world.cfg")
    assert (moved["result"], moved["violated"]) == ("property", "K10_Progress")
    for tier in ("t1", "t2", "t3"):
        assert next(e for e in ENTRIES if e["cfg"] == f"MC_{tier}_progress.cfg")["result"] == "ok"
    coord = next(e for e in ENTRIES if e["cfg"] == "MC_coord_unfair.cfg")
    assert (coord["spec"], coord["result"], coord["violated"]) == \
        ("Coord.tla", "property", "K9_Resolution")


def test_every_guarantee_is_checked_and_each_removed_decision_breaks_its_own() -> None:
    """Coord.tla: the G invariants hold in the MC_coord models and each broken variant
    violates the guarantee its decision is for."""
    ok = [e for e in ENTRIES if e["spec"] == "Coord.tla" and e["result"] == "ok"]
    assert len(ok) >= 5
    for cfg in ("claims", "budget", "reads", "plan", "verify"):
        assert any(e["cfg"] == f"MC_coord_{cfg}.cfg" for e in ok), cfg
    broken = {e["cfg"]: e["violated"] for e in ENTRIES if e["spec"].startswith("broken/Coord")}
    assert broken == {"broken/CoordNoFencing.cfg": "G2_ExclusiveClaims",
                      "broken/CoordReserveApart.cfg": "G7_Budget",
                      "broken/CoordReserveApart_harm.cfg": "G7_SpentWithinCap",
                      "broken/CoordNoPlanCheck.cfg": "G8_PlanAtSend",
                      "broken/CoordAgentsWord.cfg": "G5_VerifiedCompletion"}
