"""The sweep is not blind: break one guarantee the kernel relies on and it finds failures.

Each test weakens the world or the recovery (never kernel/ itself, only through monkeypatch
in this process) and checks that seeded cases now produce kernel violations, with the
command that would replay one.
"""

from __future__ import annotations

import kernel.machine
from faults.plans import plan_from_seed
from faults.systems import SYSTEMS
from sim import target
from sim.measure import measure
from sim.world import simulate

SEEDS = range(300)


def kernel_failures(tier: str) -> list[int]:
    return [s for s in SEEDS
            if not measure(simulate(plan_from_seed(s), SYSTEMS["kernel"], tier, s))["ok"]]


def test_without_send_deadlines_recovery_races_a_slow_send(monkeypatch):
    receive = target.Target.receive

    def ignore_deadline(self, req, now):
        req.deadline = None
        return receive(self, req, now)

    monkeypatch.setattr(target.Target, "receive", ignore_deadline)
    assert kernel_failures("t2"), "no case lets a slow first send land after a resend"


def test_without_the_claim_wait_the_sweep_fails(monkeypatch):
    decide = kernel.machine.decide
    monkeypatch.setattr(kernel.machine, "decide",
                        lambda effect, now, *rest: decide(effect._replace(claim_until=0), now,
                                                          *rest))
    assert kernel_failures("t2")


def test_the_unbroken_kernel_passes_the_same_cases():
    assert kernel_failures("t2") == []
