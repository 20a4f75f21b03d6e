"""Benchmark the sweep: runs per second, wall time, and where a run's time goes.

How it works. ``python -m sim.bench`` times the sweep of ``--cases`` seeded cases (each
against every system at every tier) over ``--jobs`` processes, the same code path as
``run_all.py`` minus the writing (every kernel run judged by sim.judge: ground truth, the
invariants, trace validation against Kernel.tla), and prints wall time, runs per second
and the CPU time the workers used. ``--profile N`` also profiles N cases in this process
with cProfile and prints the top functions by own time and by cumulative time. Timing is
wall clock: nothing it measures feeds any result.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

from sim import sweep
from sim.parallel import Local, pool
from sim.world import Run


def events_per_run(cases: int) -> float:
    """Mean SimPy events processed per run, over a few cases (counted, not timed)."""
    counted = [0, 0]
    original = Run.run

    def counting(self: Run) -> Run:
        result = original(self)
        counted[0] += 1
        counted[1] += next(self.env._eid)
        return result

    Run.run = counting  # type: ignore[method-assign]
    try:
        for seed in range(cases):
            sweep.case(seed)
    finally:
        Run.run = original  # type: ignore[method-assign]
    return counted[1] / max(1, counted[0])


def bench(cases: int, jobs: int) -> dict[str, float]:
    from sim import cli

    cli.warm()  # the spec is compiled once, before the workers fork (as run_all.py does)
    cpu0 = os.times()
    start = time.perf_counter()
    with pool(jobs) as p:
        for _ in Local(p, jobs).map_chunks(sweep.chunk, sweep.tasks(0, cases)):
            pass
    wall = time.perf_counter() - start
    cpu1 = os.times()
    cpu = (cpu1.user - cpu0.user) + (cpu1.children_user - cpu0.children_user) + \
        (cpu1.system - cpu0.system) + (cpu1.children_system - cpu0.children_system)
    runs = cases * len(sweep.CELLS)
    return {"cases": cases, "runs": runs, "jobs": jobs, "wall_s": wall, "runs_per_s": runs / wall,
            "cpu_s": cpu, "cores_busy": cpu / wall}


def profile(cases: int, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for seed in range(cases):
        sweep.case(seed)
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.bench", description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=2_000, help="sweep cases (default 2000)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="processes (default: all cores)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="also profile N cases in-process (default: no profile)")
    p.add_argument("--top", type=int, default=25, help="functions shown per profile table")
    args = p.parse_args(argv)
    if args.cases < 1 or args.jobs < 1:
        print("sim.bench: error: --cases and --jobs must be at least 1", file=sys.stderr)
        return 2
    r = bench(args.cases, args.jobs)
    print(f"sweep: {r['cases']} cases x {len(sweep.CELLS)} system/tier cells = {r['runs']} runs, "
          f"{r['jobs']} jobs: {r['wall_s']:.2f} s wall, {r['runs_per_s']:.0f} runs/s, "
          f"{r['cpu_s']:.2f} s CPU ({r['cores_busy']:.2f} cores busy)")
    print(f"SimPy events per run (first 50 cases): {events_per_run(min(50, args.cases)):.1f}")
    if args.profile:
        print(profile(args.profile, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
