"""Journals an outside audit found the oracle judging wrongly, each kept with its verdict.

How it works. ``Run`` drives the real kernel (``kernel.Effects``, the journal-wide view of
``kernel.Folder``) and keeps the sealed entries and the target's record; a case then asks
``kernel.oracle.check`` (and, where the fault was there, the independent
``kernel.invariants.check`` alone) for the verdict DESIGN.md gives.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

import kernel as k
from kernel import invariants
from kernel.__main__ import main
from kernel.journal import render
from kernel.oracle import check

TIMING = k.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
DEDUPE_ONLY = k.Capabilities(dedupes=True, queryable=False, dedup_window=100_000)
LIVE = k.Lease("L", 10**9)
FACTS = {"f": 1}


class Run:
    """One journal written by the kernel, and what the target saw."""

    def __init__(self) -> None:
        self.chain, self.effects, self.folder = k.Chain(), k.Effects(), k.Folder()
        self.entries: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        self.plan = k.Plan("p", 1)

    def propose(self, now: int, caps: k.Capabilities, unit: k.Coordination | None = None
                ) -> str:
        p = k.Proposal(payload={"u": now}, premises=FACTS, lease="L", capabilities=caps,
                       timing=TIMING, key={"u": now}, coordination=unit)
        self.step(k.Propose(now, p))
        return p.effect_id

    def step(self, event: Any, eid: str | None = None) -> None:
        for c in self.effects.apply(event, eid):
            if isinstance(c, k.Append):
                entry = self.chain.seal(c.entry)[0]
                self.entries.append(entry)
                self.folder.add(entry)
            elif isinstance(c, k.Send):
                self.history.append({"op": "send", "effect_id": c.effect_id, "ts": event.now,
                                     "attempt": c.attempt})

    def unit(self) -> dict[str, Any]:
        return {"view": self.folder.view(), "plan": self.plan}

    def send(self, eid: str, now: int) -> None:
        """Admit at now, dispatch at now + 1."""
        self.step(k.Authorize(now, LIVE, FACTS, seq=self.chain.seq, **self.unit()), eid)
        self.step(k.Dispatch(now + 1, LIVE, FACTS, **self.unit()), eid)


def test_a_unit_check_failing_at_recovery_inside_the_window_is_honestly_ambiguous() -> None:
    """Dedupe-only target, plan superseded during the outage, recovery inside the dedup
    window: the kernel may not resend (G8) and cannot look it up, so AMBIGUOUS
    'plan_superseded_at_recovery_cannot_confirm' is the only honest end. The invariants
    called it a needless ambiguity ("a resend was safe"), rejecting the kernel's journal."""
    run = Run()
    a = run.propose(0, DEDUPE_ONLY, k.Coordination(writes=("x",), plan="p", plan_version=1))
    run.send(a, 1)
    run.plan = k.Plan("p", 2)
    run.step(k.Recover(400, LIVE, FACTS, **run.unit()), a)
    assert run.entries[-1]["reason"] == "plan_superseded_at_recovery_cannot_confirm"
    assert invariants.check(run.entries, run.history, complete=True) == []
    assert check(run.entries, run.history, complete=True, now=10**12).valid is True


def _resealed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    chain = k.Chain()
    return [chain.seal({n: v for n, v in e.items() if n not in ("seq", "prev", "hash")})[0]
            for e in entries]


def test_an_ambiguity_blamed_on_a_unit_check_that_held_is_flagged() -> None:
    """The same journal with the plan check recording the plan still current: the unit
    reason is unsupported, which the independent layer must say on its own (K10)."""
    run = Run()
    a = run.propose(0, DEDUPE_ONLY, k.Coordination(writes=("x",), plan="p", plan_version=1))
    run.send(a, 1)
    run.plan = k.Plan("p", 2)
    run.step(k.Recover(400, LIVE, FACTS, **run.unit()), a)
    run.entries[-1]["checks"]["unit"]["plan"].update(current=1, ok=True)
    found = invariants.check(_resealed(run.entries))
    assert [(v.invariant, v.type) for v in found] == [("K10", "unit_refused_without_cause")]


def test_an_untimed_application_of_an_effect_never_dispatched_is_k1() -> None:
    """History given as a list of applied ids (no times): an effect left AUTHORIZED was
    applied by the target. K1 needs a DISPATCHED before any application; the check only
    looked when the record had a time, so the oracle said valid."""
    run = Run()
    a = run.propose(0, k.Capabilities(dedupes=False, queryable=True, lookup_lag=50))
    run.step(k.Authorize(1, LIVE, FACTS), a)
    verdict = check(run.entries, [a], now=10**12)
    assert verdict.valid is False
    assert [(x["invariant"], x["type"]) for x in verdict.anomalies] == \
        [("K1", "applied_without_intent")]


def test_a_late_lookup_answer_from_a_target_that_cannot_be_looked_up_is_impossible() -> None:
    """Tier 3 ends AMBIGUOUS, then a LATE lookup "found" settles its receipt executed=true.
    A tier-3 target cannot be looked up (a Recover with a lookup from it is an illegal
    event), so the answer cannot have happened; the oracle accepted it, settlement and
    all. Both layers must reject it."""
    run = Run()
    a = run.propose(0, k.Capabilities(dedupes=False, queryable=False))
    run.step(k.Authorize(1, LIVE, FACTS), a)
    run.step(k.Dispatch(2, LIVE, FACTS), a)
    run.step(k.Recover(400, LIVE, FACTS), a)
    with pytest.raises(k.IllegalTransition, match="cannot be looked up"):
        run.step(k.LookupAnswer(500, True, 499), a)  # the kernel refuses to journal it
    late = {"kind": "LATE", "effect_id": a, "ts": 500, "answer": "lookup", "found": True,
            "asked_at": 499}  # what an implementation without that rule writes
    run.entries.append(run.chain.seal(late)[0])
    assert [e["kind"] for e in run.entries][-2:] == ["AMBIGUOUS", "LATE"]
    records = [{"op": "apply", "effect_id": a, "ts": 3}]
    verdict = check(run.entries, records, now=10**12)
    assert verdict.valid is False
    assert verdict.anomalies[0]["type"] == "impossible_observation"
    assert [(v.invariant, v.type) for v in invariants.check(run.entries, records)] == \
        [("K7", "lookup_at_unqueryable_target")]


def test_refused_executed_true_needs_an_application_in_the_record() -> None:
    """A unit that requires verification lands (ack), fails it, and is REFUSED
    'verification_failed' with executed=true; the target's record shows the send and no
    application. executed=true is true only when the target applied it (K7), as for a
    COMMITTED receipt; the oracle said valid."""
    run = Run()
    a = run.propose(0, k.Capabilities(dedupes=True, queryable=True, dedup_window=100_000,
                                      lookup_lag=50), k.Coordination(writes=("x",), verify=True))
    run.send(a, 1)
    run.step(k.Ack(3, 1), a)
    run.step(k.Verification(4, "failed"), a)
    assert (run.entries[-1]["kind"], run.entries[-1]["executed"]) == ("REFUSED", "true")
    verdict = check(run.entries, run.history, now=10**12)
    assert [(x["invariant"], x["type"]) for x in verdict.anomalies] == \
        [("K7", "executed_not_applied")]
    applied = [*run.history, {"op": "apply", "effect_id": a, "ts": 2}]
    assert check(run.entries, applied, now=10**12).valid is True


def test_a_unit_budget_or_plan_that_is_no_name_is_refused_not_a_traceback(
        tmp_path: Path) -> None:
    """A coordination record whose budget (or plan) is an object: the fold of the view keys
    by it and raised TypeError out of ``python -m kernel check`` (a traceback, exit 1 by
    accident). Now the proposal is refused at its line: exit 1 with a verdict."""
    run = Run()
    unit = k.Coordination(writes=("x",), budget="b", cost=1, cap=5)
    run.propose(0, DEDUPE_ONLY, unit)
    a = run.entries[0]["effect_id"]
    run.step(k.Authorize(1, LIVE, FACTS, seq=1, **run.unit()), a)
    run.entries[0]["coordination"] = {**run.entries[0]["coordination"], "budget": {"b": 1}}
    path = tmp_path / "j.jsonl"
    path.write_text(render(_resealed(run.entries)))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", str(path), "--workers", "1"])
    assert code == 1
    assert out.getvalue().splitlines()[1].startswith("line 1: ")


@pytest.mark.parametrize("bad", [{"ttl": 0.5}, {"cost": 0.5, "budget": "b"}, {"cap": True},
                                 {"plan_version": 1.0, "plan": "p"}, {"ttl": 2**60},
                                 {"budget": 5}, {"plan": ["p"]}])
def test_a_unit_with_numbers_or_names_a_journal_cannot_hold_is_refused(bad) -> None:
    """Non-integer or unbounded unit numbers made the kernel write journals the invariants
    misjudged (they round with int()) or could not seal; a budget or plan that is no name
    reached the view as an unhashable key. The kernel refuses them at the proposal."""
    with pytest.raises(k.ConfigError):
        k.Coordination(writes=("a",), **bad)
