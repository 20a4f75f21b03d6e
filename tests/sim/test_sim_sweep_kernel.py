"""Over a few hundred seeded cases, the kernel has zero violations at every tier."""

from __future__ import annotations

from sim import sweep

CASES = 200


def test_kernel_has_no_violation_in_the_sweep():
    summary = sweep.Summary()
    bad = []
    for rec in sweep.chunk((0, CASES, None, sweep.SYSTEM_NAMES)):
        bad += [sweep.replay_command(rec["seed"], s, t)
                for s, t, _ in summary.add(rec, sweep.line(rec)) if s == "kernel"]
    result = summary.result()
    assert bad == [], f"kernel fails: {bad[:3]}"
    for tier in ("t1", "t2"):
        assert result["table"][f"kernel/{tier}"]["ambiguous"] == 0, \
            "AMBIGUOUS where the target can be looked up"
    for system in ("naive", "idempotency", "durable"):
        assert result["table"][f"{system}/t3"]["failures"] > 0


def test_a_case_is_a_function_of_its_seed():
    assert sweep.case(7) == sweep.case(7)
