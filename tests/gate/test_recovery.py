"""recover() settles everything; workers on one journal wait out each other's claims."""

from __future__ import annotations

import pytest

import kernel
import kernel.oracle


@pytest.mark.parametrize("name", ["j.jsonl", "j.db"])
@pytest.mark.parametrize("point", ["after:PROPOSED", "after:AUTHORIZED"])
def test_an_effect_that_never_reached_dispatched_is_settled(kit, tmp_path, clock, name, point):
    target = kit.Ledger(clock)
    with pytest.raises(kit.Crash):
        kit.make_gate(tmp_path / name, target, clock,
                      probe=kit.dies_at(point)).submit(kit.proposal(1))
    receipts = kit.make_gate(tmp_path / name, target, clock).recover()
    assert [(r.final, r.executed, r.recorded) for r in receipts] == [("COMMITTED", "true", True)]
    assert target.applied == [kit.proposal(1).effect_id]


@pytest.mark.parametrize("point", ["after:PROPOSED", "after:AUTHORIZED"])
def test_fresh_checks_at_recovery_refuse_what_no_longer_holds(kit, tmp_path, clock, point):
    target = kit.Ledger(clock)
    with pytest.raises(kit.Crash):
        kit.make_gate(tmp_path / "j.jsonl", target, clock,
                      probe=kit.dies_at(point)).submit(kit.proposal(1))
    target.closed.add(kit.proposal(1).effect_id)  # the world moved during the outage
    revoked = kit.make_gate(tmp_path / "j.jsonl", target, clock).recover()
    assert [(r.final, r.reason, r.executed) for r in revoked] == [
        ("REFUSED", "premise_stale", "false")]
    assert target.applied == []
    text = (tmp_path / "j.jsonl").read_text()
    assert kernel.oracle.check(text, complete=True, applied=[]).valid is True


def test_a_revoked_lease_at_recovery_refuses(kit, tmp_path, clock):
    target = kit.Ledger(clock)
    with pytest.raises(kit.Crash):
        kit.make_gate(tmp_path / "j.jsonl", target, clock,
                  probe=kit.dies_at("after:AUTHORIZED")).submit(kit.proposal(1))
    dead = kit.make_gate(tmp_path / "j.jsonl", target, clock,
                     lease=lambda i: kernel.Lease(i, 10**12, revoked=True)).recover()
    assert [(r.final, r.reason) for r in dead] == [("REFUSED", "lease_dead")]


def test_recover_leaves_nothing_open(kit, tmp_path, clock):
    target = kit.Ledger(clock)
    for n, point in enumerate(["after:PROPOSED", "after:AUTHORIZED", "after:DISPATCHED",
                               "after:send"]):
        with pytest.raises(kit.Crash):
            kit.make_gate(tmp_path / "j.jsonl", target, clock,
                      probe=kit.dies_at(point)).submit(kit.proposal(n))
    receipts = kit.make_gate(tmp_path / "j.jsonl", target, clock).recover()
    assert len(receipts) == 4 and all(r.final == "COMMITTED" for r in receipts)
    assert sorted(target.applied) == sorted(kit.proposal(n).effect_id for n in range(4))
    text = (tmp_path / "j.jsonl").read_text()
    verdict = kernel.oracle.check(text, complete=True, applied=target.applied)
    assert verdict.valid is True, verdict.first


@pytest.mark.parametrize("name", ["j.jsonl", "j.db"])
def test_a_second_worker_waits_out_the_first_ones_send(kit, tmp_path, clock, name):
    """Worker B recovers while worker A's send of its own effect is still in flight: B must
    wait until A's claim expires; A's request then arrives late and the target drops it."""
    path = tmp_path / name
    target = kit.Ledger(clock)
    b = kit.make_gate(path, target, clock)
    receipts = []
    target.during_send = lambda: receipts.extend(b.recover())
    a = kit.make_gate(path, target, clock)
    final = a.submit(kit.proposal(1))
    eid = kit.proposal(1).effect_id
    assert target.applied == [eid]  # once: B resent after a negative lookup, A's send was late
    assert final.final == "COMMITTED" and receipts[0].final == "COMMITTED"
    assert b.clock.slept and sum(b.clock.slept) >= 0.05  # B really waited out the claim
    text = path.read_text() if name.endswith("jsonl") else b.journal.export()
    assert kernel.oracle.check(text, complete=True, applied=target.applied).valid is True


def test_two_workers_with_disjoint_effects_on_one_journal(kit, tmp_path, clock):
    path = tmp_path / "j.jsonl"
    target = kit.Ledger(clock)
    a, b = kit.make_gate(path, target, clock), kit.make_gate(path, target, clock)
    for n in range(6):
        (a if n % 2 else b).submit(kit.proposal(n))
    assert len(target.applied) == 6 == len(set(target.applied))
    assert kernel.verify(path.read_text()).valid is True
    assert {r.final for r in a.recover() + b.recover()} == {"COMMITTED"}
