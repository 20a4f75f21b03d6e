"""The SimPy environment a run lives in, with its hot paths made cheap; same events, same order.

How it works. ``Clock`` is a ``simpy.Environment`` whose ``run(until=T)`` pops the queue in
one loop of its own (SimPy's order: time, then priority, then the order of scheduling) and
stops at T as SimPy does, before any event due at T. Two kinds of queue entry are the
world's own: a call (a plain tuple of a function and its arguments, called when due: a
message arriving, a timer) and the end of a ``Task``. A ``Task`` is a process of one worker:
it does not start if its worker died before it began, it ends quietly when interrupted (the
crash), and when nobody waits for it, its end is not queued at all (SimPy queues it and then
finds nothing to call: the order of every other event is the same either way). A failed task
is still queued, so the error stops the run as in SimPy. The clock keeps no reference to
itself (SimPy's bound helpers do), so a finished run is freed without the cycle collector.

A run that handles ``SAME_INSTANT`` events without its time moving is stuck in a livelock
(a worker told to wait until a time that has already come, over and over): ``run`` raises
``Livelock`` instead of spinning forever, and the world records it as the run's error.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.events import NORMAL, URGENT, Event, Process, Timeout

SAME_INSTANT = 10_000  # events at one instant beyond which a run is a livelock


class Livelock(RuntimeError):
    """Time stopped moving: SAME_INSTANT events were handled at one instant."""


class Clock(simpy.Environment):
    def __init__(self) -> None:  # not SimPy's: its bound helpers would refer back to the clock
        self._now = 0
        self._queue: list[tuple[Any, int, int, Any]] = []
        self._eid = itertools.count()
        self._active_proc = None

    def timeout(self, delay: Any = 0, value: Any = None) -> Timeout:
        return Timeout(self, delay, value)

    def event(self) -> Event:
        return Event(self)

    def process(self, generator: Generator[Any, Any, Any]) -> Process:
        return Process(self, generator)

    def call(self, delay: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """``fn(*args)`` in ``delay`` ms, ordered as a SimPy timeout scheduled now."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), (fn, args)))

    def run(self, until: Any = None) -> Any:
        if type(until) is not int:
            return super().run(until)
        if until <= self._now:
            raise ValueError(f"until ({until}) must be greater than the current time")
        stop = Event(self)
        self.schedule(stop, URGENT, until - self._now)
        queue, last, same = self._queue, -1, 0
        while True:
            now, _, _, event = heappop(queue)  # never empty: the stop is in it
            if now != last:
                self._now, last, same = now, now, 0
            else:
                same += 1
                if same > SAME_INSTANT:
                    raise Livelock(f"time stopped at {now} ms: {SAME_INSTANT:,} events at "
                                   f"that instant (a worker waits for a time already come)")
            if type(event) is tuple:  # a call
                event[0](*event[1])
                continue
            if event is stop:
                return None
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):
                raise _copy(event._value)


def _copy(exc: BaseException) -> BaseException:
    """A fresh copy of a failure (each receiver gets its own traceback), caused by it."""
    out = type(exc)(*exc.args)
    out.__cause__ = exc
    return out


class Task(Process):
    """One worker's process (see the module's docstring); ``worker.alive`` says if it may
    start."""

    def __init__(self, env: Clock, generator: Generator[Any, Any, Any], worker: Any) -> None:
        super().__init__(env, generator)
        self._worker = worker
        self._started = False

    def _resume(self, event: Event) -> None:
        env = self.env
        env._active_proc = self
        gen = self._generator
        if not self._started:
            self._started = True
            if not self._worker.alive:
                self._end(True, None)
                return
        while True:
            try:
                if event._ok:
                    event = gen.send(event._value)
                else:
                    event._defused = True
                    event = gen.throw(_copy(event._value))
            except StopIteration as done:
                self._end(True, done.value)
                return
            except simpy.Interrupt:  # the worker crashed: the task ends here
                self._end(True, None)
                return
            except BaseException as exc:  # noqa: BLE001 - handed to the clock, as SimPy does
                self._end(False, exc)
                return
            try:
                callbacks = event.callbacks
            except AttributeError:
                raise RuntimeError(f"a task yielded {event!r}, not an event") from None
            if callbacks is not None:  # not yet happened: wait for it
                callbacks.append(self._resume)
                self._target = event
                env._active_proc = None
                return

    def _end(self, ok: bool, value: Any) -> None:
        self._ok, self._value = ok, value
        self._target = None  # type: ignore[assignment]
        self.env._active_proc = None
        if ok and not self.callbacks:
            self.callbacks = None  # type: ignore[assignment]  # nobody waits: nothing to queue
        else:
            self.env.schedule(self)

