"""The Python kernel's coordinated units against Coord.tla: harness, mapping, bisimulation.

How it works. A ``World`` holds the clock, each unit's in-memory ``kernel.Effect``, the one
journal (every entry of a coordinated unit is fsync'd, so the journal is what survives a
crash; the PROPOSED entries are written at set-up), the workers and their lookup answers,
the network, the target (applications per unit, highest fencing token seen per item), the
plan version, which changes pass verification, and the history flags. Kernel moves call
``kernel.step`` with events built from the world, the journal-wide view coming from
``kernel.view.fold`` of the journal: Authorize (a ``Blocked`` answer is no move),
Dispatch, Recover and the Query it asks for, Verification, Ack. Environment moves mirror
Coord.tla's one for one. The abstraction maps a world to Coord.tla's variables; fencing
tokens (entry seqs) map to their rank among admissions, the spec's `seq`. ``check(cfg)``
explores both graphs from every initial state and checks that the mapping is a
bisimulation and that memory equals the replay of the journal.
``python -m spec.conformance.coord spec/MC_coord_claims.cfg`` runs one config.
"""
from __future__ import annotations

import itertools
import sys
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import kernel
from kernel import Effect, State
from spec.checker.values import FnDict, make_fn, record
from spec.conformance import specgraph
from spec.conformance.bisim import BisimResult, Divergence, changes

COORD_TLA = specgraph.SPEC_DIR / "Coord.tla"
LEASE = kernel.Lease("L", expires_at=10**12)
FACTS = {"base": 0}
WHY = (("plan_superseded", "plan"), ("claim_expired", "claim"), ("read_overlap_moved", "reads"),
       ("over_budget", "budget"), ("verification_failed", "verify"))


@dataclass(frozen=True)
class Params:
    units: tuple[int, ...]
    workers: tuple[int, ...]
    shared: bool
    reads: bool
    cap: int
    verify: bool
    ttl: int
    caps: kernel.Capabilities
    timing: kernel.Timing
    max_time: int
    max_crashes: int
    max_loss: int
    supersedable: bool

    @classmethod
    def from_constants(cls, c: Mapping[str, Any]) -> Params:
        return cls(tuple(sorted(c["Units"])), tuple(sorted(c["Workers"])), c["Shared"],
                   c["Reads"], c["Cap"], c["Verify"], c["TTL"],
                   kernel.Capabilities(dedupes=False, queryable=True),
                   kernel.Timing(send_timeout=c["SendTimeout"], settle_margin=c["SettleMargin"],
                                 dedup_margin=0),
                   c["MaxTime"], c["MaxCrashes"], c["MaxLoss"], c["Supersedable"])

    def writes(self, u: int) -> tuple[int, ...]:
        return (1,) if self.shared else (u,)

    def read_set(self, u: int) -> tuple[int, ...]:
        return (1,) if self.reads and not self.shared and u == 2 else ()

    def items(self) -> tuple[int, ...]:
        return tuple(sorted({i for u in self.units for i in self.writes(u)}))

    def proposal(self, u: int) -> kernel.Proposal:
        c = kernel.Coordination(writes=tuple(f"i{i}" for i in self.writes(u)),
                                reads=tuple(f"i{i}" for i in self.read_set(u)), ttl=self.ttl,
                                budget="b", cost=1, cap=self.cap, plan="p", plan_version=1,
                                verify=self.verify)
        return kernel.Proposal(payload={"unit": u}, premises=FACTS, lease="L",
                               capabilities=self.caps, timing=self.timing, key={"unit": u},
                               coordination=c)


@dataclass(frozen=True)
class Folded:
    view: kernel.View
    holds: frozenset[str]
    replay: tuple[Effect, ...]


_FOLDS: dict[tuple[bytes, ...], Folded] = {}


Req = tuple[int, int, int, int, bool, bool, bool]  # unit, att, deadline, token, auth, plan, reads


@dataclass(frozen=True)
class World:
    now: int
    mem: tuple[Effect, ...]
    journal: tuple[dict[str, Any], ...]
    up: tuple[bool, ...]
    ans: tuple[tuple[kernel.Lookup | None, ...], ...]
    net: frozenset[Req]
    acks: frozenset[tuple[int, int]]
    tgt: tuple[int, ...]
    hi: tuple[int, ...]
    plan: int
    good: tuple[bool, ...]
    crashes: int
    losses: int
    stale: bool
    fenced: bool
    jkey: tuple[bytes, ...]  # the journal's entries in canonical form

    def folded(self) -> Folded:
        """The journal's replay and view, computed once per distinct journal."""
        got = _FOLDS.get(self.jkey)
        if got is None:
            folder = kernel.Folder()
            for entry in self.journal:
                folder.add(entry)
            got = _FOLDS[self.jkey] = Folded(folder.view(), frozenset(folder.holds),
                                             tuple(folder.effects.values()))
        return got

    def key(self) -> tuple[Any, ...]:
        return (self.now, self.jkey, self.up, self.ans,
                self.net, self.acks, self.tgt, self.hi, self.plan, self.good, self.crashes,
                self.losses, self.stale, self.fenced,
                tuple((e.state, e.attempts, e.claim_until, e.executed, e.reason, e.verified)
                      for e in self.mem))


def put(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return t[:i] + (v,) + t[i + 1:]


def initial(p: Params) -> list[World]:
    journal, mem = [], []
    for u in p.units:
        t = kernel.step(None, kernel.Propose(0, p.proposal(u)))
        journal.append({**t.commands[0].entry, "seq": len(journal)})  # type: ignore[union-attr]
        mem.append(t.effect)
    n, goods = len(p.units), ([True, False] if p.verify else [True])
    jkey = tuple(kernel.canonical(e) for e in journal)
    return [World(0, tuple(mem), tuple(journal), (True,) * len(p.workers),
                  ((None,) * n,) * len(p.workers), frozenset(), frozenset(), (0,) * n,
                  (-1,) * len(p.items()), 1, good, 0, 0, False, False, jkey)
            for good in itertools.product(goods, repeat=n)]

# ---------------------------------------------------------------- the kernel's moves


def claimed_by_other(p: Params, w: World, ui: int, view: kernel.View) -> bool:
    eid = w.mem[ui].effect_id
    return any((c := view.claims.get(f"i{i}")) is not None and c.live(w.now)
               and c.effect_id != eid for i in p.writes(p.units[ui]))


def reads_ok(p: Params, w: World, ui: int, view: kernel.View) -> bool:
    adm = w.mem[ui].admission
    return adm is None or not any(e in view.moved for e in adm["overlaps"].values())


def run(p: Params, w: World, ui: int, t: kernel.Transition, view: kernel.View) -> World:
    """Carry out a transition's commands (the driver's job)."""
    journal, net, jkey = list(w.journal), set(w.net), w.jkey
    for c in t.commands:
        if isinstance(c, kernel.Append):
            journal.append({**c.entry, "seq": len(journal)})
            jkey += (kernel.canonical(journal[-1]),)
        elif isinstance(c, kernel.Send):
            adm = t.effect.admission
            assert adm is not None and c.token is not None
            net.add((p.units[ui], c.attempt, c.deadline, c.token, w.now < adm["until"],
                     w.plan == 1, reads_ok(p, replace(w, mem=put(w.mem, ui, t.effect)), ui,
                                           view)))
    return replace(w, mem=put(w.mem, ui, t.effect), journal=tuple(journal),
                   net=frozenset(net), jkey=jkey)


def kernel_moves(p: Params, w: World) -> Iterator[tuple[str, World]]:
    view = w.folded().view
    plan = kernel.Plan("p", w.plan)
    for wi, worker in enumerate(p.workers):
        if not w.up[wi]:
            continue
        for ui, u in enumerate(p.units):
            yield from unit_moves(p, w, wi, ui, view, plan, f"({worker},{u})")
        for m in sorted(w.acks):
            ui = p.units.index(m[0])
            t = kernel.step(w.mem[ui], kernel.Ack(w.now, m[1]))
            yield f"Ack({worker},{m})", run(p, replace(w, acks=w.acks - {m}), ui, t, view)


def unit_moves(p: Params, w: World, wi: int, ui: int, view: kernel.View, plan: kernel.Plan,
               who: str) -> Iterator[tuple[str, World]]:
    e = w.mem[ui]
    if e.state is State.PROPOSED:
        t = kernel.step(e, kernel.Authorize(w.now, LEASE, FACTS, view, plan, len(w.journal)))
        if not any(isinstance(c, kernel.Blocked) for c in t.commands):
            yield "Admit" + who, run(p, w, ui, t, view)
    elif e.state is State.AUTHORIZED:
        t = kernel.step(e, kernel.Dispatch(w.now, LEASE, FACTS, view, plan))
        yield "Dispatch" + who, run(p, w, ui, t, view)
    elif e.state is State.DISPATCHED:
        t = kernel.step(e, kernel.Recover(w.now, LEASE, FACTS, w.ans[wi][ui], view, plan))
        if any(isinstance(c, kernel.Query) for c in t.commands):
            found = kernel.Lookup(w.tgt[ui] > 0, w.now)
            yield "Lookup" + who, replace(w, ans=put(w.ans, wi, put(w.ans[wi], ui, found)))
        elif not all(isinstance(c, kernel.WaitUntil) for c in t.commands):
            w2 = replace(w, ans=put(w.ans, wi, put(w.ans[wi], ui, None)))
            yield "Recover" + who, run(p, w2, ui, t, view)
    elif e.state is State.LANDED:
        result = "passed" if w.good[ui] else "failed"
        t = kernel.step(e, kernel.Verification(w.now, result))
        yield "Verification" + who, run(p, w, ui, t, view)

# ---------------------------------------------------------------- the environment


def env_moves(p: Params, w: World) -> Iterator[tuple[str, World]]:
    storm = w.now < p.max_time
    for wi, worker in enumerate(p.workers):
        if storm and w.up[wi] and w.crashes < p.max_crashes:
            mem = w.folded().replay
            yield f"Crash({worker})", replace(w, up=put(w.up, wi, False), mem=mem,
                                              ans=put(w.ans, wi, (None,) * len(p.units)),
                                              crashes=w.crashes + 1)
        if not w.up[wi]:
            yield f"Restart({worker})", replace(w, up=put(w.up, wi, True))
    for m in sorted(w.net):
        if w.now <= m[2]:
            yield f"Deliver({m})", deliver(p, w, m)
        if storm and w.losses < p.max_loss:
            yield f"LoseReq({m})", replace(w, net=w.net - {m}, losses=w.losses + 1)
    for a in sorted(w.acks):
        if storm and w.losses < p.max_loss:
            yield f"LoseAck({a})", replace(w, acks=w.acks - {a}, losses=w.losses + 1)
    if storm and p.supersedable and w.plan == 1:
        yield "Supersede", replace(w, plan=2)
    if storm or (not w.net and not w.acks and waiting(p, w)):
        yield "Tick", replace(w, now=w.now + 1,
                              net=frozenset(m for m in w.net if m[2] >= w.now + 1))


def waiting(p: Params, w: World) -> bool:
    view = w.folded().view
    return any((e.state is State.DISPATCHED and w.now < e.claim_until)
               or (e.state is State.PROPOSED and claimed_by_other(p, w, ui, view))
               for ui, e in enumerate(w.mem))


def deliver(p: Params, w: World, m: Req) -> World:
    ui, items = p.units.index(m[0]), p.items()
    slots = [items.index(i) for i in p.writes(m[0])]
    net = w.net - {m}
    if any(w.hi[s] > m[3] for s in slots):  # the target rejects a stale token
        return replace(w, net=net, fenced=True)
    hi = tuple(max(h, m[3]) if s in slots else h for s, h in enumerate(w.hi))
    return replace(w, net=net, tgt=put(w.tgt, ui, w.tgt[ui] + 1), hi=hi,
                   acks=w.acks | {(m[0], m[1])})


def moves(p: Params, w: World) -> list[tuple[str, World]]:
    return list(kernel_moves(p, w)) + list(env_moves(p, w))

# ---------------------------------------------------------------- the abstraction


def why(reason: str | None) -> str:
    return next((w for prefix, w in WHY if reason and reason.startswith(prefix)), "none")


def to_spec(p: Params, names: list[str], w: World) -> tuple[Any, ...]:
    tokens = sorted(e["admission"]["token"] for e in w.journal if e["kind"] == "AUTHORIZED")
    rank = {t: r for r, t in enumerate(tokens)}
    holds = w.folded().holds
    unit_of = {e.effect_id: u for u, e in zip(p.units, w.mem)}

    def rec(e: Effect) -> FnDict:
        adm = e.admission
        return record(st=e.state.value, tok=rank[adm["token"]] if adm else -1,
                      until=adm["until"] if adm else 0, att=e.attempts, claim=e.claim_until,
                      ex=e.executed.value, ver=e.verified or "none",
                      ovl=frozenset(unit_of[v] for v in adm["overlaps"].values()) if adm
                      else frozenset(), res=e.effect_id in holds, why=why(e.reason))

    def per(keys: tuple[int, ...], values: Any) -> Any:
        return make_fn(dict(zip(keys, values)))

    values = {
        "now": w.now, "rec": per(p.units, [rec(e) for e in w.mem]), "seq": len(tokens),
        "up": per(p.workers, w.up),
        "ans": per(p.workers, [per(p.units, [record(found=False, asked=-1) if a is None else
                                             record(found=a.found, asked=a.asked_at)
                                             for a in row]) for row in w.ans]),
        "net": frozenset(record(id=u, att=a, dl=dl, tok=rank[t], auth=au, plan=pl, reads=rd)
                         for u, a, dl, t, au, pl, rd in w.net),
        "acks": frozenset(record(id=u, att=a) for u, a in w.acks),
        "tgt": per(p.units, w.tgt),
        "hi": per(p.items(), [rank.get(h, -1) for h in w.hi]),
        "plan": w.plan, "good": per(p.units, w.good), "crashes": w.crashes,
        "losses": w.losses, "stale": w.stale, "fenced": w.fenced,
    }
    return tuple(values[n] for n in names)

# ---------------------------------------------------------------- the check


def check(cfg: Any, spec: Any = COORD_TLA) -> BisimResult:
    """Bisimulation of the kernel's coordinated units and ``spec`` under a cfg."""
    started = time.monotonic()
    _FOLDS.clear()
    constants = dict(cfg) if isinstance(cfg, dict) else specgraph.read_constants(cfg)
    model = specgraph.load_model(cfg, spec=spec)
    p = Params.from_constants(constants)
    names = model.var_names
    roots = initial(p)
    res = BisimResult(True)
    images = {to_spec(p, names, w) for w in roots}
    if images != set(specgraph.initial(model)):
        res.ok = False
        res.divergence = Divergence("init", [], {}, [f"{len(images)} kernel initial images"])
        return res
    res = explore(p, model, roots)
    res.seconds = time.monotonic() - started
    return res


def explore(p: Params, model: Any, roots: list[World]) -> BisimResult:
    names, res = model.var_names, BisimResult(True)
    parent: dict[Any, tuple[Any, str]] = {}
    seen = {w.key() for w in roots}
    queue, images, succ = deque(roots), set(), {}
    while queue:
        w = queue.popleft()
        s = to_spec(p, names, w)
        images.add(s)
        if s not in succ:
            succ[s] = {t for t in specgraph.successors(model, s) if t != s}
        bad = step_check(p, model, w, s, succ[s], seen, queue, parent, res)
        if bad is not None:
            res.ok, res.divergence = False, bad
            break
    res.kernel_states, res.spec_states = len(seen), len(images)
    res.spec_edges = sum(len(succ[s]) for s in images if s in succ)
    return res


def step_check(p: Params, model: Any, w: World, s: tuple[Any, ...], allowed: set[Any],
               seen: set[Any], queue: deque[World], parent: dict[Any, tuple[Any, str]],
               res: BisimResult) -> Divergence | None:
    k = w.key()
    if w.folded().replay != w.mem:
        return diverge(model, parent, k, s, "replay", ["memory differs from the journal"])
    made: dict[Any, str] = {}
    for label, w2 in moves(p, w):
        res.kernel_edges += 1
        k2 = w2.key()
        if k2 not in seen:
            seen.add(k2)
            parent[k2] = (k, label)
            queue.append(w2)
        t = to_spec(p, model.var_names, w2)
        if t != s:
            made.setdefault(t, label)
    extra = [f"{made[t]}: {changes(model, s, t)}" for t in made if t not in allowed]
    if extra:
        return diverge(model, parent, k, s, "kernel_step_not_in_spec", extra)
    missing = [changes(model, s, t) for t in allowed if t not in made]
    if missing:
        return diverge(model, parent, k, s, "spec_step_not_in_kernel", missing)
    return None


def diverge(model: Any, parent: dict[Any, tuple[Any, str]], k: Any, s: tuple[Any, ...],
            kind: str, steps: list[str]) -> Divergence:
    path = []
    while k in parent:
        k, label = parent[k]
        path.append(label)
    from spec.checker.values import show
    state = {n: show(v) for n, v in zip(model.var_names, s)}
    return Divergence(kind, path[::-1], state, steps)


def main(argv: list[str]) -> int:
    code = 0
    for cfg in argv:
        res = check(cfg)
        print(f"{cfg}: {res.summary()}", flush=True)
        code |= 0 if res.ok else 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
