"""Benchmarks of the checker: CPU seconds per model, against TLC's recorded time.

    python -m spec.checker.bench [--suite DIR] [--workers 1 2] [--runs 3]
    python -m spec.checker.bench --examples DIR [--models TEXT ...] [--cpu S] [--json OUT]
    python -m spec.checker.bench --project [--models TEXT ...] [--json OUT]
    python -m spec.checker.bench --compare BEFORE.json AFTER.json

Every run is a fresh `python -m spec.checker --json` subprocess (interpreter start
included, as TLC's figure includes the JVM's). The default mode runs the shared
suite's Bench.tla and reports the median wall time, distinct states per second,
the ratio to TLC's single-worker time and the peak memory per stored state.
`--examples` runs the tlaplus/Examples models whose config path contains one of
`--models` (all of examples_run's selection without it) and prints, per model,
the child's CPU seconds (user + system: the figure that survives a shared,
loaded machine), TLC's recorded runtime, their ratio and the distinct-state
count; `--project` does the same for spec/manifest.json's configs against their
recorded seconds. `--compare` prints two such JSON files side by side.
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
PINNED = {**os.environ, "PYTHONHASHSEED": "0"}  # else the CLI runs itself again, pinned
TINY = "---- MODULE Tiny ----\nVARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n"


def run_once(spec, cfg, workers):
    """(wall seconds, parsed JSON, child max RSS in bytes, CPU seconds) of one checker run."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0 = usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, sys.executable, "-m",
                           "spec.checker", str(spec), "-config", str(cfg), "--json",
                           "--workers", str(workers)],
                          capture_output=True, text=True, cwd=REPO, env=PINNED)
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


def suite_bench(args):
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


def wanted(name, models):
    return not models or any(m in name for m in models)


def examples_models(root, models):
    """[(name, spec, cfg, TLC seconds, TLC distinct states or None)]."""
    from .examples_run import runtime_seconds, select
    out = []
    for spec, cfg, model in select(root, 60):
        name = str(cfg.relative_to(root / "specifications"))
        if wanted(name, models):
            out.append((name, spec, cfg, runtime_seconds(model["runtime"]),
                        model.get("distinctStates")))
    return out


def project_models(models):
    out = []
    for e in json.loads((REPO / "spec" / "manifest.json").read_text()):
        if wanted(e["cfg"], models):
            out.append((e["cfg"], REPO / "spec" / e["spec"], REPO / "spec" / e["cfg"],
                        e.get("seconds"), e.get("distinct_states")))
    return out


def cpu_rows(chosen, cpu_cap):
    from .examples_run import run_one
    rows = []
    print(f"load average before: {load_average():.2f}; times are the child's CPU seconds")
    for name, spec, cfg, ref, ref_states in chosen:
        got, secs, failure = run_one(spec, cfg, cpu_cap * 30 + 600, cpu_cap)
        states = got.get("distinct_states") if got else None
        result = got.get("result") if got else failure
        ratio = secs / ref if ref else float("nan")
        print(f"{secs:8.2f} s  ref {ref!s:>6}  ratio {ratio:5.2f}  states {states} "
              f"(ref {ref_states})  {result}  {name}", flush=True)
        rows.append({"model": name, "cpu": round(secs, 2), "ref_seconds": ref,
                     "states": states, "ref_states": ref_states, "result": result})
    return rows


def compare(before_path, after_path):
    before = {r["model"]: r for r in json.loads(Path(before_path).read_text())}
    print(f"{'model':60} {'before':>8} {'after':>8} {'ref':>6} {'after/ref':>9}  states")
    for r in json.loads(Path(after_path).read_text()):
        b = before.get(r["model"], {})
        ref = r.get("ref_seconds")
        ratio = f"{r['cpu'] / ref:9.2f}" if ref else " " * 9
        same = "same" if b.get("states") == r["states"] else f"{b.get('states')} -> {r['states']}"
        print(f"{r['model'][:60]:60} {b.get('cpu', float('nan')):8.2f} {r['cpu']:8.2f} "
              f"{ref!s:>6} {ratio}  {same}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--examples", default="", help="a tlaplus/Examples checkout")
    ap.add_argument("--project", action="store_true", help="spec/manifest.json's configs")
    ap.add_argument("--models", nargs="*", default=[], help="config path substrings")
    ap.add_argument("--cpu", type=float, default=60.0, help="CPU seconds cap per model")
    ap.add_argument("--json", default="")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    if not (args.examples or args.project):
        suite_bench(args)
        return 0
    if args.examples and not (Path(args.examples) / "specifications").is_dir():
        print(f"error: {args.examples} has no specifications/ folder", file=sys.stderr)
        return 2
    chosen = (examples_models(Path(args.examples).resolve(), args.models) if args.examples
              else project_models(args.models))
    rows = cpu_rows(chosen, args.cpu)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
