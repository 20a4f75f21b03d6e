"""Six coordinated scenarios driven through a kernel, for the G judges and the mutants.

How it works. ``run_all(k)`` takes a kernel package (the real one, or a copy with a planted
bug) and drives it through: two units on one item (the second waits for the first's
release) and a third beside them, a claim that expires before its owner sends, a shared
budget with a worker restarted from the journal after the send, a plan superseded before
the dispatch, a target that requires verification, and a read overlap. The target applies
every request and records its fencing token. Each scenario gives its sealed entries and the
target's record.

    python3 -m tests.kernel.coordinated

scores ``kernel.oracle.check`` and its independent layer ``kernel.invariants.check`` on every
coordination mutant (``kernel.mutations.COORDINATION``) of these journals.
"""

from __future__ import annotations

import sys
from typing import Any


class Bus:
    """One journal, the view folded from it, one worker (rebuilt from the journal alone)."""

    def __init__(self, k: Any) -> None:
        self.k, self.chain = k, k.Chain()
        self.entries: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        self.lease, self.facts, self.plan = k.Lease("L1", 10**9), {"f": 1}, k.Plan("p", 1)
        self.restart()

    def unit(self, name: str, writes: tuple[str, ...], reads: tuple[str, ...] = (),
             cost: int = 0, cap: int = 0, verify: bool = False, ttl: int = 60_000,
             version: int = 1) -> Any:
        k = self.k
        c = k.Coordination(writes=writes, reads=reads, ttl=ttl, budget="b" if cap else None,
                           cost=cost, cap=cap, plan="p", plan_version=version, verify=verify)
        caps = k.Capabilities(dedupes=True, queryable=True, dedup_window=600_000, lookup_lag=10)
        timing = k.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
        return k.Proposal(payload={"unit": name}, premises=self.facts, lease="L1",
                          capabilities=caps, timing=timing, key={"unit": name}, coordination=c)

    def restart(self) -> None:
        self.effects = self.k.Effects(self.k.replay(self.entries))
        self.folder = self.k.Folder()
        for e in self.entries:
            self.folder.add(e)

    def run(self, ev: Any, eid: str | None = None) -> None:
        k = self.k
        try:
            commands = self.effects.apply(ev, eid)
        except k.KernelError:
            return  # a planted bug moved the unit somewhere this step does not apply
        for c in commands:
            if isinstance(c, k.Append):
                entry = self.chain.seal(c.entry)[0]
                self.entries.append(entry)
                self.folder.add(entry)
            elif isinstance(c, k.Send):
                for op in ("send", "apply"):
                    self.history.append({"op": op, "effect_id": c.effect_id, "ts": ev.now,
                                         "attempt": c.attempt, "token": c.token})

    def propose(self, p: Any, now: int) -> str:
        self.run(self.k.Propose(now, p))
        return str(p.effect_id)

    def authorize(self, eid: str, now: int) -> None:
        self.run(self.k.Authorize(now, self.lease, self.facts, self.folder.view(), self.plan,
                                  self.chain.seq), eid)

    def dispatch(self, eid: str, now: int, plan: Any = None) -> None:
        self.run(self.k.Dispatch(now, self.lease, self.facts, self.folder.view(),
                                 plan or self.plan), eid)

    def ack(self, eid: str, now: int, attempt: int = 1) -> None:
        if self.effects.by_id[eid].state is self.k.State.DISPATCHED:
            self.run(self.k.Ack(now, attempt), eid)


def claims(bus: Bus) -> None:
    a = bus.propose(bus.unit("a", ("x",)), 0)
    bus.authorize(a, 1)
    b = bus.propose(bus.unit("b", ("x",)), 2)
    bus.authorize(b, 2)  # a holds x: b must wait
    d = bus.propose(bus.unit("d", ("z",)), 2)
    bus.authorize(d, 2)  # disjoint: admitted beside a
    bus.dispatch(a, 3)
    bus.ack(a, 4)  # a's final entry releases x
    bus.dispatch(d, 4)
    bus.ack(d, 5)
    bus.authorize(b, 5)
    bus.dispatch(b, 6)
    bus.ack(b, 7)


def stale_owner(bus: Bus) -> None:
    a = bus.propose(bus.unit("a", ("x",), ttl=1_000), 0)
    bus.authorize(a, 1)
    b = bus.propose(bus.unit("b", ("x",)), 2)
    bus.authorize(b, 1_001)  # a's claim expired by journal time
    bus.dispatch(b, 1_002)
    bus.ack(b, 1_003)
    bus.dispatch(a, 1_004)  # the stale owner must be refused (claim_expired)
    bus.ack(a, 1_005)


def budget(bus: Bus) -> None:
    c1 = bus.propose(bus.unit("c1", ("y",), cost=20, cap=30), 0)
    bus.authorize(c1, 1)
    c2 = bus.propose(bus.unit("c2", ("z",), cost=20, cap=30), 2)
    bus.authorize(c2, 2)  # 20 + 20 > 30: refused over_budget
    bus.dispatch(c1, 3)
    bus.restart()  # crash after the send: recover from the journal, look it up
    k = bus.k
    bus.run(k.Recover(5_000, bus.lease, bus.facts, k.Lookup(True, 4_999), bus.folder.view(),
                      bus.plan), c1)
    bus.restart()
    c3 = bus.propose(bus.unit("c3", ("w",), cost=20, cap=30), 5_002)
    bus.authorize(c3, 5_002)  # c1 spent its 20: still over the cap
    bus.dispatch(c3, 5_003)
    bus.ack(c3, 5_004)


def plan(bus: Bus) -> None:
    old = bus.propose(bus.unit("old", ("p1",)), 0)
    bus.authorize(old, 1)
    new = bus.propose(bus.unit("new", ("p2",), version=2), 2)  # the plan moved on
    bus.dispatch(old, 3, bus.k.Plan("p", 2))
    bus.ack(old, 4)
    bus.authorize(new, 5)  # the new plan's unit runs to the end: the journal is complete
    bus.dispatch(new, 6, bus.k.Plan("p", 2))
    bus.ack(new, 7)


def verify(bus: Bus) -> None:
    v = bus.propose(bus.unit("v", ("q",), verify=True), 0)
    bus.authorize(v, 1)
    bus.dispatch(v, 2)
    bus.ack(v, 3)  # LANDED, not COMMITTED
    bus.run(bus.k.Verification(4, "passed"), v)


def overlap(bus: Bus) -> None:
    w = bus.propose(bus.unit("w", ("r1",)), 0)
    bus.authorize(w, 1)
    r = bus.propose(bus.unit("r", ("r2",), reads=("r1",)), 2)
    bus.authorize(r, 2)  # the overlap with w's claim is recorded
    bus.dispatch(w, 3)
    bus.ack(w, 4)
    bus.dispatch(r, 5)  # w landed: r is refused for re-planning
    bus.ack(r, 6)


SCENARIOS = (claims, stale_owner, budget, plan, verify, overlap)


def run_all(k: Any) -> list[dict[str, Any]]:
    cells = []
    for scenario in SCENARIOS:
        bus = Bus(k)
        scenario(bus)
        cells.append({"scenario": scenario.__name__, "entries": bus.entries,
                      "history": bus.history})
    return cells


def score() -> dict[str, dict[str, int]]:
    """operator -> mutants made, caught by the oracle, caught by the independent layer."""
    import kernel
    from kernel import invariants, mutations, oracle

    out: dict[str, dict[str, int]] = {}
    for cell in run_all(kernel):
        for m in mutations.mutants(cell["entries"], cell["history"],
                                   list(mutations.COORDINATION)):
            row = out.setdefault(m.operator, {"made": 0, "oracle": 0, "independent": 0})
            row["made"] += 1
            row["oracle"] += oracle.check(m.entries, history=m.history,
                                          complete=True).valid is False
            row["independent"] += bool(invariants.check(m.entries, m.history, complete=True))
    return out


if __name__ == "__main__":
    rows = score()
    print(f"{'operator':34} made oracle independent")
    for name, row in sorted(rows.items()):
        print(f"{name:34} {row['made']:4} {row['oracle']:6} {row['independent']:11}")
    sys.exit(0 if all(r["independent"] == r["made"] for r in rows.values()) else 1)
