"""Exhaustive conformance: the Python kernel's state graph is bisimilar to Kernel.tla's.

How it works. Under one model config, the kernel world graph (``harness``) is explored
breadth first from its initial world. For every world w with spec image s = f(w)
(``mapping.to_spec``) the check asserts, with self-loops (stuttering) ignored on both sides:

1. every kernel/environment move w -> w' is a spec step: f(w') is a successor of s;
2. every spec step s -> t is produced by some move of w with f(w') = t;
3. the kernel's in-memory effects equal the replay of its journal (fsync'd part + tail).

Together with f(initial world) = the spec's initial state, (1) and (2) make the relation
{(w, f(w))} a bisimulation, so the images are exactly the spec's reachable states; both
graphs' sizes are reported. The first failure is returned as a readable ``Divergence``:
the moves that reach w, the spec state, and the unmatched steps with what they change.
``python -m spec.conformance.bisim spec/MC_t2.cfg`` runs one config.
"""
from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kernel.machine import apply_entry
from spec.checker.values import show
from spec.conformance import specgraph
from spec.conformance.harness import Params, World, initial, moves
from spec.conformance.mapping import to_spec


@dataclass
class Divergence:
    kind: str              # "init" | "kernel_step_not_in_spec" | "spec_step_not_in_kernel"
    path: list[str]        # the moves from the initial world to the diverging world
    state: dict[str, str]  # the spec image of that world
    steps: list[str]       # the unmatched steps, each with what it changes

    def explain(self) -> str:
        lines = [f"first divergence ({self.kind}) after {len(self.path)} moves:"]
        lines += [f"  {i + 1}. {m}" for i, m in enumerate(self.path)]
        lines.append("  in spec state: " + ", ".join(f"{k}={v}" for k, v in self.state.items()))
        lines += [f"  unmatched: {s}" for s in self.steps]
        return "\n".join(lines)


@dataclass
class BisimResult:
    ok: bool
    kernel_states: int = 0
    kernel_edges: int = 0
    spec_states: int = 0
    spec_edges: int = 0
    seconds: float = 0.0
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        head = (f"kernel graph {self.kernel_states} states / {self.kernel_edges} moves, "
                f"spec graph {self.spec_states} states / {self.spec_edges} steps, "
                f"{self.seconds:.1f}s")
        if self.ok:
            return "bisimilar: " + head
        return "NOT bisimilar: " + head + "\n" + self.divergence.explain()


def changes(model, s: tuple, t: tuple) -> str:
    names = model.var_names
    return "; ".join(f"{n}: {show(a)} -> {show(b)}"
                     for n, a, b in zip(names, s, t) if a != b) or "(no change)"


def replay_mismatch(w: World) -> str | None:
    for ki, (durable, tail) in enumerate(zip(w.durable, w.tail)):
        folded = durable
        for entry in tail:
            folded = apply_entry(folded, entry)
        if folded != w.mem[ki]:
            return f"key index {ki}: memory {w.mem[ki]} but journal replays to {folded}"
    return None


class Checker:
    def __init__(self, model, params: Params) -> None:
        self.model, self.p = model, params
        self.names = model.var_names
        self.spec_succ: dict[tuple, set[tuple]] = {}
        self.parent: dict[Any, tuple[Any, str]] = {}

    def image(self, w: World) -> tuple:
        return to_spec(self.p, self.names, w)

    def succ(self, s: tuple) -> set[tuple]:
        if s not in self.spec_succ:
            self.spec_succ[s] = {t for t in specgraph.successors(self.model, s) if t != s}
        return self.spec_succ[s]

    def path(self, k: Any) -> list[str]:
        out = []
        while k in self.parent:
            k, label = self.parent[k]
            out.append(label)
        return out[::-1]

    def diverge(self, kind: str, k: Any, s: tuple, steps: list[str]) -> Divergence:
        state = {n: show(v) for n, v in zip(self.names, s)}
        return Divergence(kind, self.path(k), state, steps)

    def run(self) -> BisimResult:
        started = time.monotonic()
        w0 = initial(self.p)
        s0 = self.image(w0)
        inits = specgraph.initial(self.model)
        if inits != [s0]:
            d = self.diverge("init", w0.key(), s0, [f"spec initial states: {len(inits)}"])
            return BisimResult(False, divergence=d)
        res = self.explore(w0)
        res.seconds = time.monotonic() - started
        return res

    def explore(self, w0: World) -> BisimResult:
        seen = {w0.key()}
        queue = deque([w0])
        res = BisimResult(True)
        images: set[tuple] = set()
        while queue:
            w = queue.popleft()
            k, s = w.key(), self.image(w)
            images.add(s)
            bad = self.step_check(w, k, s, seen, queue, res)
            if bad is not None:
                res.ok, res.divergence = False, bad
                break
        res.kernel_states = len(seen)
        res.spec_states = len(images)
        res.spec_edges = sum(len(self.succ(s)) for s in images)
        return res

    def step_check(self, w, k, s, seen, queue, res) -> Divergence | None:
        mismatch = replay_mismatch(w)
        if mismatch:
            return self.diverge("replay", k, s, [mismatch])
        made: dict[tuple, str] = {}
        for label, w2 in moves(self.p, w):
            res.kernel_edges += 1
            k2 = w2.key()
            if k2 not in seen:
                seen.add(k2)
                self.parent[k2] = (k, label)
                queue.append(w2)
            t = self.image(w2)
            if t != s:
                made.setdefault(t, label)
        allowed = self.succ(s)
        extra = [f"{made[t]}: {changes(self.model, s, t)}" for t in made if t not in allowed]
        if extra:
            return self.diverge("kernel_step_not_in_spec", k, s, extra)
        missing = [self.spec_label(s, t) for t in allowed if t not in made]
        if missing:
            return self.diverge("spec_step_not_in_kernel", k, s, missing)
        return None

    def spec_label(self, s: tuple, t: tuple) -> str:
        labels = [lab for lab, u in specgraph.labeled_successors(self.model, s) if u == t]
        return f"{labels[0] if labels else 'Next'}: {changes(self.model, s, t)}"


def check(cfg, spec=specgraph.KERNEL_TLA) -> BisimResult:
    """Run the bisimulation check of ``spec`` (default Kernel.tla) under a cfg path or a
    dict of constants."""
    constants = dict(cfg) if isinstance(cfg, dict) else specgraph.read_constants(cfg)
    model = specgraph.load_model(cfg, spec=spec)
    return Checker(model, Params.from_constants(constants)).run()


def main(argv: list[str]) -> int:
    code = 0
    for cfg in argv:
        res = check(cfg)
        print(f"{cfg}: {res.summary()}", flush=True)
        code |= 0 if res.ok else 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
