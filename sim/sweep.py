"""The seeded sweep: random fault plans, every system at every tier, streamed.

How it works. Case ``seed`` is ``plan_from_seed(seed)`` run against each system and tier with
the same seed. An executor (``sim.parallel``: serial, process pool or Dask) computes chunks
of consecutive seeds and hands them back in seed order; each case's record is written to
``sweep_cases.jsonl`` as soon as it arrives, folded into a ``Summary`` (counters and
histograms only, so memory stays flat however many cases run), fed to the coverage counts
and to a SHA-256 digest of the records in seed order (the same for every executor). Failing
cells are written to ``sweep_failures.md`` as they come, each with its replay command.
A cell records what the target applied, the outcome, the violations, the time to resolution
and, in ``extra``, the fault kinds that took effect in that run and (kernel) which judges
caught a violation.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from faults.plans import DEDUP_WINDOW, FaultPlan, plan_from_seed
from faults.systems import SYSTEM_NAMES, SYSTEMS
from sim import coverage, report, trace
from sim.measure import HARM, VIOLATIONS, measure
from sim.tiers import TIER_NAMES, TIMING
from sim.world import CRASH_KINDS, simulate

CELLS = [(s, t) for s in SYSTEM_NAMES for t in TIER_NAMES]
CHUNK = 25  # seeds per task


def fault_kinds(plan: FaultPlan) -> list[str]:
    """The kinds of fault a random plan contains (planned; ``Run.took`` says what happened)."""
    kinds = []
    if plan.crash:
        kinds.append(CRASH_KINDS[plan.crash])
        if plan.outage > DEDUP_WINDOW - TIMING.dedup_margin:
            kinds.append("late recovery")
        if plan.recrash:
            kinds.append("crash during recovery")
        if plan.recoverers > 1:
            kinds.append("two recoverers")
        if plan.torn:
            kinds.append("torn write")
    kinds += [f"{e} before dispatch" for e in plan.before_dispatch]
    kinds += [f"{e} during outage" for e in plan.during_outage]
    if plan.duplicate_submits:
        kinds.append("duplicate submit")
    if plan.conflicting_amount is not None:
        kinds.append("conflicting payload")
    if plan.redecide_amount is not None:
        kinds.append("model re-decides")
    if plan.slow_send:
        kinds.append("slow send")
    if plan.ack_lost:
        kinds.append("ack lost")
    if plan.late_ack:
        kinds.append("late ack")
    if plan.lookup_lag is not None:
        kinds.append("lookup lag")
    if plan.in_flight == "bounded":
        kinds.append("delivery bound")
    if plan.declares_no_bound:
        kinds.append("late delivery")
    return kinds or ["no fault"]


def run_one(seed: int, system: str, tier: str, trace_it: bool = False,
            world: str | None = None) -> tuple[Any, dict]:
    run = simulate(plan_from_seed(seed, world), SYSTEMS[system], tier, seed, trace=trace_it)
    return run, measure(run)


def cell_of(run: Any, m: dict[str, Any]) -> list[Any]:
    """[refunded, outcome, reasons, resolution_ms, extra]; extra only says what is there."""
    extra: dict[str, Any] = {}
    if m["world_race"]:
        extra["world_race"] = True
    if run.took:
        extra["took"] = sorted(run.took)
    if m.get("ambiguous"):
        extra["ambiguous"] = m["ambiguous"]
    if m.get("caught_by"):
        extra["caught_by"] = m["caught_by"]
    cell = [m["refunded"], m["outcome"], m["violations"], m["resolution_ms"]]
    return cell + [extra] if extra else cell


def case(seed: int, world: str | None = None, systems: Iterable[str] = SYSTEM_NAMES
         ) -> dict[str, Any]:
    """One sweep case: every system at every tier, as one compact record."""
    plan = plan_from_seed(seed, world)
    cells = {}
    for system in systems:
        for tier in TIER_NAMES:
            run = simulate(plan, SYSTEMS[system], tier, seed)
            cells[f"{system}/{tier}"] = cell_of(run, measure(run))
            run.release()
    return {"seed": seed, "plan": plan.summary(), "kinds": fault_kinds(plan), "cells": cells}


def chunk(task: tuple[int, int, str | None, tuple[str, ...]]) -> list[dict[str, Any]]:
    """The records of ``count`` consecutive seeds (one executor task)."""
    first, count, world, systems = task
    return [case(s, world, systems) for s in range(first, first + count)]


def tasks(first: int, cases: int, world: str | None = None,
          systems: tuple[str, ...] = SYSTEM_NAMES,
          size: int = CHUNK) -> Iterator[tuple[int, int, str | None, tuple[str, ...]]]:
    for start in range(first, first + cases, size):
        yield start, min(size, first + cases - start), world, systems


# The C encoder that JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
# uses, made once (a record is plain data without cycles: no markers needed).
_encode_pieces = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, json.JSONEncoder().default, json.encoder.encode_basestring, None, ":", ",", True,
    False, True)


def line(rec: dict[str, Any]) -> str:
    return "".join(_encode_pieces(rec, 0)) + "\n"


def replay_command(seed: int, system: str, tier: str, world: str | None = None) -> str:
    flag = f" --world {world}" if world else ""
    return f"python run_all.py --replay {seed} --system {system} --tier {tier}{flag}"


def replay(seed: int, system: str, tier: str, world: str | None = None) -> dict[str, Any]:
    """One sweep cell, traced: the full document (printed by ``--replay``)."""
    run, m = run_one(seed, system, tier, trace_it=True, world=world)
    return trace.build(run, m, f"random {seed}", None, None)


def replay_plan(plan: FaultPlan, seed: int, system: str, tier: str) -> dict[str, Any]:
    """A plan given by hand (``--plan``), traced."""
    run = simulate(plan, SYSTEMS[system], tier, seed, trace=True)
    return trace.build(run, measure(run), plan.name, None, None)


# ---------------------------------------------------------------- the streaming summary


class Summary:
    """Everything the tables and plots need, folded one record at a time (bounded memory)."""

    def __init__(self) -> None:
        self.cases = 0
        self.table: dict[str, dict[str, Any]] = {}
        self.kinds: dict[str, Counter[str]] = {}  # fault kind (took effect) -> system failures
        self.kind_runs: dict[str, Counter[str]] = {}  # fault kind -> system -> runs it took
        self.times: dict[str, dict[str, Counter[int]]] = {}  # cell -> ok|failing -> histogram
        self.coverage = coverage.Coverage()
        self.digest = hashlib.sha256()
        self.failing_runs = 0
        self.failing_cases = 0
        self.kernel_failures: list[str] = []  # replay commands (kept short: first 100)

    def add(self, rec: dict[str, Any], text: str) -> list[tuple[str, str, list[str]]]:
        """Fold one record; returns its failing cells (system, tier, reasons). A cell with
        no extra and no violation (most of them) only counts a run and its time."""
        self.cases += 1
        self.digest.update(text.encode())
        failing = []
        for name, cell in rec["cells"].items():
            system, tier = _split(name)
            row = self.row(name)
            row["runs"] += 1
            took: list[str] | tuple[()] = ()
            if len(cell) > 4:
                extra = cell[4]
                row["ambiguous"] += extra.get("ambiguous", 0)
                row["world_race"] += extra.get("world_race", False)
                for j in extra.get("caught_by", ()):
                    row["caught_by"][j] = row["caught_by"].get(j, 0) + 1
                took = extra.get("took", ())
                for kind in took:
                    (self.kind_runs.get(kind) or self.kind_runs.setdefault(kind, Counter())
                     )[system] += 1
            if system == "kernel":
                self.coverage.add(tier, took)
            reasons = cell[2]
            if cell[3] is not None:
                hist = self.times.get(name) or self.times.setdefault(
                    name, {"ok": Counter(), "failing": Counter()})
                hist["failing" if reasons else "ok"][bucket(cell[3])] += 1
            if reasons:
                self.fail(rec["seed"], row, system, tier, reasons, took)
                failing.append((system, tier, reasons))
        self.failing_runs += len(failing)
        self.failing_cases += bool(failing)
        return failing

    def fail(self, seed: int, row: dict[str, Any], system: str, tier: str, reasons: list[str],
             took: Iterable[str]) -> None:
        """The counts only a failing cell adds: its violations, harms and fault kinds."""
        for reason in reasons:
            row["violations"][reason] += 1
        for harm, members in HARM.items():
            row["harm"][harm] += any(r in members for r in reasons)
        row["failures"] += 1
        for kind in took:
            (self.kinds.get(kind) or self.kinds.setdefault(kind, Counter()))[system] += 1
        if system == "kernel" and len(self.kernel_failures) < 100:
            self.kernel_failures.append(f"{reasons}: {replay_command(seed, system, tier)}")

    def row(self, name: str) -> dict[str, Any]:
        row = self.table.get(name)
        if row is None:
            row = self.table[name] = {"runs": 0, "failures": 0, "ambiguous": 0, "world_race": 0,
                                      "violations": dict.fromkeys(VIOLATIONS, 0),
                                      "harm": dict.fromkeys(HARM, 0), "caught_by": {}}
        return row

    def result(self) -> dict[str, Any]:
        table = {}
        for name in sorted(self.table, key=lambda k: CELLS.index(tuple(k.split("/")))):
            row = dict(self.table[name])
            row["rate"] = round(row["failures"] / row["runs"], 4) if row["runs"] else 0.0
            hist = self.times.get(name, {"ok": Counter(), "failing": Counter()})
            row["resolution_ms"] = {v: percentiles(hist[v]) for v in ("ok", "failing")}
            row["caught_by"] = dict(sorted(row["caught_by"].items()))
            table[name] = row
        kernel_failures = sum(table[f"kernel/{t}"]["failures"] for t in TIER_NAMES
                              if f"kernel/{t}" in table)
        return {"cases": self.cases, "table": table, "digest": self.digest.hexdigest(),
                "failing_runs": self.failing_runs, "failing_cases": self.failing_cases,
                "kernel_failures": kernel_failures,
                "kernel_failure_commands": self.kernel_failures,
                "kinds": {k: {"took_effect_runs": dict(sorted(self.kind_runs[k].items())),
                              "failing_runs": dict(sorted(self.kinds.get(k, Counter()).items()))}
                          for k in sorted(self.kind_runs)},
                "coverage": self.coverage.result(),
                "resolution_hist": {k: {v: sorted(h[v].items()) for v in h}
                                    for k, h in sorted(self.times.items())}}


@functools.lru_cache(maxsize=64)
def _split(name: str) -> tuple[str, str]:
    """A cell's name, "system/tier", as (system, tier)."""
    system, tier = name.split("/")
    return system, tier


def bucket(ms: int) -> int:
    """A time kept to three significant digits (rounded down), so a histogram stays small
    however many runs it counts; percentiles are then exact to 1%."""
    if ms < 1_000:
        return ms
    scale = 10 ** (len(str(ms)) - 3)
    return ms // scale * scale


def percentiles(hist: Counter[int]) -> dict[str, int | None]:
    n = sum(hist.values())
    out: dict[str, int | None] = {"runs": n, "median": None, "p90": None, "max": None}
    if not n:
        return out
    marks = {"median": int(0.5 * n), "p90": int(0.9 * n)}
    seen = 0
    for value, count in sorted(hist.items()):
        for name, mark in marks.items():
            if out[name] is None and seen + count > mark:
                out[name] = value
        seen += count
        out["max"] = value
    return out


# ---------------------------------------------------------------- running and writing


def stream(records: Iterable[dict[str, Any]], out: Path, summary: Summary,
           progress: Callable[[Summary], None] | None = None,
           world: str | None = None) -> None:
    """Write each record as it arrives, fold it, and list its failing cells."""
    body = out / ".sweep_failures.part"
    with open(out / "sweep_cases.jsonl", "w", encoding="utf-8") as cases, \
            open(body, "w", encoding="utf-8") as fails:
        for rec in records:
            text = line(rec)
            cases.write(text)
            failing = summary.add(rec, text)
            if failing:
                fails.write(failure_line(rec, failing, world))
            if progress is not None:
                progress(summary)
    write_failures(out, summary, body)


def run(executor: Any, first_seed: int, cases: int, out: Path, say: Callable[[str], None],
        progress: Callable[[Summary], None] | None = None) -> dict[str, Any]:
    summary = Summary()
    stream(executor.map_chunks(chunk, tasks(first_seed, cases)), out, summary, progress)
    result = summary.result()
    write(out, first_seed, result)
    for system in SYSTEM_NAMES:
        rates = ", ".join(f"{t} {result['table'][f'{system}/{t}']['failures']}"
                          for t in TIER_NAMES) if cases else "no cases"
        say(f"      {system:<12} failing runs per tier: {rates}")
    for command in result["kernel_failure_commands"]:
        say(f"      KERNEL FAILURE {command}")
    say(f"      digest {result['digest']}")
    return result


def failure_line(rec: dict[str, Any], failing: list[tuple[str, str, list[str]]],
                 world: str | None = None) -> str:
    parts = []
    for system in SYSTEM_NAMES:
        runs = [(t, r) for s, t, r in failing if s == system]
        if not runs:
            continue
        reasons = sorted({x for _, r in runs for x in r})
        tiers = " ".join(t for t, _ in runs)
        command = replay_command(rec["seed"], system, runs[0][0], world)
        parts.append(f"{system} {tiers} ({', '.join(reasons)}): `{command}`")
    return f"- seed {rec['seed']} [{rec['plan']}]: " + "; ".join(parts) + "\n"


def write_failures(out: Path, summary: Summary, body: Path) -> None:
    head = ("# Failing sweep runs\n\n"
            f"{summary.failing_runs} failing runs in {summary.failing_cases} cases. One line "
            "per case; each failing system shows its failing tiers, the violations, and the "
            "command that replays it alone and prints its full timeline (swap `--tier` for "
            "the other tiers).\n\n")
    with open(out / "sweep_failures.md", "w", encoding="utf-8") as dst, \
            open(body, encoding="utf-8") as src:
        dst.write(head)
        for text in src:
            dst.write(text)
    body.unlink()


def write(out: Path, first_seed: int, s: dict[str, Any]) -> None:
    report.write_json(out / "sweep_summary.json", {
        "first_seed": first_seed, "cases": s["cases"], "table": s["table"],
        "kinds": s["kinds"], "failing_runs": s["failing_runs"], "digest": s["digest"],
        "coverage": s["coverage"]})
    report.write_text(out / "sweep_summary.md", markdown(first_seed, s))
    report.write_text(out / "coverage.md", coverage.markdown(s["coverage"], s["cases"]))


def markdown(first_seed: int, s: dict[str, Any]) -> str:
    n = s["cases"]
    out = ["# Sweep summary", "",
           f"{n} seeded cases (seeds {first_seed}..{first_seed + n - 1}), each run against "
           f"every system at every tier; digest of the records in seed order "
           f"`{s['digest']}`. Violations are measured from what the target applied; kernel "
           f"runs are also judged by the independent invariants and by trace validation "
           f"against Kernel.tla (`sim/judge.py`). AMBIGUOUS is availability lost, not a "
           f"violation. `world_race`: a refund whose request left under holding premises "
           f"landed after the world moved (no worker can prevent it; not a violation). "
           f"Failing runs, each with its replay command: `sweep_failures.md`.", "",
           "## Harm per system and tier", "",
           "Runs with each kind of harm (a run may have several): money = a duplicate or "
           "conflicting refund applied; authority = a request sent under a revoked lease or a "
           "stale premise; dishonest = a receipt the target contradicts; unresolved = a job or "
           "effect left without an outcome; protocol = a kernel run the invariants or the "
           "spec reject (tier-3 resend, self-race, not a spec step).", ""]
    head = ["system", "tier", "runs", "failing", "rate", *HARM, "ambiguous", "world_race",
            "caught by"]
    out += [report._row(head), report._row(["---"] * len(head))]
    for name, row in s["table"].items():
        system, tier = name.split("/")
        caught = ", ".join(f"{k} {v}" for k, v in row["caught_by"].items()) or "-"
        out.append(report._row([system, tier, str(row["runs"]), str(row["failures"]),
                                f"{row['rate']:.2%}", *[str(row["harm"][h]) for h in HARM],
                                str(row["ambiguous"]), str(row["world_race"]), caught]))
    out += ["", "## Violations per system and tier", ""]
    head = ["system", "tier", *VIOLATIONS]
    out += [report._row(head), report._row(["---"] * len(head))]
    for name, row in s["table"].items():
        out.append(report._row([*name.split("/"), *[str(row["violations"][v])
                                                     for v in VIOLATIONS]]))
    out += ["", "## Time to resolution (ms of simulated time)", "",
            "From each job's submission until its caller can know the outcome, the same for "
            "every system; a run's time is its slowest job. Non-failing and failing runs "
            "apart. Times of 1 s and more are kept to three significant digits.", ""]
    head = ["system", "tier", "ok runs", "ok median/p90/max", "failing runs",
            "failing median/p90/max"]
    out += [report._row(head), report._row(["---"] * len(head))]
    for name, row in s["table"].items():
        r = row["resolution_ms"]
        out.append(report._row([*name.split("/"),
                                *[x for v in ("ok", "failing") for x in
                                  (str(r[v]["runs"]),
                                   f"{r[v]['median']}/{r[v]['p90']}/{r[v]['max']}")]]))
    out += ["", "## Failing runs by fault kind (took effect)", "",
            "A run counts for a fault kind only when that fault took effect in it; a run "
            "usually combines several.", ""]
    head = ["fault kind", *[f"{x} failing / took effect" for x in SYSTEM_NAMES]]
    out += [report._row(head), report._row(["---"] * len(head))]
    for kind, info in s["kinds"].items():
        out.append(report._row([kind] + [f"{info['failing_runs'].get(x, 0)} / "
                                         f"{info['took_effect_runs'].get(x, 0)}"
                                         for x in SYSTEM_NAMES]))
    return "\n".join(out)
