"""The shared cap in the main world: two bots, one $30 refund cap, crashes (issue 12, item 3).

How it works. A scenario plug-in of ``sim.world`` (its clock, network, disk, target tiers,
crashes and restarts; nothing is copied from it): bot A refunds $20 on order 881 at time 0
and bot B $20 on order 882 at ``plan.duplicate_at``, both against one shared $30 cap. Each
bot's agent makes the original's per-effect check when it decides: it refunds only if what
the target already applied plus its own amount stays within the cap (a refund still in
flight is invisible to it), else it decides $0. The plan's crash points kill the worker
before the send, after the target applied a refund (the commit), or after the ack, and the
restarted worker re-runs or recovers. Systems: the four of ``faults.systems``; for
``kernel`` each refund is a coordinated unit (budget "cap", cost = its amount, cap 30) whose
Authorize, Dispatch and Recover carry the view folded from the one shared journal at that
instant and the seq of the next entry, so the reservation is made in the admission's own
append. The fixed rows run at tier t1, the sweep's cases at each tier in
turn. A run holds the cap when the target applied at most $30; for the kernel the journal
is also judged by ``kernel.invariants`` (G7 among them).

    python -m sim.sharedcap [--seed S] [--cases N] [--out DIR]

prints the seed, writes DIR/sharedcap.md and DIR/sharedcap.json (byte for byte the same for
the same arguments) and exits 1 if the kernel let the cap break in any run, 254 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import kernel
from faults.plans import FaultPlan
from faults.systems import LEASE_ID, SYSTEMS, Kernel, KernelWorker, Proc
from kernel import Authorize, Dispatch, Proposal, Propose, Recover, Reply, State, invariants
from sim.refund import Job
from sim.tiers import TIER_NAMES
from sim.world import simulate

CAP, AMOUNT, ORDERS = 30, 20, (881, 882)
TIER = "t1"

FIXED: dict[str, FaultPlan] = {
    "together, no crash": FaultPlan(name="together, no crash", duplicate_at=10),
    "staggered, no crash": FaultPlan(name="staggered, no crash", duplicate_at=2_000),
    "crash before the send": FaultPlan(name="crash before the send", crash="before_send",
                                       duplicate_at=10, outage=1_500),
    "crash after the commit": FaultPlan(name="crash after the commit", crash="after_apply",
                                        duplicate_at=10, outage=1_500),
    "before the send, then after the commit": FaultPlan(
        name="before the send, then after the commit", crash="before_send",
        recrash="after_apply", duplicate_at=300, outage=800),
    "after the commit, B during the outage": FaultPlan(
        name="after the commit, B during the outage", crash="after_apply", duplicate_at=400,
        outage=3_000),
}


class SharedCapStory:
    """Two refunds against one cap; the agent checks its own refund against the cap."""

    name = "shared_cap"

    def __init__(self) -> None:
        self.applied: dict[int, int] = {}  # order -> dollars the target applied for it
        self.own: dict[str, int] = {}  # effect id -> dollars applied for it

    @staticmethod
    def jobs(plan: FaultPlan) -> list[Job]:
        return [Job(0, 0, AMOUNT, "original"), Job(1, plan.duplicate_at, AMOUNT, "original")]

    @staticmethod
    def order(job: Job) -> int:
        return ORDERS[job.id]

    def decision(self, job: Job) -> str:
        return f"order-{self.order(job)}"

    @staticmethod
    def decision_of(payload: dict[str, Any]) -> str:
        return f"order-{payload['order']}"

    def key(self, job: Job) -> dict[str, int]:
        return {"order": self.order(job)}

    def decide(self, job: Job, rerun: bool, plan: FaultPlan) -> dict[str, Any]:
        room = self.total + job.amount <= CAP  # the per-effect check: in-flight is invisible
        return {"order": self.order(job), "amount": job.amount if room else 0}

    @staticmethod
    def describe(payload: dict[str, Any]) -> str:
        return f"refund ${payload['amount']} on order {payload['order']}"

    def facts(self, exclude: str | None = None) -> dict[str, Any]:
        return {"cap.spent": self.total - self.own.get(exclude or "", 0)}

    def premises_hold(self, decision: str) -> bool:
        return True

    def on_apply(self, payload: dict[str, Any], decision: str, effect_id: str | None) -> None:
        self.applied[payload["order"]] = self.applied.get(payload["order"], 0) + payload["amount"]
        if effect_id is not None:
            self.own[effect_id] = self.own.get(effect_id, 0) + payload["amount"]

    @staticmethod
    def world_event(name: str) -> str | None:
        return None

    @staticmethod
    def conflicts(payload: dict[str, Any], decision: str) -> bool:
        return False

    @property
    def total(self) -> int:
        return sum(self.applied.values())

    def metrics(self) -> dict[str, int]:
        return {"cap": CAP, "spent": self.total}

    def overreached(self) -> bool:
        return self.total > CAP


class BudgetWorker(KernelWorker):
    """The kernel driver with the journal-wide view: every Authorize, Dispatch and Recover
    carries the view folded from the shared journal as it is now, and Authorize the seq its
    entry will get, so admission reserves the cost in that same append."""

    forget_reservations = False  # the planted bug: the reservation is not in the admission

    def apply(self, event: Any, eid: str | None = None, point: str | None = None) -> list[Any]:
        if isinstance(event, (Authorize, Dispatch, Recover)) and event.view is None:
            self.refresh()
            view = kernel.fold(e for e in self.node.disk.entries if e is not None)
            if self.forget_reservations:
                view = replace(view, reserved={})
            extra = {"seq": self.chain.seq} if isinstance(event, Authorize) else {}
            event = replace(event, view=view, **extra)
        return super().apply(event, eid, point)


class LostReservationWorker(BudgetWorker):
    forget_reservations = True


class BudgetKernel(Kernel):
    """The kernel system with each refund a coordinated unit against the shared cap."""

    name = "kernel"
    worker_type: type[BudgetWorker] = BudgetWorker

    def worker(self, node: Any) -> KernelWorker:  # type: ignore[override]
        kw = node.memory.get("kernel")
        if kw is None:
            kw = node.memory["kernel"] = self.worker_type(node)
        return kw

    def handle(self, node: Any, job: Any, rerun: bool) -> Proc:
        kw = self.worker(node)
        payload = node.decide(job, rerun)
        unit = kernel.Coordination(writes=(node.story.decision(job),), budget="cap",
                                   cost=payload["amount"], cap=CAP)
        proposal = Proposal(payload=payload, premises=node.facts(), lease=LEASE_ID,
                            capabilities=node.caps, timing=node.timing,
                            key=node.story.key(job), target=node.tier, coordination=unit)
        eid = proposal.effect_id
        for cmd in kw.apply(Propose(node.now, proposal)):
            if type(cmd) is Reply:
                node.complete(job, cmd.outcome)
                return
        lease, facts = kw.observe(eid)
        kw.apply(Authorize(node.now, lease, facts), eid)
        if kw.state(eid) is State.AUTHORIZED:
            yield node.wait(50)
        yield from kw.advance(eid)
        self.finish(node, kw, eid, job)


class LostReservationKernel(BudgetKernel):
    worker_type = LostReservationWorker


def systems(planted: bool = False) -> dict[str, Any]:
    kernel_system = LostReservationKernel() if planted else BudgetKernel()
    return {**{n: s for n, s in SYSTEMS.items() if n != "kernel"}, "kernel": kernel_system}


def one(plan: FaultPlan, name: str, system: Any, seed: int,
        tier: str = TIER) -> dict[str, Any]:
    run = simulate(plan, system, tier, seed, scenario=SharedCapStory)  # type: ignore[arg-type]
    story = run.story
    assert isinstance(story, SharedCapStory)
    row: dict[str, Any] = {"system": name, "spent": story.total, "held": story.total <= CAP,
                           "outcomes": [j.outcome for j in run.jobs]}
    if name == "kernel":
        entries = [e for e in run.disk.entries if e is not None]
        row["judged"] = sorted({v.invariant for v in invariants.check(
            entries, run.history, complete=True)})
    return row


def plan_from(rng: random.Random, i: int) -> FaultPlan:
    return FaultPlan(name=f"case {i}", crash=rng.choice((None, "before_send", "after_apply",
                                                          "after_ack")),
                     recrash=rng.choice((None, None, "before_send", "after_apply")),
                     duplicate_at=rng.randrange(0, 1_500), outage=rng.randrange(200, 4_000),
                     net_jitter=rng.choice((0, 0, 30, 200)))


def sweep(seed: int, cases: int, planted: bool = False) -> dict[str, Any]:
    table = systems(planted)
    fixed = [{"row": name, **one(plan, sys_name, system, seed)}
             for name, plan in FIXED.items() for sys_name, system in table.items()]
    rng = random.Random(seed)
    plans = [plan_from(rng, i) for i in range(cases)]
    held = {n: 0 for n in table}
    by_tier = {n: {t: 0 for t in TIER_NAMES} for n in table}
    judged = 0
    for i, plan in enumerate(plans):
        tier = TIER_NAMES[i % len(TIER_NAMES)]
        for sys_name, system in table.items():
            row = one(plan, sys_name, system, seed + i, tier)
            held[sys_name] += row["held"]
            by_tier[sys_name][tier] += row["held"]
            judged += bool(row.get("judged"))
    per_tier = {t: len(range(k, cases, len(TIER_NAMES))) for k, t in enumerate(TIER_NAMES)}
    return {"seed": seed, "cases": cases, "cap": CAP, "amount": AMOUNT, "tier": TIER,
            "fixed": fixed, "sweep_held": held, "sweep_held_by_tier": by_tier,
            "cases_by_tier": per_tier, "kernel_runs_flagged": judged}


def render(doc: dict[str, Any]) -> str:
    lines = ["# Shared cap: two bots, one $30 cap, crashes", "",
             f"Seed {doc['seed']}, tier {doc['tier']}; each bot refunds ${doc['amount']}; "
             f"`python -m sim.sharedcap --seed {doc['seed']} --cases {doc['cases']}`.", "",
             "| row | system | spent | cap held | outcomes |", "|---|---|---|---|---|"]
    for r in doc["fixed"]:
        lines.append(f"| {r['row']} | {r['system']} | ${r['spent']} | "
                     f"{'yes' if r['held'] else 'NO'} | {'; '.join(r['outcomes'])} |")
    tiers = list(doc["cases_by_tier"])
    lines += ["", f"Seeded sweep of {doc['cases']} cases (crash points, restarts, start times, "
              f"jitter drawn from seed {doc['seed']}; the tiers in turn): runs that held the "
              f"cap", "", "| system | all | " + " | ".join(
                  f"{t} (of {doc['cases_by_tier'][t]})" for t in tiers) + " |",
              "|---|---|" + "---|" * len(tiers)]
    lines += [f"| {n} | {h} of {doc['cases']} | " + " | ".join(
        str(doc["sweep_held_by_tier"][n][t]) for t in tiers) + " |"
        for n, h in doc["sweep_held"].items()]
    lines += ["", f"Kernel runs whose journal kernel.invariants flags: "
              f"{doc['kernel_runs_flagged']}.", ""]
    return "\n".join(lines)


def write(out: Path, seed: int, cases: int = 300) -> dict[str, Any]:
    """Run the table and the sweep and write out/sharedcap.md and out/sharedcap.json."""
    doc = sweep(seed, cases)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sharedcap.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n",
                                        encoding="utf-8")
    (out / "sharedcap.md").write_text(render(doc), encoding="utf-8")
    return doc


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(254)


def main(argv: list[str]) -> int:
    ap = _Parser(prog="python -m sim.sharedcap", description="Two bots, one "
                                 "$30 refund cap, crashes, in the main world, for every system.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=300, help="seeded sweep cases (default 300)")
    ap.add_argument("--out", default="results", help="directory for sharedcap.md/.json")
    args = ap.parse_args(argv)
    if args.cases < 0:
        ap.error("--cases must be 0 or more")
    print(f"seed {args.seed}")
    out = Path(args.out)
    try:
        doc = write(out, args.seed, args.cases)
    except OSError as exc:
        print(f"sharedcap: cannot write to {out}: {exc.strerror}", file=sys.stderr)
        return 254
    for name, held in doc["sweep_held"].items():
        print(f"{name}: held the cap in {held} of {args.cases}")
    kernel_ok = doc["sweep_held"]["kernel"] == args.cases and all(
        r["held"] for r in doc["fixed"] if r["system"] == "kernel")
    return 0 if kernel_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
