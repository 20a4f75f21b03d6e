"""The abstraction function: a kernel world -> the values of Kernel.tla's variables.

How it works. Each spec variable is computed from the harness ``World``: ``rec[k]`` is the
kernel's in-memory ``Effect`` of key k (state, payload amount, attempts, first_sent_at,
claim_until, executed; ``NoRec`` when the effect does not exist), ``dur[k]`` is "ALL" when
no entry of k is unflushed and otherwise the state of the fsync'd replay, and the rest of
the world maps field for field. Values are built in the checker's normal form (ints,
bools, strings, frozensets, tuples for functions on 1..n, ``FnDict`` otherwise) so a
mapped state compares equal to a state the checker produced.
"""
from __future__ import annotations

from typing import Any

from kernel import Effect
from spec.checker.values import FnDict, make_fn, record
from spec.conformance.harness import Params, World

NO_REC = record(st="NONE", pay=0, att=0, first=-1, claim=0, ex="false")
NO_ANS = record(found=False, asked=-1)


def rec_of(e: Effect | None) -> FnDict:
    if e is None:
        return NO_REC
    first = -1 if e.first_sent_at is None else e.first_sent_at
    return record(st=e.state.value, pay=e.proposal.payload["amount"], att=e.attempts,
                  first=first, claim=e.claim_until, ex=e.executed.value)


def dur_of(w: World, ki: int) -> str:
    if not w.tail[ki]:
        return "ALL"
    d = w.durable[ki]
    return "NONE" if d is None else d.state.value


def per_key(p: Params, values) -> Any:
    return make_fn(dict(zip(p.keys, values)))


def spec_values(p: Params, w: World) -> dict[str, Any]:
    """Kernel world -> {spec variable name: value}."""
    ans = [per_key(p, [NO_ANS if a is None else record(found=a.found, asked=a.asked_at)
                       for a in row]) for row in w.ans]
    return {
        "now": w.now,
        "rec": per_key(p, [rec_of(e) for e in w.mem]),
        "dur": per_key(p, [dur_of(w, ki) for ki in range(len(p.keys))]),
        "up": make_fn(dict(zip(p.workers, w.up))),
        "ans": make_fn(dict(zip(p.workers, ans))),
        "net": frozenset(record(id=k, att=a, dl=dl, auth=au, prem=pr)
                         for k, a, dl, au, pr in w.net),
        "acks": frozenset(record(id=k, att=a) for k, a in w.acks),
        "tgt": per_key(p, [record(n=n, at=at, kept=kept) for n, at, kept in w.tgt]),
        "lease": w.lease,
        "prem": per_key(p, w.prem),
        "crashes": w.crashes,
        "losses": w.losses,
        "sent": per_key(p, w.sent),
        "sentPay": per_key(p, w.sent_pay),
        "alarm": w.alarm,
    }


def to_spec(p: Params, var_names: list[str], w: World) -> tuple:
    """The spec state (a tuple in the checker's variable order) a kernel world stands for."""
    values = spec_values(p, w)
    return tuple(values[name] for name in var_names)
