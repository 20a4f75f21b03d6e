"""Coordinated units: one test per new transition (admission, claims and fencing tokens,
shared budgets, plan versions, verified completion), the journal-wide view and status."""

from __future__ import annotations

from typing import Any

import pytest

import kernel as k
from kernel import State

REPO = k.Capabilities(dedupes=True, queryable=True, dedup_window=600_000, lookup_lag=10)
TIMING = k.Timing(send_timeout=2_000, settle_margin=1_000, dedup_margin=5_000)
LIVE = k.Lease("L1", expires_at=10**9)
FACTS = {"a.py": "d0"}
PLAN = k.Plan("p", 1)


def unit(name: str, writes=("a.py",), reads=(), cost=0, cap=0, verify=False, ttl=60_000,
         version=1) -> k.Proposal:
    c = k.Coordination(writes=writes, reads=reads, ttl=ttl, budget="b" if cost or cap else None,
                       cost=cost, cap=cap, plan="p", plan_version=version, verify=verify)
    return k.Proposal(payload={"unit": name}, premises=FACTS, lease="L1", capabilities=REPO,
                      timing=TIMING, key={"unit": name}, coordination=c)


class Bus:
    """A control plane in miniature: one journal, the view folded from it, one worker."""

    def __init__(self) -> None:
        self.chain, self.entries = k.Chain(), []
        self.folder, self.effects = k.Folder(), k.Effects()
        self.sends: list[k.Send] = []

    def run(self, event: Any, eid: str | None = None) -> tuple[k.Command, ...]:
        commands = self.effects.apply(event, eid)
        for c in commands:
            if isinstance(c, k.Append):
                entry = self.chain.seal(c.entry)[0]
                self.entries.append(entry)
                self.folder.add(entry)
            elif isinstance(c, k.Send):
                self.sends.append(c)
        return commands

    def propose(self, p: k.Proposal, now: int = 0) -> str:
        self.run(k.Propose(now, p))
        return p.effect_id

    def authorize(self, eid: str, now: int, facts=FACTS, plan=PLAN) -> tuple[k.Command, ...]:
        return self.run(k.Authorize(now, LIVE, facts, self.folder.view(), plan,
                                    self.chain.seq), eid)

    def dispatch(self, eid: str, now: int, facts=FACTS, plan=PLAN) -> tuple[k.Command, ...]:
        return self.run(k.Dispatch(now, LIVE, facts, self.folder.view(), plan), eid)

    def recover(self, eid: str, now: int, lookup=None, plan=PLAN) -> tuple[k.Command, ...]:
        return self.run(k.Recover(now, LIVE, FACTS, lookup, self.folder.view(), plan), eid)

    def state(self, eid: str) -> k.Effect:
        return self.effects.by_id[eid]


def admitted(bus: Bus, p: k.Proposal, now: int = 1) -> str:
    eid = bus.propose(p, now)
    bus.authorize(eid, now)
    assert bus.state(eid).state is State.AUTHORIZED, bus.state(eid)
    return eid


def test_admission_claims_the_write_set_with_the_entry_seq_as_token() -> None:
    bus = Bus()
    eid = bus.propose(unit("u1"))
    commands = bus.authorize(eid, 5)
    entry = bus.entries[-1]
    assert entry["kind"] == "AUTHORIZED" and commands[0].fsync is True
    assert entry["admission"] == {"token": entry["seq"], "until": 60_005, "overlaps": {}}
    assert bus.folder.view().claims["a.py"] == k.Claim("a.py", eid, entry["seq"], 60_005)
    bus.dispatch(eid, 6)
    assert bus.sends[-1].token == entry["seq"]


def test_a_claimed_item_blocks_admission_until_release_or_expiry() -> None:
    bus = Bus()
    first = admitted(bus, unit("u1", ttl=1_000))
    second = bus.propose(unit("u2"))
    commands = bus.authorize(second, 2)
    assert commands == (k.Blocked(second, ("a.py",), 1_001),)
    assert bus.state(second).state is State.PROPOSED and len(bus.entries) == 3
    bus.authorize(second, 1_001)  # the first claim expired by journal time
    assert bus.state(second).token > bus.state(first).token
    bus.dispatch(first, 1_002)  # the stale owner may no longer send
    assert bus.state(first).reason == "claim_expired"


def test_a_final_entry_releases_the_claim() -> None:
    bus = Bus()
    first = admitted(bus, unit("u1"))
    bus.dispatch(first, 2)
    bus.run(k.Ack(3, 1), first)
    second = bus.propose(unit("u2"))
    bus.authorize(second, 4)
    assert bus.state(second).state is State.AUTHORIZED


def test_a_read_overlap_is_recorded_and_refuses_once_the_writer_was_sent() -> None:
    bus = Bus()
    writer = admitted(bus, unit("w"))
    reader = admitted(bus, unit("r", writes=("b.py",), reads=("a.py",)))
    assert bus.state(reader).admission["overlaps"] == {"a.py": writer}
    bus.dispatch(writer, 3)
    bus.dispatch(reader, 4)
    assert bus.state(reader).reason == "read_overlap_moved"
    assert bus.sends[-1].effect_id == writer


def test_shared_budget_reserves_at_admission_and_refuses_over_the_cap() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=20, cap=30))
    b = bus.propose(unit("b", writes=("y",), cost=20, cap=30))
    bus.authorize(b, 2)
    assert (bus.state(b).state, bus.state(b).reason) == (State.REFUSED, "over_budget")
    assert bus.folder.view().reserved == {"b": 20}
    bus.dispatch(a, 3, facts={"a.py": "moved"})  # refused as never sent: released
    assert bus.folder.view().reserved == {"b": 0}


def test_an_ambiguous_unit_keeps_its_reservation_and_a_commit_spends_it() -> None:
    bus = Bus()
    caps = k.Capabilities(dedupes=False, queryable=False)
    p = unit("a", writes=("x",), cost=20, cap=50)
    p = k.Proposal(p.payload, p.premises, p.lease, caps, TIMING, p.key,
                   coordination=p.coordination)
    a = admitted(bus, p)
    bus.dispatch(a, 2)
    bus.recover(a, 10_000)
    assert bus.state(a).state is State.AMBIGUOUS
    assert bus.folder.view().reserved == {"b": 20} and not bus.folder.view().claims
    c = admitted(bus, unit("c", writes=("y",), cost=20, cap=50), now=10_001)
    bus.dispatch(c, 10_002)
    bus.run(k.Ack(10_003, 1), c)
    view = bus.folder.view()
    assert view.reserved == {"b": 40} and view.spent == {"b": 20}


def test_a_superseded_plan_refuses_at_admission_dispatch_and_recovery() -> None:
    bus = Bus()
    eid = bus.propose(unit("u1"))
    bus.authorize(eid, 1, plan=k.Plan("p", 2))
    assert bus.state(eid).reason == "plan_superseded"
    other = admitted(bus, unit("u2", writes=("b.py",), version=2))
    bus.dispatch(other, 2, plan=k.Plan("p", 3))
    assert bus.state(other).reason == "plan_superseded"
    # the journal remembers version 3: a stale observation cannot un-supersede it
    late = admitted(bus, unit("u3", writes=("c.py",), version=3))
    assert bus.folder.view().plans == {"p": 3}
    bus.dispatch(late, 3, plan=k.Plan("p", 3))
    bus.recover(late, 20_000)  # the send was lost: look it up
    bus.recover(late, 20_000, k.Lookup(False, 20_000), plan=k.Plan("p", 4))
    assert bus.state(late).reason == "plan_superseded_at_recovery"


def test_an_ack_does_not_commit_a_unit_that_requires_verification() -> None:
    bus = Bus()
    eid = admitted(bus, unit("u1", verify=True))
    bus.dispatch(eid, 2)
    commands = bus.run(k.Ack(3, 1), eid)
    assert bus.state(eid).state is State.LANDED and k.Verify(eid) in commands
    assert bus.entries[-1]["kind"] == "LANDED"
    bus.run(k.Verification(4, "could_not_run"), eid)
    assert bus.state(eid).state is State.LANDED and bus.entries[-1]["kind"] == "VERIFIED"
    assert bus.recover(eid, 5) == (k.Verify(eid),)
    bus.run(k.Verification(6, "passed"), eid)
    assert bus.state(eid).state is State.COMMITTED
    assert k.receipts(bus.entries)[0].verified == "passed"


def test_a_failed_verification_refuses_restores_and_keeps_the_reservation() -> None:
    bus = Bus()
    eid = admitted(bus, unit("u1", verify=True, cost=5, cap=10))
    bus.dispatch(eid, 2)
    bus.run(k.Ack(3, 1), eid)
    commands = bus.run(k.Verification(4, "failed"), eid)
    effect = bus.state(eid)
    assert (effect.state, effect.executed, effect.reason) == \
        (State.REFUSED, k.Executed.TRUE, "verification_failed")
    assert k.Restore(eid) in commands and bus.folder.view().reserved == {"b": 5}
    with pytest.raises(k.KernelError, match="verification result"):
        k.step(k.replay(bus.entries[:-1])[eid], k.Verification(4, "probably fine"))


def test_recovery_finds_a_landed_unit_and_asks_for_verification() -> None:
    bus = Bus()
    eid = admitted(bus, unit("u1", verify=True))
    bus.dispatch(eid, 2)
    commands = bus.recover(eid, 10_000, k.Lookup(True, 10_000))
    assert bus.state(eid).state is State.LANDED and k.Verify(eid) in commands
    assert bus.entries[-1]["via"] == "lookup"


def test_coordinated_events_need_the_view() -> None:
    e = k.step(None, k.Propose(0, unit("u1"))).effect
    with pytest.raises(k.KernelError, match="journal-wide view"):
        k.step(e, k.Authorize(1, LIVE, FACTS))
    with pytest.raises(k.KernelError, match="seq"):
        k.step(e, k.Authorize(1, LIVE, FACTS, k.View()))


def test_replay_and_the_view_are_rebuilt_from_the_journal_alone() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=3, cap=9, verify=True))
    bus.dispatch(a, 2)
    bus.run(k.Ack(3, 1), a)
    b = bus.propose(unit("b", writes=("y",), reads=("x",), cost=3, cap=9), now=4)
    bus.authorize(b, 4)  # x is held by a unit that already landed: refused at admission
    assert bus.state(b).reason == "read_overlap_moved"
    assert k.replay(bus.entries) == bus.effects.by_id
    assert k.fold(bus.entries) == bus.folder.view()
    text = "".join(k.journal.render(bus.entries))
    assert k.verify(text).valid is True


def test_status_says_who_holds_what_and_why_each_unit_waits() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=3, cap=9, verify=True))
    b = bus.propose(unit("b", writes=("x",), cost=3, cap=9))
    bus.authorize(b, 2)
    bus.dispatch(a, 3)
    bus.run(k.Ack(4, 1), a)
    s = k.status(bus.entries, now=5)
    assert s["claims"]["x"]["effect_id"] == a and s["claims"]["x"]["live"] is True
    waits = {o["effect_id"]: o["waits"] for o in s["open"]}
    assert "verification" in waits[a] and "x (held by" in waits[b]
    assert s["budgets"] == {"b": {"cap": 9, "reserved": 3, "spent": 0}}
    assert s["plans"] == {"p": 1} and s["undo"][0]["effect_id"] == a


def test_an_uncoordinated_proposal_journals_exactly_what_it_did_before() -> None:
    p = unit("u1")
    plain = k.Proposal(p.payload, p.premises, p.lease, REPO, TIMING, p.key)
    entry = k.step(None, k.Propose(0, plain)).commands[0].entry
    assert "coordination" not in entry
    e = k.step(None, k.Propose(0, plain)).effect
    assert "unit" not in k.step(e, k.Authorize(1, LIVE, FACTS)).commands[0].entry["checks"]
