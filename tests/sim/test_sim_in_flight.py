"""The in-flight bound: the world knob for every system, and the kernel's answer to a
target that states no bound (DESIGN.md section 4, "The in-flight bound")."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Unbounded(Capabilities):
    bounds_in_flight: bool = False


def dispatched(caps: Capabilities) -> Effect:
    p = Proposal(payload={"amount": 20}, premises={}, lease="l", capabilities=caps,
                 timing=Timing())
    return Effect(p, State.DISPATCHED, attempts=1, first_sent_at=0, claim_until=3_000)


def test_without_a_bound_absent_is_not_evidence_and_nothing_is_resent():
    bounded = dispatched(Capabilities(dedupes=True, queryable=True, dedup_window=60_000))
    unbounded = dispatched(Unbounded(dedupes=True, queryable=True, dedup_window=60_000))
    absent, found = Lookup(False, 3_000), Lookup(True, 3_000)
    assert decide(bounded, 4_000, True, True, absent).action == "resend"
    assert decide(bounded, 4_000, False, True, absent).action == "refuse"
    assert decide(unbounded, 4_000, True, True, absent).reason == "no_in_flight_bound"
    assert decide(unbounded, 4_000, False, True, absent).action == "ambiguous"
    assert decide(unbounded, 4_000, True, True, found).action == "commit"
