"""The in-flight bound: the world knob for every system, and the kernel's answer to a
target that states no bound (DESIGN.md section 4, "The in-flight bound")."""

from __future__ import annotations

from faults.plans import FaultPlan
from faults.systems import SYSTEMS
from kernel import Capabilities, Effect, Proposal, State, Timing
from kernel.recovery import Lookup, decide
from sim.measure import measure
from sim.world import simulate

SLOW = dict(crash="sent", crash_delay=100, outage=500, slow_send=6_000, premises="untouched")


def first_request(plan: FaultPlan, system: str = "naive") -> tuple[bool, int | None]:
    run = simulate(plan, SYSTEMS[system], "t2", 1)
    req = run.sent[0]
    return req.accepted, req.arrived_at


def test_the_knob_decides_whether_a_late_request_lands():
    assert first_request(FaultPlan(**SLOW, in_flight="neither"))[0]  # lands 6 s late
    assert first_request(FaultPlan(**SLOW, in_flight="bounded"))[1] is None  # lost
    kernel_run = simulate(FaultPlan(**SLOW, in_flight="deadline"), SYSTEMS["kernel"], "t2", 1)
    assert kernel_run.sent[0].arrived_at is not None and not kernel_run.sent[0].accepted


def test_the_kernel_is_safe_with_either_bound_and_not_without():
    for bound in ("deadline", "bounded"):
        run = simulate(FaultPlan(**SLOW, in_flight=bound), SYSTEMS["kernel"], "t2", 1)
        assert measure(run)["ok"], bound
    run = simulate(FaultPlan(**SLOW, in_flight="neither"), SYSTEMS["kernel"], "t2", 1)
    assert "duplicate" in measure(run)["violations"]  # the assumption is what it buys


def dispatched(caps: Capabilities) -> Effect:
    p = Proposal(payload={"amount": 20}, premises={}, lease="l", capabilities=caps,
                 timing=Timing())
    return Effect(p, State.DISPATCHED, attempts=1, first_sent_at=0, claim_until=3_000)


def test_without_a_bound_absent_is_not_evidence_and_nothing_is_resent():
    bounded = dispatched(Capabilities(dedupes=True, queryable=True, dedup_window=60_000))
    unbounded = dispatched(Capabilities(dedupes=True, queryable=True, dedup_window=60_000,
                                        bounds_in_flight=False))
    absent, found = Lookup(False, 3_000), Lookup(True, 3_000)
    assert decide(bounded, 4_000, True, True, absent).action == "resend"
    assert decide(bounded, 4_000, False, True, absent).action == "refuse"
    assert decide(unbounded, 4_000, True, True, absent).reason == "no_in_flight_bound"
    assert decide(unbounded, 4_000, False, True, absent).action == "ambiguous"
    assert decide(unbounded, 4_000, True, True, found).action == "commit"


def test_a_target_that_declares_no_bound_journals_it_and_reads_back():
    caps = Capabilities(dedupes=False, queryable=True, bounds_in_flight=False)
    assert caps.as_json()["bounds_in_flight"] is False
    assert "bounds_in_flight" not in Capabilities(dedupes=False, queryable=True).as_json()


def kernel_failures(world: str, cases: int) -> int:
    from sim import sweep
    return sum(1 for seed in range(cases)
               for cell in sweep.case(seed, world, ("kernel",))["cells"].values() if cell[2])


def test_the_declared_unbounded_world_is_safe_and_the_judges_see_a_kernel_that_ignores_it(
        monkeypatch):
    assert kernel_failures("in_flight_declared", 40) == 0
    import kernel.recovery
    monkeypatch.setattr(kernel.recovery, "in_flight_bounded", lambda effect: True)  # planted
    assert kernel_failures("in_flight_declared", 40) > 0
