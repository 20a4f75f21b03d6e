"""The shared-cap refund scenario: two bots, one $30 cap, crashes before the send and after
the commit (issue 12, item 3). A plug-in of its own; it does not touch the main world.

How it works. Each run is a function of its seed: bot A refunds $20 on order 881 and bot B
$20 on order 882, both against one shared $30 refund cap; each bot starts at a random time,
and crashes either never, right after journaling its intent (before the send), or after the
target applied its refund (before the ack), then restarts after a random outage and
recovers. The target dedupes by idempotency key and can be looked up. Two systems:

- ``per_effect`` (the original gate): before sending, a refund checks its own amount plus
  what the target has already applied against the cap; a refund still in flight is
  invisible to the other bot's check;
- ``kernel``: each refund is a coordinated unit (budget "cap", cost 20, cap 30); admission
  reserves the cost against the budget in the same journal entry, folded from the one
  shared journal (``kernel.view.Folder``), and recovery rebuilds it from the journal.

A run holds the cap if the target applied at most $30. ``python -m sim.shared_cap [--seed
S] [--runs N]`` prints the seed first, then runs held per system.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from typing import Any

import simpy

import kernel

CAP, AMOUNT = 30, 20
CAPS = kernel.Capabilities(dedupes=True, queryable=True, dedup_window=600_000, lookup_lag=10)
TIMING = kernel.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
LEASE = kernel.Lease("bots", expires_at=10**9)
FACTS = {"approved": AMOUNT}
CRASHES = ("none", "before_send", "after_commit")


@dataclass
class World:
    env: simpy.Environment
    rng: random.Random
    applied: dict[str, int] = field(default_factory=dict)  # idempotency key -> amount
    entries: list[dict[str, Any]] = field(default_factory=list)
    folder: kernel.Folder = field(default_factory=kernel.Folder)
    chain: kernel.Chain = field(default_factory=kernel.Chain)

    def delay(self) -> int:
        return self.rng.randint(5, 60)

    def apply(self, key: str, amount: int) -> None:
        self.applied.setdefault(key, amount)  # the target dedupes by key

    def total(self) -> int:
        return sum(self.applied.values())


def per_effect(w: World, order: int, crash: str, outage: int) -> Any:
    """The original gate: the cap checked against this refund plus what already landed."""
    key = f"refund-{order}"
    for attempt in range(2):
        if w.total() + AMOUNT > CAP and key not in w.applied:
            return
        if crash == "before_send" and attempt == 0:
            yield w.env.timeout(outage)
            continue
        yield w.env.timeout(w.delay())
        w.apply(key, AMOUNT)
        if crash == "after_commit" and attempt == 0:
            yield w.env.timeout(outage)
            continue
        return


class KernelBot:
    """One bot driving the kernel on the shared journal (each step reads and appends it
    atomically: SimPy runs one process step at a time)."""

    def __init__(self, w: World, order: int) -> None:
        self.w, self.effects = w, kernel.Effects()
        c = kernel.Coordination(writes=(f"order-{order}",), budget="cap", cost=AMOUNT, cap=CAP)
        self.p = kernel.Proposal(payload={"order": order, "amount": AMOUNT}, premises=FACTS,
                                 lease="bots", capabilities=CAPS, timing=TIMING,
                                 key={"order": order}, coordination=c)

    def step(self, event: Any) -> tuple[kernel.Command, ...]:
        commands = self.effects.apply(event, self.p.effect_id)
        for c in commands:
            if isinstance(c, kernel.Append):
                entry = self.w.chain.seal(c.entry)[0]
                self.w.entries.append(entry)
                self.w.folder.add(entry)
        return commands

    def run(self, crash: str, outage: int) -> Any:
        w, now = self.w, lambda: int(self.w.env.now)
        self.step(kernel.Propose(now(), self.p))
        self.step(kernel.Authorize(now(), LEASE, FACTS, w.folder.view(), None, w.chain.seq))
        if self.state() is not kernel.State.AUTHORIZED:
            return
        sends = [c for c in self.step(kernel.Dispatch(now(), LEASE, FACTS, w.folder.view()))
                 if isinstance(c, kernel.Send)]
        if crash == "before_send":
            yield w.env.timeout(outage)
            yield from self.recover()
            return
        yield w.env.timeout(w.delay())
        w.apply(sends[0].idempotency_key, AMOUNT)
        if crash == "after_commit":
            yield w.env.timeout(outage)
            yield from self.recover()
            return
        yield w.env.timeout(w.delay())
        self.step(kernel.Ack(now(), sends[0].attempt))

    def state(self) -> kernel.State:
        return self.effects.by_id[self.p.effect_id].state

    def recover(self) -> Any:
        """A restarted bot: memory rebuilt from the journal, then Recover until final."""
        w = self.w
        self.effects = kernel.Effects(kernel.replay(w.entries))
        lookup = None
        while self.state() is kernel.State.DISPATCHED:
            event = kernel.Recover(int(w.env.now), LEASE, FACTS, lookup, w.folder.view())
            for c in self.step(event):
                if isinstance(c, kernel.WaitUntil):
                    yield w.env.timeout(c.time - int(w.env.now))
                elif isinstance(c, kernel.Query):
                    lookup = kernel.Lookup(c.effect_id in w.applied, int(w.env.now))
                elif isinstance(c, kernel.Send):
                    yield w.env.timeout(w.delay())
                    w.apply(c.idempotency_key, AMOUNT)
                    yield w.env.timeout(w.delay())
                    self.step(kernel.Ack(int(w.env.now), c.attempt))


def one_run(system: str, seed: int) -> int:
    """The amount the target applied in one run."""
    rng = random.Random(seed)
    w = World(simpy.Environment(), rng)
    for order in (881, 882):
        start, crash, outage = rng.randint(0, 100), rng.choice(CRASHES), rng.randint(50, 900)
        w.env.process(bot(w, system, order, start, crash, outage))
    w.env.run()
    return w.total()


def bot(w: World, system: str, order: int, start: int, crash: str, outage: int) -> Any:
    yield w.env.timeout(start)
    if system == "kernel":
        yield from KernelBot(w, order).run(crash, outage)
    else:
        yield from per_effect(w, order, crash, outage)


def table(seed: int, runs: int) -> dict[str, int]:
    """Runs (of ``runs``, seeds seed, seed+1, ...) in which each system held the cap."""
    return {system: sum(one_run(system, seed + i) <= CAP for i in range(runs))
            for system in ("per_effect", "kernel")}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.shared_cap")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args(argv)
    print(f"seed {args.seed}, {args.runs} runs, cap ${CAP}, two bots refunding ${AMOUNT} each")
    for system, held in table(args.seed, args.runs).items():
        print(f"{system:12} held the cap in {held} of {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
