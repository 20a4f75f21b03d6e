"""The shared-cap scenario (sim/shared_cap.py): the kernel holds the $30 cap in every run and
still refunds one bot; the per-effect check of the original does not always hold it."""

from __future__ import annotations

import pytest

from sim import shared_cap


def test_the_kernel_holds_the_shared_cap_and_refunds_once() -> None:
    amounts = [shared_cap.one_run("kernel", seed) for seed in range(1, 41)]
    assert amounts == [shared_cap.AMOUNT] * 40, "reproduce: python -m sim.shared_cap --seed 1"


def test_the_per_effect_check_breaks_the_cap_in_some_runs() -> None:
    held = shared_cap.table(seed=1, runs=40)
    assert 0 < held["per_effect"] < 40 and held["kernel"] == 40, held


def test_without_the_reservation_the_kernel_breaks_the_cap_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted bug: a unit without a budget (no reservation at admission)."""
    original = shared_cap.kernel.Coordination

    def no_budget(**kw):
        return original(**{**kw, "budget": None, "cost": 0, "cap": 0})

    monkeypatch.setattr(shared_cap.kernel, "Coordination", no_budget)
    assert shared_cap.table(seed=1, runs=40)["kernel"] < 40
