"""Cases the sweep once found, kept as plans so they stay fixed."""

from __future__ import annotations

from faults.plans import FaultPlan
from faults.systems import SYSTEMS
from sim.measure import measure
from sim.world import simulate

# Two recovering workers: B's lookup is asked before A's resend and answered after A's resend
# was acked. A stale "absent" must not read as contradicting COMMITTED (a false K7).
STALE_LOOKUP = FaultPlan(name="stale late lookup", crash="sent", duplicate_at=2_550,
                         late_ack=3_699, lookup_lag=762, net_jitter=136, net_latency=60,
                         outage=2_060, recoverers=2, redecide_amount=30, slow_send=3_740)


def test_a_stale_late_lookup_is_not_a_contradiction():
    run = simulate(STALE_LOOKUP, SYSTEMS["kernel"], "t2", 290)
    m = measure(run)
    late = [e for e in run.disk.entries if e["kind"] == "LATE"]
    assert late and late[0]["found"] is False and late[0]["asked_at"] < late[0]["ts"]
    assert m["ok"], m["violations"]
    assert m["kernel"]["judge"]["caught_by"] == []
    assert not run.alerts
