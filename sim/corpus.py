"""The mutation corpus: simulated kernel journals, mutated, and the oracle's score on them.

How it works. The sources are the kernel's runs of the fixed table (every catalogue fault at
every tier, seed ``FIXED_SEED``), optionally plus the first N random sweep plans: each gives
a journal and the target's complete record (sends and applications). A source must itself be
judged valid by ``kernel.oracle.check(..., complete=True)``, or the corpus stops. Every
operator of ``kernel.mutations`` is applied at every site of every source; the oracle (all of
its layers) judges each mutant with the mutant's record and ``complete=True``, and a mutant
counts as caught when the verdict is ``valid: false``. The score per operator is caught /
made; a miss is listed with the command that shows it again. Nothing is random beyond the
simulator's seeds, so the corpus is the same on every run.

    python -m sim.corpus [--seeds N] [--operator NAME ...] [--journal-only] [--missed K]
                         [--json]

Exit status: 0 when every mutant is caught, 1 when some are missed, 254 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from faults.plans import CATALOGUE, plan_from_seed
from faults.systems import SYSTEMS
from kernel import invariants, mutations, oracle
from kernel.journal import render, verify
from sim.fixed import FIXED_SEED
from sim.tiers import TIER_NAMES
from sim.world import simulate


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # "fault/tier" or "seed N/tier"
    entries: list[dict[str, Any]]
    history: list[dict[str, Any]]


@dataclass(slots=True)
class Score:
    made: int = 0
    caught: int = 0
    independent: int = 0  # caught by kernel.invariants alone (the layer that shares no code)
    by: dict[str, int] = field(default_factory=dict)  # what caught them: invariant or type
    missed: list[str] = field(default_factory=list)  # "source: site"

    @property
    def rate(self) -> float:
        return self.caught / self.made if self.made else 1.0


def _source(name: str, plan: Any, tier: str, seed: int) -> Source:
    run = simulate(plan, SYSTEMS["kernel"], tier, seed)
    entries = [e for e in run.disk.entries if e is not None]
    return Source(f"{name}/{tier}", entries, [dict(r) for r in run.history])


def sources(seeds: int = 0) -> Iterator[Source]:
    """Every catalogue fault at every tier, then the first ``seeds`` sweep plans."""
    for fault, plan in CATALOGUE.items():
        for tier in TIER_NAMES:
            yield _source(fault, plan, tier, FIXED_SEED)
    for seed in range(seeds):
        for tier in TIER_NAMES:
            yield _source(f"seed {seed}", plan_from_seed(seed), tier, seed)


class InvalidSource(Exception):
    """A simulated kernel journal that the oracle itself rejects: no base for mutants."""


def caught_by(entries: Sequence[dict[str, Any]], history: list[dict[str, Any]] | None
              ) -> str | None:
    """What flags a journal (the first anomaly's invariant or type), or None if valid."""
    verdict = oracle.check(list(entries), history=history, complete=True)
    if verdict.valid is not False:
        return None
    first = verdict.anomalies[0]
    return str(first.get("invariant") or first.get("type"))


def independent(entries: Sequence[dict[str, Any]], history: list[dict[str, Any]] | None
                ) -> bool:
    """Whether the independent invariant layer alone flags a journal whose chain verifies."""
    verdict = verify(render(entries))
    return bool(verdict.anomalies) or bool(invariants.check(verdict.entries, history, True))


def score(srcs: Sequence[Source], operators: Sequence[str] | None = None,
          journal_only: bool = False) -> dict[str, Score]:
    """operator -> its score over every site of every source (with the target's record,
    or, ``journal_only``, from the journals alone)."""
    names = list(operators or mutations.OPERATORS)
    scores = {name: Score() for name in names}
    for src in srcs:
        verdict = oracle.check(list(src.entries), history=src.history, complete=True)
        if verdict.valid is False:
            raise InvalidSource(f"{src.name}: the oracle rejects the unmutated kernel journal "
                                f"({verdict.first}); replay it with python3 run_all.py "
                                f"--replay SEED --system kernel --tier TIER")
        record = None if journal_only else src.history
        for m in mutations.mutants(src.entries, record, names):
            s = scores[m.operator]
            s.made += 1
            by = caught_by(m.entries, m.history)
            s.independent += independent(m.entries, m.history)
            if by is None:
                s.missed.append(f"{src.name}: {m.site}")
            else:
                s.caught += 1
                s.by[by] = s.by.get(by, 0) + 1
    return scores


def table(scores: dict[str, Score], missed: int) -> str:
    made = sum(s.made for s in scores.values())
    caught = sum(s.caught for s in scores.values())
    rows = [f"{'operator':<30} {'caught':>7} {'made':>6} {'score':>7} {'K-layer':>8}  "
            f"caught first by"]
    for name, s in scores.items():
        by = ", ".join(f"{k} {v}" for k, v in sorted(s.by.items(), key=lambda kv: -kv[1]))
        rows.append(f"{name:<30} {s.caught:>7} {s.made:>6} {100 * s.rate:>6.1f}% "
                    f"{s.independent:>8}  {by}")
        rows += [f"    missed {where}  (python -m sim.corpus --operator {name} --missed 99)"
                 for where in s.missed[:missed]]
    total = 100 * caught / made if made else 100.0
    alone = sum(s.independent for s in scores.values())
    rows.append(f"{'all operators':<30} {caught:>7} {made:>6} {total:>6.1f}% {alone:>8}")
    return "\n".join(rows)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(254)


def main(argv: Sequence[str] | None = None) -> int:
    ap = _Parser(prog="python -m sim.corpus", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=0, metavar="N",
                    help="also mutate the kernel runs of sweep plans 0..N-1 (default 0)")
    ap.add_argument("--operator", action="append", choices=sorted(mutations.OPERATORS),
                    metavar="NAME", help="only this operator (repeatable); default: all")
    ap.add_argument("--missed", type=int, default=3, metavar="K",
                    help="list up to K missed mutants per operator (default 3)")
    ap.add_argument("--journal-only", action="store_true",
                    help="judge the mutants without the target's record (operators on the "
                         "record then make none)")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = ap.parse_args(argv)
    if args.seeds < 0 or args.missed < 0:
        ap.error("--seeds and --missed must be 0 or more")
    print(f"corpus: fixed table (seed {FIXED_SEED}), every fault x {len(TIER_NAMES)} tiers"
          + (f", plus sweep plans 0..{args.seeds - 1}" if args.seeds else ""), flush=True)
    try:
        scores = score(list(sources(args.seeds)), args.operator, args.journal_only)
    except InvalidSource as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({k: {"made": s.made, "caught": s.caught, "by": s.by,
                              "independent": s.independent,
                              "missed": s.missed} for k, s in scores.items()}, indent=1))
    else:
        print(table(scores, args.missed))
    return 0 if all(s.caught == s.made for s in scores.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
