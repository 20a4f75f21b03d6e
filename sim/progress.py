"""A progress line for long sweeps: cases done, rate, ETA, kernel violations so far.

How it works. ``Progress`` is called after every record; at most every ``every`` seconds of
wall time it prints one line. It reads the wall clock, and nothing it measures feeds any
result (the records and their digest depend only on the seeds).
"""

from __future__ import annotations

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
        self.say(f"      {done}/{self.total} cases ({100 * done / max(1, self.total):.1f}%), "
                 f"{rate:.0f} cases/s, ETA {eta / 60:.1f} min, kernel violations {kernel}, "
                 f"failing runs {summary.failing_runs}")
