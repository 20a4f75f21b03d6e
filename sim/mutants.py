"""Planted bugs: does the sweep alone catch a realistic mistake in the kernel's decisions?

How it works. ``MUTANTS`` is a catalogue of kernel bugs, each a one-line story and an exact
source patch (a snippet of kernel/ and its replacement). For each, the kernel package is
copied to a temporary folder, the snippet is replaced (a snippet that is not found exactly
once is an error, naming the mutant: kernel/ changed and the catalogue must follow), and a
subprocess whose import path starts with that folder runs the kernel over the sweep's seeded
cases at every tier, judged exactly as the sweep judges (sim.judge and sim.measure; the unit
tests play no part). It reports the first failing seed, the number of failing runs, which
judges caught them, and a digest of its records. ``python run_all.py --mutants`` runs the
whole catalogue and writes ``results/mutants/`` (``--mutant-cases``, default 500); with
``stop_first`` a mutant stops at its first failing case (the quick version CI runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    story: str
    file: str  # under kernel/
    old: str
    new: str
    sweep: str = "refund"  # the sweep that must catch it: "refund", or "coding" (sim.coding)


MUTANTS = (
    Mutant("resend_tier3", "recovery resends a tier-3 effect as if the target deduplicated",
           "recovery.py", "    if not (dedupes or proven_absent):", "    if False:"),
    Mutant("no_claim_wait", "recovery does not wait for the claim of the send in flight",
           "recovery.py", "    if now < effect.claim_until:", "    if False:"),
    Mutant("ignore_dedup_window", "a tier-1 resend is made however long ago the key was used",
           "recovery.py",
           "    return now < effect.first_sent_at + caps.dedup_window - timing.dedup_margin",
           "    return True"),
    Mutant("ignore_dedup_margin", "the dedup window is trusted to its last millisecond",
           "recovery.py",
           "    return now < effect.first_sent_at + caps.dedup_window - timing.dedup_margin",
           "    return now < effect.first_sent_at + caps.dedup_window"),
    Mutant("commit_on_absent", "any lookup answer is taken as found: COMMITTED without an ack",
           "recovery.py", "    if caps.queryable and lookup is not None and lookup.found:",
           "    if caps.queryable and lookup is not None:"),
    Mutant("refuse_without_proof", "a failed re-check at recovery refuses even without a "
           "lookup proving absence", "recovery.py",
           "        if proven_absent:\n            return Decision(\"refuse\"",
           "        if True:\n            return Decision(\"refuse\""),
    Mutant("no_lease_recheck", "recovery forgets to re-check the lease before a resend",
           "machine.py", "decide(effect, ev.now, refusal not in _AUTHORITY,",
           "decide(effect, ev.now, True,"),
    Mutant("no_premise_recheck", "recovery forgets to re-check the premises before a resend",
           "machine.py", "refusal in _AUTHORITY\n                         "
           "or refusal is None, ev.lookup, refusal)",
           "True, ev.lookup, refusal if refusal in _AUTHORITY else None)"),
    Mutant("dispatch_skips_checks", "dispatch sends without looking at its own checks",
           "machine.py", "def _dispatch(effect: Effect, ev: Dispatch) -> Transition:\n"
           "    checks = _unit_send_checks(effect, ev, _checks(ev.now, ev.lease, ev.facts, "
           "effect.proposal))\n    refusal = _refusal(checks)",
           "def _dispatch(effect: Effect, ev: Dispatch) -> Transition:\n"
           "    checks = _unit_send_checks(effect, ev, _checks(ev.now, ev.lease, ev.facts, "
           "effect.proposal))\n    refusal = None"),
    Mutant("conflict_not_rejected", "a resubmission is compared by effect id only, never by "
           "payload", "machine.py",
           "    if ev.proposal.payload_digest != effect.proposal.payload_digest:\n"
           "        entry = _entry(\"REJECTED\"",
           "    if False:\n        entry = _entry(\"REJECTED\""),
    Mutant("lazy_dispatched_fsync", "DISPATCHED is written but not fsync'd before the send",
           "machine.py", "    return Transition(done, (Append(entry, fsync=True), send))",
           "    return Transition(done, (Append(entry, fsync=False), send))"),
    Mutant("no_settle_margin", "the claim ends at the deadline: no settle margin for lookup lag",
           "machine.py", "    claim_until = deadline + timing.settle_margin",
           "    claim_until = deadline"),
    Mutant("window_from_last_send", "the dedup window is counted from the latest resend, not "
           "the first send", "machine.py",
           "    first = effect.first_sent_at if effect.first_sent_at is not None else now",
           "    first = now"),
    Mutant("attempt_reused", "a resend reuses the previous attempt number", "machine.py",
           "    attempt = effect.attempts + 1", "    attempt = max(1, effect.attempts)"),
    Mutant("lease_id_ignored", "any live lease authorizes, whichever lease the decision named",
           "machine.py", "live = lease.live(now) and lease.id == p.lease",
           "live = lease.live(now)"),
    Mutant("absent_without_bound", "a negative lookup is taken as proof of absence even where "
           "the target bounds nothing in flight", "recovery.py",
           "proven_absent = caps.queryable and lookup is not None and bounded",
           "proven_absent = caps.queryable and lookup is not None"),
    Mutant("window_ignores_bound", "the dedup window is trusted where the target bounds "
           "nothing in flight", "recovery.py",
           "if not caps.dedupes or effect.first_sent_at is None or not in_flight_bounded(effect):",
           "if not caps.dedupes or effect.first_sent_at is None:"),
    Mutant("tier3_refused", "with no capability left, recovery says REFUSED (never applied) "
           "instead of AMBIGUOUS", "recovery.py",
           'return Decision("ambiguous", "dedup_window_expired_no_lookup" if expired',
           'return Decision("refuse", "dedup_window_expired_no_lookup" if expired'),
    Mutant("replay_claim_lost", "replaying the journal after a restart forgets the claim of "
           "the send in flight", "machine.py",
           'claim_until=entry["claim_until"], executed=Executed.UNKNOWN,',
           'claim_until=entry["ts"], executed=Executed.UNKNOWN,'),
    Mutant("replay_first_send_reset", "replay takes the first send's time from the latest "
           "DISPATCHED entry", "machine.py", 'first_sent_at=entry["first_sent_at"],',
           'first_sent_at=entry["ts"],'),
    Mutant("send_deadline_drift", "the request carries a later deadline than the one its "
           "claim was computed from", "machine.py",
           "    send = Send(p.effect_id, p.effect_id, p.payload, attempt, deadline, effect.token)",
           "    send = Send(p.effect_id, p.effect_id, p.payload, attempt,\n"
           "                deadline + 2 * timing.settle_margin, effect.token)"),
    Mutant("stale_first_only", "only the first premise is compared with the facts",
           "model.py", "        if not (fact == want if",
           "        if name == p.premise_names[0] and not (fact == want if"),
    # Boundaries, caught since the world hides and retypes facts, expires the lease at the
    # instant of a check, offers early lookups and restarts as the dedup window closes.
    Mutant("lease_live_at_expiry", "a lease is taken as live at its very expiry instant",
           "model.py", "return not self.revoked and now < self.expires_at",
           "return not self.revoked and now <= self.expires_at"),
    Mutant("missing_fact_not_stale", "a premise whose fact nobody reported is taken as holding",
           "model.py", "            seen[name] = None\n            stale.append(name)\n",
           "            seen[name] = None\n"),
    Mutant("bool_equals_int", "a fact 0 supports a premise false (Python's ==, not JSON's)",
           "model.py", "    if ta is bool or tb is bool:\n        return False",
           "    if False:\n        return False"),
    Mutant("dedup_window_last_instant", "a resend relies on the dedup window at the instant it "
           "closes", "recovery.py",
           "    return now < effect.first_sent_at + caps.dedup_window - timing.dedup_margin",
           "    return now <= effect.first_sent_at + caps.dedup_window - timing.dedup_margin"),
    Mutant("early_lookup_counts", "a lookup asked before the claim's end is taken as evidence",
           "recovery.py", "(lookup is None or lookup.asked_at < effect.claim_until)",
           "(lookup is None)"),
    Mutant("late_confirmation_not_settling", "a late confirmation of an AMBIGUOUS effect "
           "leaves its receipt unknown", "machine.py",
           "        if effect.executed is Executed.UNKNOWN:\n"
           "            return effect._replace(executed=Executed.TRUE)",
           "        if False:\n            return effect._replace(executed=Executed.TRUE)"),
    Mutant("refused_receipt_unknown", "a REFUSED receipt says unknown where the refusal proved "
           "it never applied", "machine.py",
           "        return effect._replace(state=State.REFUSED, executed=Executed.FALSE,\n"
           "                               reason=entry[\"reason\"])",
           "        return effect._replace(state=State.REFUSED, executed=Executed.UNKNOWN,\n"
           "                               reason=entry[\"reason\"])"),
    # Coordinated units (DESIGN.md section 8), swept by the coding world's own judge.
    Mutant("claim_live_at_end", "a claim still holds at its very end", "model.py",
           "        return now < self.until", "        return now <= self.until", "coding"),
    Mutant("claims_ignored", "admission never waits for another unit's live claim",
           "machine.py", "    blocking = [view.claims[i] for i in c.writes if held(i)]",
           "    blocking = []", "coding"),
    Mutant("budget_one_over", "a reservation may pass the shared cap by one", "machine.py",
           '"ok": reserved + c.cost <= cap}', '"ok": reserved + c.cost <= cap + 1}', "coding"),
    Mutant("plan_always_current", "a superseded plan still authorizes its units", "machine.py",
           '"ok": c.plan_version >= current}', '"ok": True}', "coding"),
    Mutant("moved_reads_ignored", "a unit whose reads were moved by another is sent anyway",
           "machine.py", '    if unit["moved"]:\n        return "read_overlap_moved"',
           '    if False:\n        return "read_overlap_moved"', "coding"),
    Mutant("claim_ignored_at_send", "the send does not re-check its own claim", "machine.py",
           '"live": now < admission["until"]}', '"live": True}', "coding"),
    Mutant("claim_at_send_last_instant", "the send takes its claim as live at its very end",
           "machine.py", '"live": now < admission["until"]}',
           '"live": now <= admission["until"]}', "coding"),
    Mutant("claim_twice_as_long", "a claim is held twice as long as its ttl", "machine.py",
           'admission = {"token": ev.seq, "until": now + c.ttl, "overlaps": overlaps}',
           'admission = {"token": ev.seq, "until": now + 2 * c.ttl, "overlaps": overlaps}',
           "coding"),
)
BY_NAME = {m.name: m for m in MUTANTS}


class MutantError(Exception):
    """A mutant whose snippet no longer matches kernel/ (one line, names the mutant)."""


def apply(mutant: Mutant, kernel_dir: Path, into: Path) -> Path:
    """A copy of ``kernel_dir`` under ``into`` with the mutant's patch applied."""
    dest = into / "kernel"
    shutil.copytree(kernel_dir, dest, ignore=shutil.ignore_patterns("__pycache__"))
    path = dest / mutant.file
    text = path.read_text(encoding="utf-8")
    found = text.count(mutant.old)
    if found != 1:
        raise MutantError(f"mutant {mutant.name}: its snippet occurs {found} times in "
                          f"kernel/{mutant.file} (expected once); refresh the catalogue in "
                          f"sim/mutants.py")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return dest


def run_mutant(mutant: Mutant, cases: int, stop_first: bool,
               kernel_dir: Path = ROOT / "kernel") -> dict[str, Any]:
    """Patch a copy of the kernel and sweep it in a subprocess; its report as a dict."""
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        apply(mutant, kernel_dir, Path(tmp))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, str(ROOT)]),
                   PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", "sim.mutants", "--worker", mutant.name,
               "--cases", str(cases), "--kernel", str(Path(tmp) / "kernel")]
        if stop_first:
            cmd.append("--stop-first")
        done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise MutantError(f"mutant {mutant.name}: worker failed: "
                          f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# A case, as a worker sees it: the text the digest takes in, and per run (harms, the judges
# that found them).
Case = tuple[str, list[tuple[list[str], list[str]]]]


def worker(name: str, cases: int, stop_first: bool, kernel_path: str) -> dict[str, Any]:
    """In the subprocess: the mutated kernel is first on the path; sweep it, kernel only."""
    import kernel

    if not str(Path(kernel.__file__).resolve()).startswith(str(Path(kernel_path).resolve())):
        raise MutantError(f"mutant {name}: imported {kernel.__file__}, not the patched copy")
    if name in BY_NAME and BY_NAME[name].sweep == "coding":
        return coding_worker(name, cases, stop_first)
    from sim import sweep

    def case(seed: int) -> Case:
        rec = safe_case(sweep, seed)
        return sweep.line(rec), [
            (cell[2], cell[4].get("caught_by", ["crash"]) if len(cell) > 4 else ["crash"])
            for cell in rec["cells"].values()]
    return _tally(name, cases, stop_first, case)


def coding_worker(name: str, cases: int, stop_first: bool) -> dict[str, Any]:
    """The coding sweep's cases, the kernel only, judged by sim.coding.judge (one run each;
    a run the mutated kernel crashes counts as caught)."""
    from sim.coding.judge import judge
    from sim.coding.registry import SYSTEMS
    from sim.coding.story import simulate
    from sim.coding.sweep import plan_from_seed

    def case(seed: int) -> Case:
        try:
            harms = judge(simulate(plan_from_seed(seed), SYSTEMS["kernel"], seed))["harms"]
        except Exception as exc:  # noqa: BLE001 - a crashing kernel is a caught bug
            harms = [f"crash: {type(exc).__name__}"]
        return json.dumps([seed, harms]), [(harms, ["coding_judge"])]
    return _tally(name, cases, stop_first, case)


def _tally(name: str, cases: int, stop_first: bool,
           case: Callable[[int], Case]) -> dict[str, Any]:
    """Run ``case`` for seeds 0, 1, ..., up to the first failing one with ``stop_first``."""
    first, failing, runs, seed = None, 0, 0, -1
    caught: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    digest = hashlib.sha256()
    for seed in range(cases):
        text, cells = case(seed)
        digest.update(text.encode())
        for harms, judges in cells:
            runs += 1
            if harms:
                failing += 1
                caught.update(judges)
                reasons.update(harms)
        if failing and first is None:
            first = seed
            if stop_first:
                break
    return {"mutant": name, "cases": seed + 1, "runs": runs, "first_failing_seed": first,
            "failing_runs": failing, "caught_by": dict(sorted(caught.items())),
            "reasons": dict(sorted(reasons.items())), "digest": digest.hexdigest()}


def safe_case(sweep: Any, seed: int) -> dict[str, Any]:
    """A kernel-only sweep case; a run the mutated kernel crashes counts as caught (crash)."""
    try:
        return sweep.case(seed, None, ("kernel",))
    except Exception as exc:  # noqa: BLE001 - a crashing kernel is a caught bug
        return {"seed": seed, "cells": {"kernel/*": [None, "crash", [f"crash: {exc!r}"],
                                                     None, {"caught_by": ["crash"]}]}}


def run_all(cases: int, stop_first: bool, jobs: int,
            names: list[str] | None = None) -> list[dict[str, Any]]:
    from concurrent.futures import ThreadPoolExecutor

    chosen = [BY_NAME[n] for n in names] if names else list(MUTANTS)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        return list(ex.map(lambda m: run_mutant(m, cases, stop_first), chosen))


def markdown(reports: list[dict[str, Any]], cases: int) -> str:
    caught = sum(r["first_failing_seed"] is not None for r in reports)
    out = ["# Planted bugs: what the sweep alone catches", "",
           f"Each bug is patched into a copy of kernel/ and run over a sweep's first "
           f"{cases} seeded cases, judged only by that sweep: the refund sweep at every "
           f"tier (ground truth, invariants, spec trace; `sim/judge.py`), or for coordinated "
           f"units the coding sweep, one run per case (`sim/coding/judge.py`). Mutation "
           f"score: **{caught} of {len(reports)}** caught. Regenerate: "
           f"`python run_all.py --mutants`.", ""]
    head = ["bug", "sweep", "story", "first failing seed", "failing runs", "caught by",
            "reasons"]
    out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in reports:
        m = BY_NAME[r["mutant"]]
        judges = ", ".join(f"{k} {v}" for k, v in r["caught_by"].items()) or "-"
        why = ", ".join(f"{k} {v}" for k, v in r["reasons"].items()) or "-"
        first = "not caught" if r["first_failing_seed"] is None else str(r["first_failing_seed"])
        out.append(f"| {m.name} | {m.sweep} | {m.story} | {first} | "
                   f"{r['failing_runs']} of {r['runs']} | "
                   f"{judges} | {why} |")
    return "\n".join(out) + "\n"


def main(args: Any, say: Any) -> int:
    """``run_all.py --mutants``: the whole catalogue, results under OUT/mutants/."""
    from sim import report

    say(f"run_all --mutants: {len(MUTANTS)} planted bugs x {args.mutant_cases} cases, "
        f"jobs={args.jobs}")
    try:
        reports = run_all(args.mutant_cases, False, args.jobs)
    except MutantError as exc:
        print(f"run_all.py: error: {exc}", file=sys.stderr)
        return 2
    for r in reports:
        say(f"      {r['mutant']:<24} first failing seed {r['first_failing_seed']}, "
            f"{r['failing_runs']} failing runs, caught by {r['caught_by']}")
    out = Path(args.out) / "mutants"
    report.write_json(out / "mutants.json", {"cases": args.mutant_cases, "mutants": reports})
    report.write_text(out / "mutants.md", markdown(reports, args.mutant_cases))
    missed = [r["mutant"] for r in reports if r["first_failing_seed"] is None]
    say(f"      score {len(reports) - len(missed)}/{len(reports)}"
        + (f"; NOT CAUGHT: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


def _cli(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.mutants")
    p.add_argument("--worker", required=True, choices=sorted(BY_NAME))
    p.add_argument("--cases", type=int, default=500)
    p.add_argument("--stop-first", action="store_true")
    p.add_argument("--kernel", required=True)
    a = p.parse_args(argv)
    print(json.dumps(worker(a.worker, a.cases, a.stop_first, a.kernel), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(_cli())
