"""What a user touches: the gate.effect decorator, recover(), python -m gate status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gate
import kernel

ROOT = Path(__file__).resolve().parents[2]
CAPS = kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=5)
TIMING = kernel.Timing(send_timeout=100, settle_margin=50, dedup_margin=0)


class Service:
    capabilities = CAPS

    def __init__(self) -> None:
        self.applied: list[str] = []
        self.fail_once = False

    def lookup(self, effect_id):
        return effect_id in self.applied

    def facts(self, effect_id):
        return {"open": True}


def gated(journal: Path, service: Service):
    @gate.effect(journal=journal, target=service, name="pay", timing=TIMING,
                 lease=kernel.Lease("bot", 2**52), key=lambda order, amount: {"order": order},
                 premises=lambda order, amount: {"open": True})
    def pay(order: int, amount: int, idempotency_key: str) -> None:
        service.applied.append(idempotency_key)
        if service.fail_once:
            service.fail_once = False
            raise TimeoutError("the answer was lost")
    return pay


def test_a_decorated_function_is_gated_and_a_lost_answer_recovered(tmp_path):
    service = Service()
    pay = gated(tmp_path / "j.jsonl", service)
    first = pay(1, 20)
    assert (first.final, first.reason) == ("COMMITTED", "ack")
    service.fail_once = True  # applied, but the function raised: no acknowledgement
    lost = pay(2, 30)
    assert (lost.final, lost.reason) == ("COMMITTED", "found_by_lookup")
    again = pay(1, 20)  # a duplicate call changes nothing
    assert again.final == "COMMITTED" and len(service.applied) == 2
    assert [r.final for r in gate.recover(tmp_path / "j.jsonl")] == ["COMMITTED"] * 2


def run_status(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gate", "status", str(path), *args],
                          cwd=ROOT, capture_output=True, text=True)


def test_status_says_what_is_open_who_holds_the_claim_and_what_to_reconcile(kit, clock,
                                                                             tmp_path):
    path, target = tmp_path / "j.jsonl", kit.Ledger(clock)
    with pytest.raises(kit.Crash):
        kit.make_gate(path, target, clock, probe=kit.dies_at("after:send")).submit(
            kit.proposal(1))
    with pytest.raises(kit.Crash):
        kit.make_gate(path, target, clock, probe=kit.dies_at("after:PROPOSED")).submit(
            kit.proposal(2))
    three = kit.Ledger(clock, tier=3)
    kit.make_gate(path, three, clock, probe=lambda p: None)
    with pytest.raises(kit.Crash):
        kit.make_gate(path, three, clock, probe=kit.dies_at("after:send")).submit(
            kit.proposal(3, tier=3))
    kit.make_gate(path, three, clock).settle(kit.proposal(3, tier=3).effect_id)
    sent = next(json.loads(line)["ts"] for line in path.read_text().splitlines()
                if '"DISPATCHED"' in line)
    out = run_status(path, "--now", str(sent + 1)).stdout
    assert "3 effects in" in out and "2 open, 1 AMBIGUOUS" in out
    assert "claim held by attempt 1 sent at ts" in out and "waiting" in out
    assert "never sent; recovery re-runs Authorize" in out
    assert f"{kit.proposal(3, tier=3).effect_id} target target" in out
    assert "no_dedup_no_lookup" in out
    report = json.loads(run_status(path, "--now", str(clock.t + 10_000), "--json").stdout)
    assert "claim expired" in report["open"][0]["why"]


def test_status_mistakes_are_one_line_errors(tmp_path):
    missing = run_status(tmp_path / "nothing.jsonl")
    assert missing.returncode == 254 and missing.stderr.count("\n") == 1
    folder = run_status(tmp_path)
    assert folder.returncode == 254 and "is a directory" in folder.stderr
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    broken = run_status(bad)
    assert broken.returncode == 1 and "Traceback" not in broken.stderr


def test_status_and_export_leave_a_database_that_is_no_journal_as_it_was(tmp_path):
    """A user's own .db named by mistake: status used to add a journal table to it and
    switch it to WAL, then report 0 effects."""
    import hashlib
    import sqlite3
    path = tmp_path / "app.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (id)")
    db.commit()
    db.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    for command in ("status", "export"):
        run = subprocess.run([sys.executable, "-m", "gate", command, str(path)],
                             capture_output=True, text=True, cwd=ROOT)
        assert run.returncode == 1 and "not a gate journal" in run.stderr, run.stderr
        assert run.stderr.count("\n") == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
