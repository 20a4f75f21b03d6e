"""The world's parts: Stripe-like dedupe, deadlines, lookup lag, the disk at a crash."""

from __future__ import annotations

import random

from faults.plans import FaultPlan
from kernel import Capabilities
from sim.disk import Disk
from sim.target import Request, Target
from sim.tiers import TIERS


def request(key, amount=20, deadline=None, effect_id=None, sent_at=0):
    payload = {"amount": amount}
    return Request(system="t", generation=0, key=key, payload=payload, digest=str(amount),
                   decision="d", sent_at=sent_at, lease_live=True, premises_hold=True,
                   deadline=deadline, effect_id=effect_id)


def test_stripe_like_keys():
    target = Target(Capabilities(dedupes=True, queryable=False, dedup_window=1_000))
    assert target.receive(request("k"), 0).kind == "applied"
    assert target.receive(request("k"), 10).kind == "deduplicated"
    assert target.receive(request("k", amount=30), 20).kind == "conflict"
    assert target.receive(request("k"), 1_000).kind == "applied"  # pruned after the window
    assert len(target.applications) == 2


def test_deadline_and_lookup_lag():
    target = Target(Capabilities(dedupes=False, queryable=True, lookup_lag=500))
    assert target.receive(request(None, deadline=100, effect_id="e"), 101) is None
    assert target.receive(request(None, deadline=100, effect_id="e"), 100).kind == "applied"
    assert not target.lookup("e", 599) and target.lookup("e", 600)


def test_tiers():
    assert [TIERS[t].tier for t in ("t1", "t1d", "t2", "t3")] == [1, 1, 2, 3]
    assert TIERS["t1"].queryable and not TIERS["t1d"].queryable


def test_crash_loses_unflushed_lines_and_may_tear():
    disk = Disk()
    disk.append("a\n", True)
    disk.append("b\n", False)
    disk.crash(lambda: random.Random(1), torn=False, writing=None)
    assert disk.text() == "a\n"
    disk.append("c-long-line\n", False)
    torn = disk.crash(lambda: random.Random(1), torn=True, writing=None)
    assert torn and "c-long-line".startswith(torn) and disk.text() == "a\n" + torn
    disk.truncate(1)
    assert disk.text() == "a\n"


def test_traces_name_the_worker_of_every_event_it_caused():
    """Two recoverers and a recrash: each event names its worker, each message is paired."""
    from faults.plans import CATALOGUE, FaultPlan
    from faults.systems import SYSTEMS
    from sim.world import simulate

    plans = [CATALOGUE["two workers recovering"],
             FaultPlan(name="recrash", crash="after_apply", recrash="recovering")]
    for plan in plans:
        for name, system in SYSTEMS.items():
            events = simulate(plan, system, "t1", 1, trace=True).events or []
            assert events == simulate(plan, system, "t1", 1, trace=True).events, "deterministic"
            started = {1}
            for e in events:
                d = e.get("details") or {}
                if e["actor"] == "world" and e["kind"] == "restart":
                    assert d["workers"] and min(d["workers"]) == max(started) + 1
                    started |= set(d["workers"])
                mine = e["actor"] in ("kernel", "journal") or \
                    (e["actor"] == "network" and e["kind"] != "lost")
                assert ("worker" in d) == (mine or e["kind"] in ("decide", "answer")), \
                    f"{plan.name} {name}: {e}"
                if "worker" in d:
                    assert d["worker"] in started, f"{plan.name} {name}: {e}"
            sends = {(e.get("details") or {}).get("msg"): e for e in events
                     if e["kind"] in ("send", "query")}
            for e in events:
                d = e.get("details") or {}
                if e["actor"] == "target":
                    assert sends[d["msg"]]["details"]["worker"] == d["sender"]
                elif e["kind"] in ("answer", "undelivered") and e["actor"] == "network":
                    assert sends[d["msg"]]["details"]["worker"] == d["worker"]
            if plan.recoverers == 2 and name != "durable":  # durable: the engine's lock
                workers = {(e.get("details") or {}).get("worker") for e in events}
                assert {2, 3} <= workers, f"{name}: both recoverers act"


def test_facts_hidden_or_retyped_no_longer_support_the_premises():
    from sim.refund import DECISION, RefundStory
    for event in ("hide_fact", "retype_fact"):
        story = RefundStory()
        story.decide(story.jobs(FaultPlan())[0], False, FaultPlan())
        assert story.premises_hold(DECISION)
        assert story.world_event(event) is not None
        assert not story.premises_hold(DECISION), event  # 0 is not false, absent is not false


def test_the_lease_expires_at_the_next_check_and_is_dead_at_that_instant():
    from faults.systems import SYSTEMS
    from sim.world import Run
    plan = FaultPlan(crash="before_send", outage=5_000, during_outage=("lease_expires",))
    run = Run(plan, SYSTEMS["kernel"], "t1d", 0).run()  # dedup open: only the lease stops it
    expiry = run.lease_expires_at
    assert expiry == run.outages[0][1]  # the restart instant
    assert run.lease().expires_at == expiry and not run.lease_live()
    assert run.receipts[0]["final"] == "AMBIGUOUS"
    assert [req.sent_at for req in run.sent if req.sent_at >= expiry] == []


def test_plans_draw_the_boundary_knobs_without_moving_older_fields():
    from faults.plans import FACT_FAULTS, LEASE_EXPIRY, plan_from_seed
    plans = [plan_from_seed(s) for s in range(400)]
    outage = [e for p in plans for e in p.during_outage]
    assert {*FACT_FAULTS, LEASE_EXPIRY} <= set(outage)
    assert any(p.eager_lookup for p in plans)
    assert any(p.outage == 55_000 - p.crash_delay for p in plans)
    # the boundary knobs touch only their own fields: the rest of each plan is what the
    # seed draws without them
    from dataclasses import fields
    from unittest import mock

    import faults.plans
    moved = {"before_dispatch", "during_outage", "eager_lookup", "outage", "recrash"}
    with mock.patch.object(faults.plans, "_boundary_knobs", lambda r, plan: plan):
        older = [plan_from_seed(s) for s in range(400)]
    for new, old in zip(plans, older, strict=True):
        assert all(getattr(new, f.name) == getattr(old, f.name)
                   for f in fields(new) if f.name not in moved), new.name
        assert new.before_dispatch[:len(old.before_dispatch)] == old.before_dispatch


def test_a_run_whose_time_stops_ends_with_a_livelock_not_a_hang():
    import pytest

    from sim.clock import SAME_INSTANT, Clock, Livelock

    env = Clock()

    def spinner():
        while True:  # a worker told to wait until a time that has already come
            yield env.timeout(0)

    env.process(spinner())
    with pytest.raises(Livelock, match="time stopped at 0 ms"):
        env.run(until=1_000)
    assert SAME_INSTANT >= 10_000  # far above any run's events at one instant (max seen: <1,000)
