"""A progress line for long sweeps: cases done, rate, ETA, violations so far, memory.

How it works. ``Progress`` is called after every record; at most every ``every`` seconds of
wall time it prints one line: cases done, cases per second, the ETA, the kernel's failing
runs and all failing runs so far, and the resident memory of this process and its worker
processes (read from /proc; omitted where there is none). It reads the wall clock, and
nothing it measures feeds any result (the records and their digest depend only on the
seeds).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from typing import Any


class Progress:
    def __init__(self, total: int, say: Callable[[str], None], every: float = 5.0) -> None:
        self.total, self.say, self.every = total, say, every
        self.start = self.last = time.monotonic()

    def __call__(self, summary: Any) -> None:
        now = time.monotonic()
        if now - self.last < self.every and summary.cases < self.total:
            return
        self.last = now
        done = summary.cases
        rate = done / max(1e-9, now - self.start)
        eta = (self.total - done) / rate if rate else 0.0
        kernel = sum(row["failures"] for name, row in summary.table.items()
                     if name.startswith("kernel/"))
        memory = rss()
        self.say(f"      {done}/{self.total} cases ({100 * done / max(1, self.total):.1f}%), "
                 f"{rate:.0f} cases/s, ETA {eta / 60:.1f} min, kernel violations {kernel}, "
                 f"failing runs {summary.failing_runs}"
                 + (f", RSS {memory[0]:.0f} MB ({memory[1]} processes)" if memory else ""))


def rss() -> tuple[float, int] | None:
    """Resident memory (MB) of this process and its live child processes, and how many
    processes that is; None where /proc cannot tell."""
    pages, count = 0, 0
    for pid in [os.getpid(), *(p.pid for p in multiprocessing.active_children())]:
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as f:
                pages += int(f.read().split()[1])
            count += 1
        except (OSError, ValueError, IndexError):
            continue  # a worker that just exited, or no /proc here
    if not count:
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20, count
