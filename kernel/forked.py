"""A second core for the oracle: one pure function of data this process already holds,
computed in a forked child while the parent does its own share of the work.

How it works. ``Forked(fn, *args)`` forks; the child computes ``fn(*args)``, writes its
pickle to a pipe and leaves with ``os._exit`` (nothing of the parent's runs twice: no atexit
handler, no buffered output). The parent reads the answer with ``result()``, which also reaps
the child. The answer never depends on the helper, only the time does: with no fork on this
system, or a child that fails, dies or answers only in part, ``result()`` computes
``fn(*args)`` in the parent. Use it as a context manager, so that a parent that stops early
(an exception, an anomaly found first) kills and reaps its child.

The pure modules never import this one: ``oracle.check`` takes it as its
``spawn`` argument. Forking a process that runs threads is unsafe in general (a lock held by
another thread stays held in the child), so callers pass it explicitly; the command line,
single-threaded, does (``--workers 2``).
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self.fn, self.args = fn, args
        self.pid: int | None = None
        self.fd = -1
        if not hasattr(os, "fork"):
            return
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: answer, then leave at once whatever happens
            code = 1
            try:
                os.close(read)
                data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self.pid, self.fd = pid, read

    def result(self) -> T:
        """The child's answer, or ``fn(*args)`` computed here if it has none."""
        if self.pid is not None:
            with os.fdopen(self.fd, "rb") as pipe:
                data = pipe.read()
            try:  # read while the child's memory is torn down; a cut pickle does not load
                answer, whole = pickle.loads(data), True
            except Exception:  # noqa: BLE001 - a partial answer: compute it here
                answer, whole = None, False
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            if whole and os.waitstatus_to_exitcode(status) == 0:
                return answer  # type: ignore[no-any-return]
        return self.fn(*self.args)

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pid is not None:  # the parent stopped before asking: stop the child
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            os.close(self.fd)
            self.pid = None
