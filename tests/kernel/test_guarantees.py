"""The guarantee judges (kernel.guarantees) accept what the kernel writes and catch a
driver or a journal that breaks G1, G2, G5, G6 (limited), G7 or G8."""

from __future__ import annotations

import kernel as k
from kernel.guarantees import judge
from tests.kernel.test_coordination import PLAN, Bus, admitted, unit


class StaleBus(Bus):
    """A driver that decides on an empty view (no conditional append, no fold)."""

    def authorize(self, eid, now, facts=None, plan=PLAN):
        return self.run(k.Authorize(now, k.Lease("L1", 10**9), facts or {"a.py": "d0"},
                                    k.View(), plan, self.chain.seq), eid)

    def dispatch(self, eid, now, facts=None, plan=PLAN):
        return self.run(k.Dispatch(now, k.Lease("L1", 10**9), facts or {"a.py": "d0"},
                                   k.View(), plan), eid)


def breaches(bus: Bus) -> list[str]:
    return [b.guarantee for b in judge(bus.entries)]


def test_the_kernel_driven_on_the_folded_view_breaks_nothing() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=10, cap=20, verify=True))
    b = bus.propose(unit("b", writes=("x",), cost=10, cap=20))
    bus.authorize(b, 2)  # blocked
    r = admitted(bus, unit("r", writes=("y",), reads=("x",), cost=10, cap=20), now=3)
    bus.dispatch(a, 4)
    bus.dispatch(r, 5)  # refused: the writer it overlapped was sent
    bus.run(k.Ack(6, 1), a)
    bus.run(k.Verification(7, "passed"), a)
    bus.authorize(b, 8)
    assert breaches(bus) == []


def test_a_stale_view_is_caught_as_g2_g6_g7() -> None:
    bus = StaleBus()
    a = admitted(bus, unit("a", writes=("x",), cost=10, cap=10))
    b = admitted(bus, unit("b", writes=("x",), reads=("y",), cost=10, cap=10))
    r = admitted(bus, unit("r", writes=("z",), reads=("x",)))
    bus.dispatch(a, 2)
    bus.dispatch(r, 3)
    assert {"G2", "G6", "G7"} <= set(breaches(bus)), breaches(bus)
    assert b


def test_a_superseded_plan_is_caught_as_g8() -> None:
    bus = StaleBus()
    old = admitted(bus, unit("old", writes=("x",), version=1))
    bus.propose(unit("new", writes=("y",), version=2))  # the plan moved on
    bus.dispatch(old, 3)  # the driver still reports version 1
    assert breaches(bus) == ["G8"]


def test_an_edited_token_or_an_unverified_commit_is_caught() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", verify=True))
    bus.dispatch(a, 2)
    bus.run(k.Ack(3, 1), a)
    entries = [dict(e) for e in bus.entries]
    entries[1]["admission"] = {**entries[1]["admission"], "token": 0}
    entries.append({"kind": "COMMITTED", "effect_id": a, "seq": len(entries), "ts": 4,
                    "via": "ack"})
    assert [b.guarantee for b in judge(entries)] == ["G1", "G5"]
