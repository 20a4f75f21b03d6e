"""The world's parts: Stripe-like dedupe, deadlines, lookup lag, the disk at a crash."""

from __future__ import annotations

import random

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
    disk.crash(random.Random(1), torn=False, writing=None)
    assert disk.text() == "a\n"
    disk.append("c-long-line\n", False)
    torn = disk.crash(random.Random(1), torn=True, writing=None)
    assert torn and "c-long-line".startswith(torn) and disk.text() == "a\n" + torn
    disk.truncate(1)
    assert disk.text() == "a\n"
