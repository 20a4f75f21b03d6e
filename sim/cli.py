"""``python run_all.py``: regenerate every table, plot and trace under results/ from nothing.

How it works. The seed and knobs are printed first. Then, in order: the fixed fault table
(every catalogue row x system x tier, one traced run each, written with its traces); the
sweep (``--cases`` seeded random plans, each against every system at every tier, spread over
``--jobs`` processes and merged in seed order); the shrinker (Hypothesis, derandomized: the
smallest failing story of each baseline, and none for the kernel); the plots. Output bytes
depend only on the seeds and knobs. ``--replay SEED --system S --tier T`` re-runs one sweep
case alone and prints its full timeline; ``--fault NAME`` does the same for a catalogue row.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from faults.plans import CATALOGUE, WORLDS, FaultPlan
from faults.systems import SYSTEM_NAMES
from sim import fixed, parallel, report, trace
from sim.tiers import TIER_NAMES

DEFAULT_CASES = 2_000
VIEWER_MAX_CASES = 100_000  # the viewer loads every case into the page: not for huge sweeps
DEFAULT_SEED = 0


class UsageError(Exception):
    """A bad argument: printed as one line, no traceback."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run_all.py",
        description="Regenerate results/ from nothing: the fixed fault table (DESIGN.md "
                    "section 6) for every system at every tier, a seeded sweep of random "
                    "fault plans, the smallest failing story of each baseline, plots, and "
                    "the traces the viewer reads. Same seeds, same bytes.",
        epilog="Systems: " + ", ".join(SYSTEM_NAMES) + ". Tiers: t1 (dedupes + lookup, "
               "Stripe-like), t1d (dedupes only), t2 (lookup only, lagging), t3 (neither). "
               "Replay a failing sweep case: run_all.py --replay SEED --system naive --tier "
               "t2. Replay a catalogue row: run_all.py --fault 'crash before ack' --system "
               "kernel --tier t3.")
    p.add_argument("--cases", type=int, default=DEFAULT_CASES,
                   help=f"sweep cases, each run against every system and tier "
                        f"(default {DEFAULT_CASES})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help="first sweep seed; case i uses seed SEED+i (default 0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores)")
    p.add_argument("--executor", choices=("serial", "pool", "dask"), default="pool",
                   help="how the sweep runs its seed ranges: in this process, a process pool "
                        "of --jobs (default), or Dask (needs dask[distributed])")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: a running scheduler (default: a local cluster "
                        "of --jobs workers)")
    p.add_argument("--mutants", action="store_true",
                   help="run the sweep against each planted kernel bug (sim/mutants.py) and "
                        "report the first failing seed, failing runs and which judge caught it")
    p.add_argument("--mutant-cases", type=int, default=500, metavar="N",
                   help="with --mutants: cases per planted bug (default 500)")
    p.add_argument("--coding", action="store_true",
                   help="the coding-agents target (sim.coding): its 13-row table for every "
                        "system, simulated and on real repositories with real pytest runs, a "
                        "--cases sweep and the G1-G8 table, into OUT/coding/")
    p.add_argument("--world", choices=WORLDS,
                   help="with --replay: the assumption-breaking world the case ran in "
                        "(results/assumptions.md)")
    p.add_argument("--out", default="results", help="output directory (default results)")
    p.add_argument("--viewer-out", metavar="FILE",
                   help="where to write the viewer's traces.js (default: viewer/traces.js "
                        "with the default --out, else OUT/viewer/traces.js)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    p.add_argument("--no-shrink", action="store_true", help="skip the Hypothesis shrinker")
    p.add_argument("--replay", type=int, metavar="SEED",
                   help="re-run one sweep case and print its timeline (needs --system, --tier)")
    p.add_argument("--fault", metavar="NAME",
                   help="re-run one catalogue row and print its timeline (needs --system, "
                        "--tier)")
    p.add_argument("--plan", metavar="JSON",
                   help="run one fault plan given as JSON (fields of faults.plans.FaultPlan, "
                        "e.g. '{\"duplicate_submits\": 1}') with --seed and print its timeline "
                        "(needs --system, --tier)")
    p.add_argument("--system", help="system to replay: " + ", ".join(SYSTEM_NAMES))
    p.add_argument("--tier", help="tier to replay: " + ", ".join(TIER_NAMES))
    p.add_argument("--json", action="store_true", help="with --replay/--fault: print the "
                                                       "trace as JSON instead of text")
    return p


def check(args: argparse.Namespace) -> None:
    if args.cases < 0:
        raise UsageError(f"--cases must be 0 or more, not {args.cases}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    if args.mutant_cases < 1:
        raise UsageError(f"--mutant-cases must be at least 1, not {args.mutant_cases}")
    chosen = [f for f in ("replay", "fault", "plan") if getattr(args, f) is not None]
    if len(chosen) > 1:
        raise UsageError("give only one of --replay SEED, --fault NAME, --plan JSON")
    if chosen:
        if args.system not in SYSTEM_NAMES:
            raise UsageError(f"--system must be one of {', '.join(SYSTEM_NAMES)} "
                             f"(got {args.system!r})")
        if args.tier not in TIER_NAMES:
            raise UsageError(f"--tier must be one of {', '.join(TIER_NAMES)} "
                             f"(got {args.tier!r})")
    if args.fault is not None and args.fault not in CATALOGUE:
        raise UsageError(f"unknown fault {args.fault!r}; known: {', '.join(CATALOGUE)}")


def parse_plan(text: str) -> FaultPlan:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--plan is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError("--plan must be a JSON object of FaultPlan fields")
    data.setdefault("name", "given plan")
    try:
        return FaultPlan.from_json(data)
    except ValueError as exc:
        raise UsageError(f"--plan: {exc}") from None


def replay(args: argparse.Namespace) -> int:
    from sim import sweep

    if args.fault is not None:
        doc = fixed.run_cell((args.fault, args.system, args.tier))
    elif args.plan is not None:
        doc = sweep.replay_plan(parse_plan(args.plan), args.seed, args.system, args.tier)
    else:
        doc = sweep.replay(args.replay, args.system, args.tier, args.world)
    print(trace.dumps(doc) if args.json else trace.timeline(doc), end="" if args.json else "\n")
    return 0 if doc["verdict"] == "ok" else 1


def say(msg: str) -> None:
    print(msg, flush=True)


def warm() -> None:
    """Compile the spec once, here, before any worker forks (each tier's model); then move
    everything made so far (modules, the compiled spec) out of the cycle collector's reach:
    its full collections no longer walk it, and a forked worker no longer copies the pages
    they would touch."""
    from sim import judge
    from sim.tiers import TIERS, TIMING

    judge.warm(TIERS.values(), TIMING)
    gc.freeze()


def shared_cap(args: argparse.Namespace, out: Path) -> int:
    """Two bots, one $30 cap (sim.sharedcap): 1 if the kernel let the cap break."""
    from sim import sharedcap
    cases = 300
    doc = sharedcap.write(out, args.seed, cases)
    held = doc["sweep_held"]
    say("      shared cap (results/sharedcap.md), held in runs of " + str(cases) + ": "
        + ", ".join(f"{name} {n}" for name, n in held.items()))
    kernel_ok = held["kernel"] == cases and all(
        r["held"] for r in doc["fixed"] if r["system"] == "kernel")
    return 0 if kernel_ok else 1


def generate(args: argparse.Namespace) -> int:
    out = Path(args.out)
    warm()
    say(f"run_all: seed={args.seed} cases={args.cases} jobs={args.jobs} out={args.out} "
        f"systems={','.join(SYSTEM_NAMES)} tiers={','.join(TIER_NAMES)} "
        f"faults={len(CATALOGUE)} fixed_seed={fixed.FIXED_SEED}")
    out.mkdir(parents=True, exist_ok=True)
    report.clean(out)
    report.write_text(out / "README.md", report.INDEX)
    with parallel.pool(args.jobs) as pool:
        say(f"[1/5] fixed table: {len(fixed.cells())} runs")
        docs = parallel.map_ordered(pool, fixed.run_cell, fixed.cells())
        rows = [fixed.row(d) for d in docs]
        report.write_traces(out, docs)
        report.write_json(out / "fixed_table.json", {"seed": fixed.FIXED_SEED, "rows": rows})
        report.write_text(out / "fixed_table.md", report.fixed_markdown(rows))
        bad = [r for r in rows if r["matches_reference"] is False]
        say(f"      {len(rows)} cells, {len(bad)} differ from the reference")
        for r in bad:
            say(f"      differs: {r['id']} -> python run_all.py --fault '{r['fault']}' "
                f"--system {r['system']} --tier {r['tier']}")
        broken = [r for r in rows if r["system"] == "kernel" and
                  (r["verdict"] != "ok" or r["spec_valid"] is False)]
        for r in broken:
            say(f"      KERNEL {r['verdict']} {r['reasons']} spec_valid={r['spec_valid']}: "
                f"python run_all.py --fault '{r['fault']}' --system kernel --tier {r['tier']}")
        status = stages(args, out, pool, rows) or int(bool(bad or broken))
    status = shared_cap(args, out) or status
    if args.cases > VIEWER_MAX_CASES:
        say(f"[5/5] viewer data skipped: {args.cases} cases is more than the viewer can load "
            f"({VIEWER_MAX_CASES})")
    else:
        status = write_viewer_data(args, out) or status
    say(f"done: results in {args.out}/ (exit {status})")
    return status


def write_viewer_data(args: argparse.Namespace, out: Path) -> int:
    """The viewer's data files, built from the results just written."""
    from viewer import build

    repo = Path(__file__).resolve().parents[1]
    default = repo / "viewer" / "traces.js" if out.resolve() == (repo / "results").resolve() \
        else out / "viewer" / "traces.js"
    target = Path(args.viewer_out) if args.viewer_out else default
    say(f"[5/5] viewer data: {target}")
    return build.main(out, target)


def stages(args: argparse.Namespace, out: Path, pool: Any, rows: list[dict[str, Any]]) -> int:
    """The sweep, the shrinker and the plots (filled in as they land)."""
    from sim import assumptions, coverage, plots, shrink, sweep
    from sim.progress import Progress

    say(f"[2/5] sweep: {args.cases} cases x {len(SYSTEM_NAMES)} systems x "
        f"{len(TIER_NAMES)} tiers, executor {args.executor}")
    progress = Progress(args.cases, say)
    if args.executor == "dask":
        with parallel.executor("dask", args.jobs, args.scheduler) as ex:
            summary = sweep.run(ex, args.seed, args.cases, out, say, progress)
    else:
        ex = parallel.Local(pool, 1 if args.executor == "serial" else args.jobs)
        summary = sweep.run(ex, args.seed, args.cases, out, say, progress)
    for miss in coverage.misses(summary["coverage"]):
        say(f"      coverage floor missed: {miss}")
    say("      assumption-breaking worlds (kernel only)")
    assumptions.run(parallel.Local(pool, args.jobs), out, say,
                    min(assumptions.CASES, args.cases))
    stories = None
    if not args.no_shrink:
        say("[3/5] shrinker: smallest failing story per system")
        stories = shrink.run(pool, out, say)
    if not args.no_plots:
        say("[4/5] plots")
        plots.write(out, rows, summary)
    kernel_bad = summary["kernel_failures"] + (stories or {}).get("kernel_found", 0)
    return 1 if kernel_bad else 0


def main(argv: list[str] | None = None, open_repo: Any = None) -> int:
    """``open_repo``: the real repository target for ``--coding`` (run_all.py hands in
    ``gate.repo.Repo``; sim/ may not import gate/)."""
    args = parser().parse_args(argv)
    try:
        check(args)
        if args.replay is not None or args.fault is not None or args.plan is not None:
            return replay(args)
        if args.mutants:
            from sim import mutants
            return mutants.main(args, say)
        if args.coding:
            from sim.coding.__main__ import main as coding
            return coding(["--out", str(Path(args.out) / "coding"), "--cases", str(args.cases),
                           "--seed", str(args.seed), "--jobs", str(args.jobs), "--real"],
                          open_repo) or 0
        return generate(args)
    except UsageError as exc:
        print(f"run_all.py: error: {exc}", file=sys.stderr)
        return 2
    except parallel.Unavailable as exc:
        print(f"run_all.py: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("run_all.py: interrupted", file=sys.stderr)
        return 130
