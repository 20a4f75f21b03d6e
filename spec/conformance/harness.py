"""The Python kernel driven in the spec's world, as an explicit state graph.

How it works. A ``World`` is one immutable state of: the clock; the kernel's in-memory
effects (``kernel.Effect``, advanced only by ``kernel.step``); the journal per effect as
its fsync'd part (folded with ``kernel.machine.apply_entry``, i.e. replay) plus the
unflushed tail entries; the workers (up, lookup answers held); the network; the target;
the lease and premises; and the history counters the spec's invariants read. ``moves``
lists every labelled successor: kernel moves call ``kernel.step`` with events built from
the world (Propose, Authorize, Dispatch, Recover, the Query a Recover asks for, a late
LookupAnswer, Ack) and carry out the commands it returns; environment moves (Crash,
Restart, Deliver, LoseReq, LoseAck, Revoke, ChangePremise, Prune, Tick) mirror the spec's
environment actions one for one. The harness never decides anything the kernel decides.
A crash replaces the in-memory effects by the replay of what survived of the journal.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kernel import (
    Ack,
    Alert,
    Append,
    Authorize,
    Capabilities,
    Dispatch,
    Effect,
    IllegalTransition,
    Lease,
    Lookup,
    LookupAnswer,
    Proposal,
    Propose,
    Query,
    Recover,
    Send,
    State,
    Timing,
    WaitUntil,
    canonical,
    step,
)
from kernel.machine import apply_entry

LEASE_ID = "L"
FACTS_OK = {"refunded": 0}
FACTS_MOVED = {"refunded": 20}
UNFLUSHED = (State.PROPOSED, State.AUTHORIZED)


@dataclass(frozen=True)
class Params:
    """The constants of a model config, as the harness needs them."""

    keys: tuple[int, ...]
    amounts: tuple[int, ...]
    workers: tuple[int, ...]
    caps: Capabilities
    timing: Timing
    max_time: int
    max_crashes: int
    max_loss: int
    revocable: bool
    premise_movable: bool
    prunable: bool

    @classmethod
    def from_constants(cls, c: Mapping[str, Any]) -> Params:
        caps = Capabilities(dedupes=c["Dedupes"], queryable=c["Queryable"],
                            dedup_window=c["DedupWindow"], lookup_lag=c["LookupLag"])
        timing = Timing(send_timeout=c["SendTimeout"], settle_margin=c["SettleMargin"],
                        dedup_margin=c["DedupMargin"])
        return cls(tuple(sorted(c["Keys"])), tuple(sorted(c["Amounts"])),
                   tuple(sorted(c["Workers"])), caps, timing, c["MaxTime"], c["MaxCrashes"],
                   c["MaxLoss"], c["Revocable"], c["PremiseMovable"], c["Prunable"])

    def proposal(self, key: int, amount: int) -> Proposal:
        return Proposal(payload={"order": key, "amount": amount}, premises=FACTS_OK,
                        lease=LEASE_ID, capabilities=self.caps, timing=self.timing,
                        key={"order": key})


Req = tuple[int, int, int, bool, bool]  # key, attempt, deadline, lease live, premises held


@dataclass(frozen=True)
class World:
    now: int
    mem: tuple[Effect | None, ...]          # per key: the kernel's in-memory effect
    durable: tuple[Effect | None, ...]      # per key: replay of the fsync'd journal
    tail: tuple[tuple[dict, ...], ...]      # per key: unflushed entries, in order
    up: tuple[bool, ...]
    ans: tuple[tuple[Lookup | None, ...], ...]  # per worker, per key
    net: frozenset[Req]
    acks: frozenset[tuple[int, int]]
    tgt: tuple[tuple[int, int, bool], ...]  # per key: applications, first at, key kept
    lease: bool
    prem: tuple[bool, ...]
    crashes: int
    losses: int
    sent: tuple[int, ...]
    sent_pay: tuple[frozenset[int], ...]
    alarm: bool

    def key(self) -> tuple:
        """A hashable identity of the whole world (effects and entries serialised)."""
        return (self.now, tuple(effect_key(e) for e in self.mem),
                tuple(effect_key(e) for e in self.durable),
                tuple(tuple(canonical(e) for e in t) for t in self.tail), self.up,
                self.ans, self.net, self.acks, self.tgt, self.lease, self.prem, self.crashes,
                self.losses, self.sent, self.sent_pay, self.alarm)


def effect_key(e: Effect | None) -> Any:
    if e is None:
        return None
    return (e.proposal.payload_digest, e.state, e.attempts, e.first_sent_at, e.claim_until,
            e.executed, e.reason, canonical(e.authorized) if e.authorized else None)


def initial(p: Params) -> World:
    n = len(p.keys)
    return World(now=0, mem=(None,) * n, durable=(None,) * n, tail=((),) * n,
                 up=(True,) * len(p.workers), ans=((None,) * n,) * len(p.workers),
                 net=frozenset(), acks=frozenset(), tgt=((0, -1, False),) * n, lease=True,
                 prem=(True,) * n, crashes=0, losses=0, sent=(0,) * n,
                 sent_pay=(frozenset(),) * n, alarm=False)


def put(t: tuple, i: int, v: Any) -> tuple:
    return t[:i] + (v,) + t[i + 1:]

# ---------------------------------------------------------------- carrying out commands


class Driver:
    """Applies one kernel transition's commands to a world (the driver's job)."""

    def __init__(self, p: Params, w: World, ki: int) -> None:
        self.p, self.w, self.ki = p, w, ki

    def run(self, effect: Effect, commands: tuple) -> World:
        self.w = replace(self.w, mem=put(self.w.mem, self.ki, effect))
        for c in commands:
            if isinstance(c, Append):
                self.append(c)
            elif isinstance(c, Send):
                self.send(c)
            elif isinstance(c, Alert):
                self.w = replace(self.w, alarm=True)
        return self.w

    def append(self, c: Append) -> None:
        w, ki = self.w, self.ki
        tail = w.tail[ki] + (c.entry,)
        if not c.fsync:
            self.w = replace(w, tail=put(w.tail, ki, tail))
            return
        durable = list(w.durable)  # an fsync makes the whole file durable
        for k, entries in enumerate(put(w.tail, ki, tail)):
            for entry in entries:
                durable[k] = apply_entry(durable[k], entry)
        self.w = replace(w, durable=tuple(durable), tail=((),) * len(w.tail))

    def send(self, c: Send) -> None:
        w, ki = self.w, self.ki
        req = (self.p.keys[ki], c.attempt, c.deadline, w.lease, w.prem[ki])
        self.w = replace(w, net=w.net | {req}, sent=put(w.sent, ki, w.sent[ki] + 1),
                         sent_pay=put(w.sent_pay, ki, w.sent_pay[ki] | {c.payload["amount"]}))

# ---------------------------------------------------------------- kernel moves


def observe(p: Params, w: World, ki: int) -> tuple[Lease, dict]:
    return (Lease(LEASE_ID, expires_at=10**12, revoked=not w.lease),
            FACTS_OK if w.prem[ki] else FACTS_MOVED)


def kernel_moves(p: Params, w: World) -> Iterator[tuple[str, World, dict | None]]:
    for wi, worker in enumerate(p.workers):
        if not w.up[wi]:
            continue
        for ki, key in enumerate(p.keys):
            for a in p.amounts:
                yield from propose(p, w, wi, ki, a, f"Propose({worker},{key},{a})")
            yield from worker_moves(p, w, wi, ki, f"({worker},{key})")
        for m in sorted(w.acks):
            yield from ack(p, w, m, f"Ack({worker},{m})")


def kstep(w: World, ki: int, event: Any) -> tuple[Any, dict]:
    """kernel.step on key ki's effect, and the record of that step (for trace tests)."""
    t = step(w.mem[ki], event)
    return t, {"event": event, "effect_id": t.effect.effect_id, "before": w.mem[ki],
               "after": t.effect, "commands": t.commands}


def propose(p: Params, w: World, wi: int, ki: int, a: int, label: str):
    t, r = kstep(w, ki, Propose(w.now, p.proposal(p.keys[ki], a)))
    yield label, Driver(p, w, ki).run(t.effect, t.commands), r


def worker_moves(p: Params, w: World, wi: int, ki: int, who: str):
    e = w.mem[ki]
    if e is None:
        return
    lease, facts = observe(p, w, ki)
    held = w.ans[wi][ki]
    if e.state is State.PROPOSED:
        t, r = kstep(w, ki, Authorize(w.now, lease, facts))
        yield "Authorize" + who, Driver(p, w, ki).run(t.effect, t.commands), r
    elif e.state is State.AUTHORIZED:
        t, r = kstep(w, ki, Dispatch(w.now, lease, facts))
        yield "Dispatch" + who, Driver(p, w, ki).run(t.effect, t.commands), r
    elif e.state is State.DISPATCHED:
        yield from recover(p, w, wi, ki, Recover(w.now, lease, facts, held), who)
    elif held is not None:
        t, r = kstep(w, ki, LookupAnswer(w.now, held.found, held.asked_at))
        w2 = replace(w, ans=put(w.ans, wi, put(w.ans[wi], ki, None)))
        yield "LateLookup" + who, Driver(p, w2, ki).run(t.effect, t.commands), r


def recover(p: Params, w: World, wi: int, ki: int, ev: Recover, who: str):
    t, r = kstep(w, ki, ev)
    if any(isinstance(c, Query) for c in t.commands):
        found = visible(p, w, ki)
        w2 = replace(w, ans=put(w.ans, wi, put(w.ans[wi], ki, Lookup(found, w.now))))
        yield "Lookup" + who, w2, r
    elif not all(isinstance(c, WaitUntil) for c in t.commands):
        w2 = replace(w, ans=put(w.ans, wi, put(w.ans[wi], ki, None)))
        yield "Recover" + who, Driver(p, w2, ki).run(t.effect, t.commands), r


def ack(p: Params, w: World, m: tuple[int, int], label: str):
    ki = p.keys.index(m[0])
    w2 = replace(w, acks=w.acks - {m})
    try:
        t, r = kstep(w, ki, Ack(w.now, m[1]))
    except IllegalTransition:
        yield label, w2, None  # the kernel refuses the event; the driver drops the ack
        return
    yield label, Driver(p, w2, ki).run(t.effect, t.commands), r


def visible(p: Params, w: World, ki: int) -> bool:
    n, at, _ = w.tgt[ki]
    return n > 0 and at + p.caps.lookup_lag <= w.now

# ---------------------------------------------------------------- environment moves


def env_moves(p: Params, w: World) -> Iterator[tuple[str, World]]:
    storm = w.now < p.max_time
    for wi, worker in enumerate(p.workers):
        if storm and w.up[wi] and w.crashes < p.max_crashes:
            for survived in crash_survivors(p, w):
                yield f"Crash({worker})", crashed(w, wi, survived)
        if not w.up[wi]:
            yield f"Restart({worker})", replace(w, up=put(w.up, wi, True))
    for m in sorted(w.net):
        if w.now <= m[2]:
            yield f"Deliver({m})", deliver(p, w, m)
        if storm and w.losses < p.max_loss:
            yield f"LoseReq({m})", replace(w, net=w.net - {m}, losses=w.losses + 1)
    for m in sorted(w.acks):
        if storm and w.losses < p.max_loss:
            yield f"LoseAck({m})", replace(w, acks=w.acks - {m}, losses=w.losses + 1)
    yield from world_moves(p, w, storm)
    if tick_enabled(p, w, storm):
        yield "Tick", replace(w, now=w.now + 1,
                              net=frozenset(m for m in w.net if m[2] >= w.now + 1))


def world_moves(p: Params, w: World, storm: bool) -> Iterator[tuple[str, World]]:
    if not storm:
        return
    if p.revocable and w.lease:
        yield "Revoke", replace(w, lease=False)
    for ki, key in enumerate(p.keys):
        if p.premise_movable and w.prem[ki]:
            yield f"ChangePremise({key})", replace(w, prem=put(w.prem, ki, False))
        n, at, kept = w.tgt[ki]
        if p.prunable and kept and w.now >= at + p.caps.dedup_window:
            yield f"Prune({key})", replace(w, tgt=put(w.tgt, ki, (n, at, False)))


def tick_enabled(p: Params, w: World, storm: bool) -> bool:
    if storm:
        return True
    pending = any(e is not None and e.state is State.DISPATCHED and w.now < e.claim_until
                  for e in w.mem)
    return not w.net and not w.acks and pending


def deliver(p: Params, w: World, m: Req) -> World:
    ki = p.keys.index(m[0])
    n, at, kept = w.tgt[ki]
    if not (p.caps.dedupes and kept):
        n, at, kept = n + 1, (w.now if n == 0 else at), p.caps.dedupes
    return replace(w, net=w.net - {m}, acks=w.acks | {(m[0], m[1])},
                   tgt=put(w.tgt, ki, (n, at, kept)))


def crash_survivors(p: Params, w: World) -> list[tuple[tuple[dict, ...], ...]]:
    """Every choice of surviving tail prefix, per effect (a torn line is dropped)."""
    choices: list[tuple[tuple[dict, ...], ...]] = [()]
    for entries in w.tail:
        choices = [c + (entries[:n],) for c in choices for n in range(len(entries) + 1)]
    return choices


def crashed(w: World, wi: int, survived: tuple[tuple[dict, ...], ...]) -> World:
    durable = list(w.durable)
    for k, entries in enumerate(survived):
        for entry in entries:
            durable[k] = apply_entry(durable[k], entry)
    n = len(w.mem)
    return replace(w, up=put(w.up, wi, False), ans=put(w.ans, wi, (None,) * n),
                   mem=tuple(durable), durable=tuple(durable), tail=((),) * n,
                   crashes=w.crashes + 1)


def moves_with_steps(p: Params, w: World) -> list[tuple[str, World, dict | None]]:
    """Every labelled successor, with the kernel step record of kernel moves (else None)."""
    return list(kernel_moves(p, w)) + [(label, w2, None) for label, w2 in env_moves(p, w)]


def moves(p: Params, w: World) -> list[tuple[str, World]]:
    """Every labelled successor of a world: kernel moves, then environment moves."""
    return [(label, w2) for label, w2, _ in moves_with_steps(p, w)]
