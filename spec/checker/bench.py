"""Benchmark: run the checker on Bench.tla and compare with TLC's recorded wall time.

    python -m spec.checker.bench [--suite DIR] [--workers 1 2] [--runs 3]

Each run is a fresh `python -m spec.checker --json` subprocess (interpreter
start included, as TLC's figure includes the JVM's). Reports the median wall
time, distinct states per second, the ratio to TLC's single-worker time and
the peak memory per stored state (peak RSS of the largest checker process
minus that of the same command on a one-state model, divided by the
distinct states; with several workers each process holds part of the states).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = REPO.parent / "shared" / "tla-conformance"
# Runs the checker as its own child, then prints the largest child's peak RSS (KiB).
PEAK_WRAPPER = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")
TINY = "---- MODULE Tiny ----\nVARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n"


def run_once(spec, cfg, workers):
    """(wall seconds, parsed JSON, child max RSS in bytes, CPU seconds) of one checker run."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0 = usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, sys.executable, "-m",
                           "spec.checker", str(spec), "-config", str(cfg), "--json",
                           "--workers", str(workers)],
                          capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    return wall, out, peak_kib * 1024, cpu


def baseline_rss():
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "Tiny.tla"
        spec.write_text(TINY)
        (Path(tmp) / "Tiny.cfg").write_text("INIT Init\nNEXT Next\n")
        return run_once(spec, Path(tmp) / "Tiny.cfg", 1)[2]


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    suite = Path(args.suite)
    entry = next(e for e in json.loads((suite / "manifest.json").read_text())
                 if e.get("benchmark"))
    spec, cfg = suite / entry["spec"], suite / entry["cfg"]
    tlc_w1 = entry["tlc_seconds_w1"]
    base = baseline_rss()
    print(f"machine: {os.cpu_count()} cores; TLC: {tlc_w1:.2f} s (1 worker), "
          f"{entry.get('tlc_seconds_w2', float('nan')):.2f} s (2 workers)")
    print(f"load average before: {load_average():.2f} (other processes share the cores)")
    for workers in args.workers:
        walls, cpus = [], []
        for _ in range(args.runs):
            wall, out, rss, cpu = run_once(spec, cfg, workers)
            walls.append(wall)
            cpus.append(cpu)
            ok = (out["distinct_states"], out["depth"]) == (entry["distinct_states"],
                                                            entry["depth"])
        wall = statistics.median(walls)
        distinct = out["distinct_states"]
        per_state = (rss - base) / max(distinct, 1)
        print(f"workers={workers}: wall {wall:.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)})"
              f", {distinct / wall:,.0f} distinct states/s, ratio to TLC w1 {wall / tlc_w1:.2f}, "
              f"~{per_state:.0f} bytes/state (peak RSS {rss / 2**20:.0f} MiB), "
              f"CPU {statistics.median(cpus):.2f} s, counts {'match' if ok else 'MISMATCH'}")


if __name__ == "__main__":
    main()
