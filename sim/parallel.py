"""Process pool with a deterministic merge order.

How it works. ``pool(jobs)`` gives a ``multiprocessing`` pool (fork where available) or, for
one job, a stand-in that maps in this process. ``map_ordered`` returns results in the order
of its inputs whatever the scheduling, so output bytes never depend on ``--jobs``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any


class Inline:
    """A pool of one: runs in this process."""

    @staticmethod
    def imap(fn: Callable[[Any], Any], items: Iterable[Any], chunksize: int = 1) -> Iterator[Any]:
        return map(fn, items)


@contextmanager
def pool(jobs: int) -> Iterator[Any]:
    if jobs <= 1:
        yield Inline()
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ctx.Pool(jobs) as p:
        yield p
        p.close()
        p.join()


def map_ordered(p: Any, fn: Callable[[Any], Any], items: list[Any],
                chunksize: int | None = None) -> list[Any]:
    if chunksize is None:
        chunksize = max(1, len(items) // 64)
    return list(p.imap(fn, items, chunksize=chunksize))
