"""Gate throughput: effects/s end to end with fsync, 1, 2 and 4 workers, JSONL and SQLite.

How it works. For each disk folder, backend and worker count, forked workers share one
journal and each submits ``--effects`` effects (distinct ids) through ``gate.Gate`` to an
in-process target that acknowledges at once, so the figures are the gate's own cost: kernel
steps, the lock or transaction, the conditional append and the fsyncs. Reported per setting:
effects/s over the wall time of the slowest worker, the share of the workers' time spent
syncing (measured around os.fsync and os.fdatasync for JSONL; for SQLite, whose fsyncs happen
inside the library, estimated as 1 - t(synchronous=OFF) / t(FULL) on one worker), and the CPU
seconds (user + system) per effect. A script, not a test:

    python3 tests/bench/bench_gate.py [--effects 200] [--dirs /tmp /work/...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import kernel  # noqa: E402
from gate import Gate, SqliteJournal, open_journal  # noqa: E402

CAPS = kernel.Capabilities(dedupes=False, queryable=True)
TIMING = kernel.Timing(send_timeout=1_000, settle_margin=100)


class Instant:
    capabilities = CAPS

    def apply(self, key: str, payload: Any, deadline: int) -> bool:
        return True

    def lookup(self, effect_id: str) -> bool:
        return False

    def facts(self, effect_id: str) -> dict[str, Any]:
        return {}


def worker(path: Path, w: int, n: int, sync_off: bool, report: int) -> None:
    spent = [0.0]

    def timer(real: Any) -> Any:
        def timed(fd: Any) -> None:
            t = time.perf_counter()
            real(fd)
            spent[0] += time.perf_counter() - t
        return timed
    os.fsync, os.fdatasync = timer(os.fsync), timer(os.fdatasync)
    if sync_off:
        SqliteJournal._synchronous = lambda self, mode: self.db.execute(  # type: ignore
            "PRAGMA synchronous=OFF")
    gate = Gate(open_journal(path), Instant(), lambda i: kernel.Lease(i, 2**52))
    start, cpu = time.perf_counter(), os.times()
    for i in range(n):
        gate.submit(kernel.Proposal(payload={"w": w, "i": i}, premises={}, lease="L",
                                    capabilities=CAPS, timing=TIMING))
    elapsed, end = time.perf_counter() - start, os.times()
    used = end.user + end.system - cpu.user - cpu.system
    os.write(report, f"{elapsed} {spent[0]} {used}\n".encode())
    os._exit(0)


def run(folder: Path, backend: str, workers: int, n: int, sync_off: bool = False
        ) -> tuple[float, float, float]:
    """(effects/s, fsync share, CPU s per effect) for one setting."""
    work = Path(tempfile.mkdtemp(dir=folder, prefix="bench-gate-"))
    path = work / ("j.db" if backend == "sqlite" else "j.jsonl")
    open_journal(path).close()
    read, write = os.pipe()
    pids = []
    for w in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(read)
            worker(path, w, n, sync_off, write)
        pids.append(pid)
    os.close(write)
    for pid in pids:
        os.waitpid(pid, 0)
    rows = [list(map(float, line.split())) for line in os.read(read, 65536).decode().split("\n")
            if line]
    os.close(read)
    shutil.rmtree(work)
    wall = max(r[0] for r in rows)
    return (workers * n / wall, sum(r[1] for r in rows) / sum(r[0] for r in rows),
            sum(r[2] for r in rows) / (workers * n))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--effects", type=int, default=200, help="effects per worker")
    parser.add_argument("--dirs", nargs="+", default=[tempfile.gettempdir(),
                                                       str(Path(__file__).resolve().parents[2])])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    print(f"effects per worker {args.effects}; workers {args.workers}; dirs {args.dirs}")
    print("| disk | backend | workers | effects/s | fsync share | CPU ms/effect |")
    print("|---|---|---|---|---|---|")
    for folder in map(Path, args.dirs):
        for backend in ("jsonl", "sqlite"):
            for workers in args.workers:
                rate, share, cpu = run(folder, backend, workers, args.effects)
                if backend == "sqlite":
                    fast = run(folder, backend, 1, args.effects, sync_off=True)[0]
                    one = rate if workers == 1 else run(folder, backend, 1, args.effects)[0]
                    share = max(0.0, 1 - one / fast)
                print(f"| {folder} | {backend} | {workers} | {rate:,.0f} | {share:.2f} | "
                      f"{cpu * 1000:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
