"""Executors with a deterministic merge order: serial, a process pool, or Dask.

How it works. ``pool(jobs)`` gives a ``multiprocessing`` pool (fork where available) or, for
one job, a stand-in that maps in this process; ``map_ordered`` returns results in the order
of its inputs whatever the scheduling, so output bytes never depend on ``--jobs``. The sweep
streams through an executor's ``map_chunks(fn, tasks)``: each task is a seed range, and the
records come back one by one in seed order while later tasks are still running (at most
``window`` tasks are out at once, so memory stays flat). ``Dask`` submits the same tasks to a
``dask.distributed`` cluster: a local one by default, or the scheduler at ``address``.
Before forking, ``prepare`` runs once in the parent (the spec is compiled there, once).
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

RECYCLE = 200  # tasks per worker process before a fresh fork replaces it: whatever a worker
# caches (the spec's successor sets) cannot grow without bound over a million cases, and a
# fresh fork inherits the spec the parent compiled before the pool started.


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
    with ctx.Pool(jobs, maxtasksperchild=RECYCLE) as p:
        yield p
        p.close()
        p.join()


def map_ordered(p: Any, fn: Callable[[Any], Any], items: list[Any],
                chunksize: int | None = None) -> list[Any]:
    if chunksize is None:
        chunksize = max(1, len(items) // 64)
    return list(p.imap(fn, items, chunksize=chunksize))


class Unavailable(RuntimeError):
    """An optional executor whose package is not installed (a one-line error, no traceback)."""


class Local:
    """Serial or process-pool execution of seed-range tasks, records in seed order."""

    def __init__(self, p: Any, jobs: int) -> None:
        self.pool, self.jobs = p, jobs

    def map_chunks(self, fn: Callable[[Any], list[Any]], tasks: Iterable[Any]) -> Iterator[Any]:
        if self.jobs <= 1:
            for task in tasks:
                yield from fn(task)
            return
        pending: deque[Any] = deque()
        source = iter(tasks)
        for task in source:
            pending.append(self.pool.apply_async(fn, (task,)))
            if len(pending) >= 4 * self.jobs:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()


class Dask:
    """The same tasks on a dask.distributed cluster (local unless an address is given)."""

    def __init__(self, address: str | None = None, workers: int = 2,
                 window: int = 16) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise Unavailable("--executor dask needs dask[distributed]: pip install "
                               "'.[dask]'") from None
        self.cluster = None
        if address is None:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            address = self.cluster.scheduler_address
        self.client = Client(address)
        self.window = window

    def map_chunks(self, fn: Callable[[Any], list[Any]], tasks: Iterable[Any]) -> Iterator[Any]:
        pending: deque[Any] = deque()
        for task in tasks:
            pending.append(self.client.submit(fn, task, pure=False))
            if len(pending) >= self.window:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


@contextmanager
def executor(kind: str, jobs: int, address: str | None = None,
             prepare: Callable[[], None] | None = None) -> Iterator[Any]:
    """``serial``, ``pool`` (``jobs`` processes) or ``dask``; ``prepare`` runs first, here."""
    if prepare is not None:
        prepare()
    if kind == "dask":
        d = Dask(address, workers=jobs)
        try:
            yield d
        finally:
            d.close()
        return
    with pool(1 if kind == "serial" else jobs) as p:
        yield Local(p, 1 if kind == "serial" else jobs)
