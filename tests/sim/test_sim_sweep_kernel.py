"""Over a few hundred seeded cases, the kernel has zero violations at every tier."""

from __future__ import annotations

from sim import sweep

CASES = 300


def test_kernel_has_no_violation_in_the_sweep():
    records = [sweep.case(seed) for seed in range(CASES)]
    summary = sweep.summarize(records)
    for tier in ("t1", "t1d", "t2", "t3"):
        row = summary["table"][f"kernel/{tier}"]
        bad = [f["command"] for f in summary["failures"] if f["system"] == "kernel"]
        assert row["failures"] == 0, f"kernel fails at {tier}: {bad[:3]}"
        assert row["oracle_invalid"] == 0
    for tier in ("t1", "t2"):
        assert summary["table"][f"kernel/{tier}"]["ambiguous"] == 0, \
            "AMBIGUOUS where the target can be looked up"
    for system in ("naive", "idempotency", "durable"):
        assert summary["table"][f"{system}/t3"]["failures"] > 0


def test_a_case_is_a_function_of_its_seed():
    assert sweep.case(7) == sweep.case(7)
