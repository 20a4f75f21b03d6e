"""Shared fakes for the gate tests: a clock that sleeps instantly, a target with a ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

import kernel
from gate import Gate, JsonlJournal

CAPS = {2: kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=10),
        3: kernel.Capabilities(dedupes=False, queryable=False)}
TIMING = kernel.Timing(send_timeout=50, settle_margin=20, dedup_margin=100)


class Clock:
    def __init__(self) -> None:
        self.t = 1_000
        self.slept: list[float] = []

    def __call__(self) -> int:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += int(seconds * 1000) + 1


class Crash(BaseException):
    """Raised by a probe: the worker dies at that point (nothing after it runs)."""


class Ledger:
    """A target that honours deadlines (a request after its deadline is dropped)."""

    def __init__(self, clock: Clock, tier: int = 2, during_send=None) -> None:
        self.clock, self.capabilities = clock, CAPS[tier]
        self.applied: list[str] = []
        self.closed: set[str] = set()
        self.during_send = during_send

    def apply(self, key, payload, deadline):
        if self.during_send:
            hook, self.during_send = self.during_send, None
            hook()
        if self.clock() > deadline:
            return False
        self.applied.append(key)
        return True

    def lookup(self, effect_id):
        return effect_id in self.applied

    def facts(self, effect_id):
        return {"open": effect_id not in self.closed}


def proposal(n: int, tier: int = 2, note: str = "plain") -> kernel.Proposal:
    return kernel.Proposal(payload={"order": n, "amount": 20, "note": note},
                           premises={"open": True}, lease="L", capabilities=CAPS[tier],
                           timing=TIMING, key={"order": n})


def make_gate(path: Path, target, clock, lease=None, probe=None) -> Gate:
    lease = lease or (lambda i: kernel.Lease(i, 10**12))
    return Gate(JsonlJournal(path) if path.suffix == ".jsonl" else path, target, lease,
                clock=clock, sleep=clock.sleep, probe=probe or (lambda point: None))


def dies_at(point: str, nth: int = 1):
    seen = []

    def probe(p: str) -> None:
        if p == point:
            seen.append(p)
            if len(seen) == nth:
                raise Crash(point)
    return probe


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Kit:
    """The helpers above, handed to tests as one fixture (tests/gate is not a package)."""

    Crash, Ledger, Clock = Crash, Ledger, Clock
    dies_at, make_gate, proposal = staticmethod(dies_at), staticmethod(make_gate), \
        staticmethod(proposal)


@pytest.fixture
def kit() -> type[Kit]:
    return Kit
