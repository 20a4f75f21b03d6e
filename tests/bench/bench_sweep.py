"""Sweep benchmark (a script, not a test): ``python tests/bench/bench_sweep.py [--cases N]``.

Runs per CPU-second of the default sweep in one process, everything included: each case is
every system at every tier (16 runs), every kernel run judged by sim.judge (ground truth,
the independent invariants, trace validation against Kernel.tla), and the parent's share
(the record's JSON line, the streaming summary, the digest) folded in the same process, as
``run_all.py --jobs 1`` does minus the file writes. CPU seconds (``time.process_time``) are
measured, not wall time, so the figure holds on a machine loaded by other jobs; the 2-core
projection is twice it (the pool's workers share nothing; the parent's fold is counted).

``--baseline DIR`` also measures another checkout of the project (for example
``git archive main | tar -x -C /tmp/base``) in the same command, alternating rounds between
the two trees so both see the same load, prints the ratio of the medians, and checks that
both trees give the same digest of the records (an optimisation must not change a byte).
``--jobs 2`` adds a run of the process pool over the same cases: its wall clock (meaningful
only on an idle machine) and the CPU seconds of the parent and its workers together, so the
pool's own cost (forks, pickling, the parent's fold, each worker's cold caches) shows as runs
per CPU-second below the one-process figure even under load. ``--profile N`` profiles N
cases in this process (cProfile, top functions by own time). Each measured tree runs in a
fresh subprocess (``python -c``) with its own code on sys.path. This is the project's one
sweep benchmark (it replaces ``python -m sim.bench``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

# One measured round, run inside the tree under test (only APIs the sweep has long had).
ROUND = """
import json, sys, time
sys.path.insert(0, {root!r})
from sim import cli, sweep
cli.warm()
first, cases = {first}, {cases}
summary = sweep.Summary()
cpu0 = time.process_time()
for task in sweep.tasks(first, cases):
    for rec in sweep.chunk(task):
        summary.add(rec, sweep.line(rec))
cpu = time.process_time() - cpu0
print(json.dumps({{"cpu_s": cpu, "runs": cases * len(sweep.CELLS),
                  "digest": summary.digest.hexdigest()}}))
"""

POOL = """
import json, os, sys, time
sys.path.insert(0, {root!r})
from sim import cli, sweep
from sim.parallel import Local, pool
cli.warm()
summary = sweep.Summary()
t0, start = os.times(), time.perf_counter()
with pool({jobs}) as p:
    for rec in Local(p, {jobs}).map_chunks(sweep.chunk, sweep.tasks({first}, {cases})):
        summary.add(rec, sweep.line(rec))
wall, t1 = time.perf_counter() - start, os.times()
cpu = sum(b - a for a, b in zip(t0[:4], t1[:4]))  # user, system, children's user and system
print(json.dumps({{"wall_s": wall, "cpu_s": cpu, "runs": {cases} * len(sweep.CELLS),
                  "digest": summary.digest.hexdigest()}}))
"""


def measure(root: Path, code: str, **knobs: int) -> dict[str, float | str]:
    out = subprocess.run([sys.executable, "-c", code.format(root=str(root), **knobs)],
                         cwd=root, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench_sweep: the round in {root} failed:\n{out.stderr.strip()}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def profile(cases: int, first: int, top: int = 30) -> str:
    """cProfile of ``cases`` cases in this process (after the spec is compiled)."""
    sys.path.insert(0, str(HERE))
    from sim import cli, sweep

    cli.warm()
    prof = cProfile.Profile()
    prof.enable()
    for seed in range(first, first + cases):
        sweep.line(sweep.case(seed))
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=400, help="cases per round (default 400)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per tree (default 3)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                   help="another checkout, measured alternately in the same command")
    p.add_argument("--jobs", type=int, default=0, help="also time the pool with N processes")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="only profile N cases in this process (cProfile)")
    args = p.parse_args(argv)
    if args.cases < 1 or args.rounds < 1 or args.profile < 0 or args.jobs < 0:
        print("bench_sweep: error: --cases and --rounds must be at least 1, --jobs and "
              "--profile at least 0", file=sys.stderr)
        return 2
    if args.profile:
        print(profile(args.profile, args.first_seed))
        return 0
    if args.baseline is not None and not (args.baseline / "sim" / "sweep.py").is_file():
        print(f"bench_sweep: error: {args.baseline} is not a checkout of this project",
              file=sys.stderr)
        return 2
    trees = {"this tree": HERE} | ({"baseline": args.baseline} if args.baseline else {})
    rates: dict[str, list[float]] = {name: [] for name in trees}
    digests: dict[str, set[str]] = {name: set() for name in trees}
    print(f"sweep benchmark: {args.cases} cases (seeds {args.first_seed}..) x 16 runs, "
          f"{args.rounds} rounds per tree, load average {os.getloadavg()[0]:.2f}")
    for i in range(args.rounds):
        for name, root in trees.items():
            r = measure(root, ROUND, first=args.first_seed, cases=args.cases)
            rate = float(r["runs"]) / float(r["cpu_s"])
            rates[name].append(rate)
            digests[name].add(str(r["digest"]))
            print(f"  round {i + 1} {name:<10} {r['cpu_s']:.2f} CPU s, "
                  f"{rate:,.0f} runs per CPU-second")
    for name in trees:
        best = statistics.median(rates[name])
        print(f"{name:<10} median {best:,.0f} runs per CPU-second "
              f"(2 cores, projected: {2 * best:,.0f} runs/s); digest {sorted(digests[name])[0]}")
    status = 0
    if args.baseline is not None:
        ratio = statistics.median(rates["this tree"]) / statistics.median(rates["baseline"])
        print(f"ratio this tree / baseline: {ratio:.2f}")
        if digests["this tree"] != digests["baseline"] or len(digests["this tree"]) != 1:
            print("DIGESTS DIFFER: the two trees do not produce the same records", file=sys.stderr)
            status = 1
    if args.jobs:
        r = measure(HERE, POOL, first=args.first_seed, cases=args.cases, jobs=args.jobs)
        runs, cpu = float(r["runs"]), float(r["cpu_s"])
        one = statistics.median(rates["this tree"])
        print(f"pool of {args.jobs}: {r['wall_s']:.2f} s wall, "
              f"{runs / float(r['wall_s']):,.0f} runs/s (wall clock: depends on load); "
              f"{cpu:.2f} CPU s in all its processes, {runs / cpu:,.0f} runs per CPU-second "
              f"({runs / cpu / one:.2f} of one process)")
        if r["digest"] not in digests["this tree"]:
            print("DIGESTS DIFFER: the pool and one process give other records", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
