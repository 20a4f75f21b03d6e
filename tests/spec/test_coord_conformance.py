"""The kernel's coordinated units implement exactly Coord.tla (bisimulation at small bounds).

How it works. ``spec.conformance.coord.check`` drives kernel.step for two units in
Coord.tla's world and checks that the abstraction is a bisimulation from every initial
state. Each mechanism gets a small model (storm of 2 ticks, one fault) so the suite stays
fast; the full MC_coord configs are run by hand (spec/README.md). The check has teeth:
against a variant with a decision removed, or with a kernel bug planted, it diverges.
"""
from __future__ import annotations

import pytest

import kernel.view
from spec.conformance import coord, manifest, specgraph

SMALL = {"MaxTime": 2, "MaxCrashes": 1, "MaxLoss": 1}


def constants(cfg: str, **over: object) -> dict:
    c = specgraph.read_constants(manifest.SPEC_DIR / cfg)
    c.update(SMALL, **over)
    return c


# (crashes, losses) per model, so that each check takes seconds
FAULTS = {"MC_coord_claims.cfg": (1, 1), "MC_coord_budget.cfg": (1, 1),
          "MC_coord_reads.cfg": (1, 0), "MC_coord_plan.cfg": (0, 1),
          "MC_coord_verify.cfg": (0, 0)}


@pytest.mark.parametrize("cfg", sorted(FAULTS))
def test_units_are_bisimilar_to_coord(cfg: str) -> None:
    crashes, losses = FAULTS[cfg]
    res = coord.check(constants(cfg, MaxCrashes=crashes, MaxLoss=losses))
    assert res.ok, res.summary()
    assert res.kernel_states >= res.spec_states > 100


@pytest.mark.parametrize("variant, cfg", [("CoordNoPlanCheck", "MC_coord_plan.cfg"),
                                          ("CoordAgentsWord", "MC_coord_verify.cfg"),
                                          ("CoordReserveApart", "MC_coord_budget.cfg")])
def test_a_variant_without_a_decision_diverges(variant: str, cfg: str) -> None:
    spec = manifest.SPEC_DIR / "broken" / f"{variant}.tla"
    res = coord.check(constants(cfg, MaxCrashes=0, MaxLoss=0), spec=spec)
    assert not res.ok and "first divergence" in res.summary()


def test_a_planted_kernel_bug_diverges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view that never releases a refused unit's reservation is caught (with a ttl of 1
    a claim expires before its dispatch, so the first unit is refused and releases)."""
    monkeypatch.setattr(kernel.view.Folder, "_release", lambda self, eid, effect: None)
    res = coord.check(constants("MC_coord_budget.cfg", MaxCrashes=0, MaxLoss=0, TTL=1))
    assert not res.ok, res.summary()
