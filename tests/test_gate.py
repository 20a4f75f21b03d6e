"""The real runtime: file journal durability rules and the end-to-end refund example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import kernel
import kernel.oracle
from gate import Gate, JsonlJournal

ROOT = Path(__file__).resolve().parents[1]
CAPS = kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=10)
TIMING = kernel.Timing(send_timeout=50, settle_margin=20, dedup_margin=100)


class Ledger:
    """An in-memory target that can lose acks."""

    capabilities = CAPS

    def __init__(self, ack=True):
        self.applied, self.ack = [], ack

    def apply(self, key, payload, deadline):
        self.applied.append(key)
        return self.ack

    def lookup(self, effect_id):
        return effect_id in self.applied

    def facts(self, effect_id):
        return {"refunded": sum(20 for k in self.applied if k != effect_id)}


def proposal(amount=20):
    return kernel.Proposal(payload={"order": 1, "amount": amount}, premises={"refunded": 0},
                           lease="L", capabilities=CAPS, timing=TIMING, key={"order": 1})


class Clock:
    def __init__(self):
        self.t = 1_000

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += int(seconds * 1000) + 1


def make_gate(path, target, clock):
    return Gate(JsonlJournal(path), target, lease_of=lambda i: kernel.Lease(i, 10**12),
                clock=clock, sleep=clock.sleep)


def test_submit_commits_and_the_journal_verifies(tmp_path):
    clock, target = Clock(), Ledger()
    r = make_gate(tmp_path / "j.jsonl", target, clock).submit(proposal())
    assert (r.final, r.executed, r.recorded) == ("COMMITTED", "true", True)
    text = (tmp_path / "j.jsonl").read_text()
    assert kernel.oracle.check(text).valid is True


def test_lost_ack_is_resolved_by_lookup_without_a_second_send(tmp_path):
    clock, target = Clock(), Ledger(ack=False)
    r = make_gate(tmp_path / "j.jsonl", target, clock).submit(proposal())
    assert r.final == "COMMITTED" and r.reason == "found_by_lookup"
    assert len(target.applied) == 1


def test_resubmitting_another_amount_is_refused_and_nothing_is_sent(tmp_path):
    clock, target = Clock(), Ledger()
    gate = make_gate(tmp_path / "j.jsonl", target, clock)
    gate.submit(proposal(20))
    gate.submit(proposal(30))
    assert len(target.applied) == 1
    assert [e["kind"] for e in gate.journal.entries][-1] == "REJECTED"


def test_torn_last_line_is_cut_off_on_open(tmp_path):
    path = tmp_path / "j.jsonl"
    make_gate(path, Ledger(), Clock()).submit(proposal())
    good = path.read_text()
    path.write_text(good + good.splitlines()[0][:40])
    journal = JsonlJournal(path)
    assert path.read_text() == good and len(journal.entries) == good.count("\n")


def test_a_corrupted_journal_is_refused_not_repaired(tmp_path):
    path = tmp_path / "j.jsonl"
    make_gate(path, Ledger(), Clock()).submit(proposal())
    lines = path.read_text().splitlines(True)
    lines[1] = lines[1].replace('"ts":1000', '"ts":1001')
    path.write_text("".join(lines))
    with pytest.raises(kernel.JournalError, match="line 2"):
        JsonlJournal(path)


@pytest.mark.parametrize("tier, final, executed", [(1, "COMMITTED", "true"),
                                                   (2, "COMMITTED", "true"),
                                                   (3, "AMBIGUOUS", "unknown")])
def test_refund_example_survives_a_real_crash(tier, final, executed):
    out = subprocess.run([sys.executable, str(ROOT / "examples/refund.py"), "--tier", str(tier)],
                         capture_output=True, text=True, timeout=60).stdout
    assert "refunded on order 881: $20 (1 refund record(s))" in out
    assert f"final      {final}" in out and f"executed   {executed}" in out
