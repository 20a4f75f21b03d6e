"""The long-run progress line shows rate, ETA, violations so far and resident memory."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from sim.progress import Progress, rss


def summary(cases: int, kernel_failures: int, failing: int) -> SimpleNamespace:
    table = {"kernel/t1": {"failures": kernel_failures}, "naive/t1": {"failures": failing}}
    return SimpleNamespace(cases=cases, table=table, failing_runs=failing + kernel_failures)


def test_the_line_has_rate_eta_violations_and_memory() -> None:
    lines: list[str] = []
    p = Progress(100, lines.append, every=0.0)
    p(summary(40, 2, 7))
    assert len(lines) == 1
    line = lines[0]
    assert "40/100 cases (40.0%)" in line and "cases/s" in line and "ETA" in line
    assert "kernel violations 2" in line and "failing runs 9" in line
    if sys.platform.startswith("linux"):
        assert "RSS" in line and "MB" in line


def test_quiet_between_ticks_but_always_at_the_end() -> None:
    lines: list[str] = []
    p = Progress(3, lines.append, every=3600.0)
    p(summary(1, 0, 0))
    p(summary(2, 0, 0))
    assert lines == []
    p(summary(3, 0, 0))
    assert len(lines) == 1 and "3/3 cases" in lines[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_rss_reads_this_process() -> None:
    memory = rss()
    assert memory is not None
    mb, processes = memory
    assert 5 < mb < 100_000 and processes >= 1
