"""The five systems of the coding table, behind the world's system interface.

How it works. Every system gets the same jobs (one unit of work each) on the same world and
lands changes only through requests to the repository target. An agent reads the tree when
its unit arrives, works ``WORK`` ms, then its change is submitted.

- naive: no coordination; the patch is merged blindly when the agent is done; after a crash
  the agent runs its task again.
- advisory: lock files for the files it writes (public coordination tools' claim files):
  wait while another agent's unexpired lock is there; no premises, lease or budget checks.
- filehash / symbol: the original system: the per-effect kernel (journal, lease and
  premises at dispatch and recovery, lookup) with an in-memory claims registry that ends with
  the lease, a per-effect budget check against a running total kept in memory, the plan
  version as a premise, no verification and no fencing; its target has no image journal.
  Premises: the hash of every file the change writes or reads from (filehash), or the name
  and arity of each symbol it reads (symbol).
- kernel: this project: claims with fencing tokens, admission against the journal-wide view
  (write set unclaimed, read overlaps, budget reserved, plan current), normalised symbol
  digests as premises, images journaled by the target, verification run by the control plane
  before COMMITTED, before-images restored when it fails, a change editing its own verifying
  tests refused.
"""

from __future__ import annotations

import ast
from collections.abc import Generator
from typing import Any

from faults.systems import KernelWorker
from kernel import (
    Ack,
    Alert,
    Authorize,
    Dispatch,
    Lookup,
    Proposal,
    Propose,
    Recover,
    Reply,
    Send,
    State,
    changes,
    symbols,
)
from sim.coding.model import merge
from sim.coding.story import CAPS, WORK, Job
from sim.tiers import TIMING

Proc = Generator[Any, Any, None]
LOCK_TTL = 5_000  # ms an advisory lock file is honoured
CLAIM_TTL = 30_000  # ms a kernel claim lasts unless the agent's lease ends sooner
POLL = 200  # ms between checks of a lock or claim that is held


def payload_of(unit: Any, change: changes.Change, **extra: Any) -> dict[str, Any]:
    return {"kind": "change", "unit": unit.name, "change": change.as_json(), **extra}


# ---------------------------------------------------------------- naive and advisory


class Naive:
    name = "naive"

    def handle(self, node: Any, job: Job, rerun: bool) -> Proc:
        payload = node.decide(job, rerun)
        if not (yield from self.before(node, job)):
            return
        yield node.wait(WORK)
        if node.reach("before_send"):
            return
        resp = yield node.call(None, {"kind": "patch", "unit": job.unit.name,
                                      "ops": payload["ops"]}, timeout=TIMING.send_timeout)
        if node.reach("after_ack"):
            return
        self.after(node, job)
        node.complete(job, resp.kind if resp else "no answer")

    def before(self, node: Any, job: Job) -> Generator[Any, Any, bool]:
        return True
        yield

    def after(self, node: Any, job: Job) -> None:
        return None

    def restart(self, node: Any, jobs: list[Job]) -> Proc:
        for job in jobs:
            node.spawn(self.handle(node, job, True))
        return
        yield


class Advisory(Naive):
    name = "advisory"

    def before(self, node: Any, job: Job) -> Generator[Any, Any, bool]:
        locks = node.story.__dict__.setdefault("locks", {})  # lock files: survive a crash
        paths = sorted({op["path"] for op in job.unit.ops})
        waited = 0
        while True:
            held = [p for p in paths if p in locks and locks[p][0] != job.unit.agent
                    and locks[p][1] > node.now]
            if not held:
                break
            if waited > 20 * POLL:
                node.complete(job, f"gave up waiting for the lock on {held[0]}")
                return False
            yield node.wait(POLL)
            waited += POLL
        for p in paths:
            locks[p] = (job.unit.agent, node.now + LOCK_TTL)
        node.log("agent", "lock", f"{job.unit.agent} writes lock files for {', '.join(paths)}")
        return True

    def after(self, node: Any, job: Job) -> None:
        locks = node.story.__dict__.setdefault("locks", {})
        for p in {op["path"] for op in job.unit.ops}:
            if p in locks and locks[p][0] == job.unit.agent:
                del locks[p]


# ---------------------------------------------------------------- the kernel-driven systems


class CodingWorker(KernelWorker):
    """The kernel driver for one incarnation: one journal, effects advanced to a final state."""

    def __init__(self, node: Any, system: Any) -> None:
        super().__init__(node)
        self.system = system

    def change(self, eid: str) -> changes.Change:
        return changes.Change.from_json(self.effects.by_id[eid].proposal.payload["change"])

    def advance(self, eid: str, early: Lookup | None = None) -> Proc:
        node, lookup = self.node, early  # (no coding plan offers an early lookup)
        while True:
            state = self.state(eid)
            if state is None or state.final:
                return
            event = self.system.event(self, eid, state, lookup)
            lookup = None
            for cmd in self.apply(event, eid):
                kind = type(cmd).__name__
                if kind == "Send":
                    if node.reach("before_send"):
                        return
                    yield self.send(cmd)
                elif kind == "WaitUntil":
                    yield node.wait_until(cmd.time)
                elif kind == "Query":
                    asked = node.now
                    found = yield node.query(eid)
                    lookup = Lookup(found, asked)
                elif kind == "Surface":
                    node.log("kernel", "surface", f"AMBIGUOUS surfaced: {cmd.reason}")
                elif kind == "Alert":
                    node.run.alerts.append(f"{cmd.invariant}: {cmd.message}")
                elif kind == "Blocked":
                    yield node.wait_until(min(cmd.until, node.now + POLL))
                else:
                    yield from self.system.command(self, eid, cmd)

    def send(self, cmd: Send) -> Any:
        node, eid = self.node, cmd.effect_id
        payload = dict(cmd.payload)
        token = getattr(cmd, "token", None)
        if token is not None and self.system.fencing:
            payload["token"] = token

        def on_answer(resp: Any) -> None:
            if resp.kind in ("applied", "deduplicated"):
                if self.state(eid) is not State.DISPATCHED:
                    return  # already landed or final: the journal has what it needs
                for extra in self.apply(Ack(node.now, cmd.attempt), eid, point="after_ack"):
                    if isinstance(extra, Alert):
                        node.run.alerts.append(f"{extra.invariant}: {extra.message}")
            else:
                node.log("target", "reject", f"the repository refuses the write: {resp.kind}")

        return node.call(cmd.idempotency_key, payload, deadline=None, effect_id=eid,
                         attempt=cmd.attempt, timeout=max(1, cmd.deadline - node.now),
                         on_answer=on_answer)


def sig(tree: dict[str, str], name: str) -> str:
    """The original symbol mode's premise: a symbol's name and arity only."""
    for path in sorted(tree):
        try:
            module = ast.parse(tree[path])
        except SyntaxError:
            continue
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return f"{name}/{len(node.args.args)}"
    return "absent"


class Original:
    """The original system's per-effect gate, in file-hash or symbol (name+arity) mode."""

    fencing = False

    def __init__(self, mode: str) -> None:
        self.name = mode
        self.mode = mode

    def worker(self, node: Any) -> CodingWorker:
        kw: CodingWorker | None = node.memory.get("kernel")
        if kw is None:
            kw = node.memory["kernel"] = CodingWorker(node, self)
        return kw

    # premises ---------------------------------------------------------------

    def premise_names(self, tree: dict[str, str], change: changes.Change) -> list[str]:
        writes = {w.path: w.after for w in change.writes}
        reads = symbols.reads(tree, writes)
        names = [f"file:{w.path}" for w in change.writes]
        if self.mode == "filehash":
            names += [f"file:{p}" for p in sorted(tree) if p.endswith(".py")
                      and reads & set(symbols.definitions(tree[p]) or {})]
        else:
            names += [f"sig:{n}" for n in sorted(reads)]
        return sorted(set(names))

    def facts(self, kw: CodingWorker, eid: str, names: list[str]) -> dict[str, Any]:
        story, now = kw.node.story, kw.node.now
        tree = story.repo.tree()
        out: dict[str, Any] = {}
        for name in names:
            kind, _, arg = name.partition(":")
            if kind == "file":
                out[name] = changes.file_digest(tree.get(arg))
            elif kind == "sig":
                out[name] = sig(tree, arg)
            elif kind == "plan":
                out[name] = story.plan_version(arg, now)
            elif kind == "tests":
                out[name] = "untouched"
        return out

    # the job ------------------------------------------------------------------

    def handle(self, node: Any, job: Job, rerun: bool) -> Proc:
        kw = self.worker(node)
        unit, story = job.unit, node.story
        node.decide(job, rerun)
        tree = story.repo.tree()
        # the original knew no verifying tests: its changes name none
        change, _ = changes.plan(tree, unit.name, merge(tree, list(unit.ops)), ())
        names = self.premise_names(tree, change) + [f"plan:{unit.plan}"]
        proposal = self.proposal(kw, job, change, names)
        eid = proposal.effect_id
        story.changes[eid] = change
        for cmd in kw.apply(Propose(node.now, proposal)):
            if isinstance(cmd, Reply):
                node.complete(job, cmd.outcome)
                return
        refusal = self.admit(kw, job, change, eid)
        if refusal is not None:
            node.complete(job, refusal)
            return
        yield from self.authorize(kw, job, eid)
        if kw.state(eid) is State.AUTHORIZED:
            yield node.wait(WORK)
        yield from kw.advance(eid)
        self.finish(kw, job, eid)

    def proposal(self, kw: CodingWorker, job: Job, change: changes.Change,
                 names: list[str]) -> Proposal:
        premises = self.facts(kw, "", names)
        premises[f"plan:{job.unit.plan}"] = kw.node.story.plan_version(job.unit.plan, job.at)
        return Proposal(payload=payload_of(job.unit, change), premises=premises,
                        lease=f"lease-{job.unit.agent}", capabilities=CAPS, timing=TIMING,
                        target="repo")

    def admit(self, kw: CodingWorker, job: Job, change: changes.Change, eid: str) -> str | None:
        """The in-memory claims registry and the per-effect budget check."""
        node, story = kw.node, kw.node.story
        reg = node.memory.setdefault("registry", {})
        lease = story.lease(job.unit.agent, node.now)
        for item in change.items:
            held = reg.get(item)
            if held and held[0] != eid and held[1] > node.now:
                return f"REFUSED (claimed: {item})"
        if story.plan.cap is not None:
            spent = node.memory.setdefault("spent", 0)
            if spent + job.unit.cost > story.plan.cap:
                return "REFUSED (over budget)"
        for item in change.items:
            reg[item] = (eid, lease.expires_at)
        return None

    def authorize(self, kw: CodingWorker, job: Job, eid: str) -> Proc:
        kw.apply(self.event(kw, eid, State.PROPOSED, None), eid)
        return
        yield

    def event(self, kw: CodingWorker, eid: str, state: State, lookup: Lookup | None) -> Any:
        effect = kw.effects.by_id[eid]
        node = kw.node
        unit = node.story.decision_of(effect.proposal.payload)
        agent = _agent(unit)
        lease = node.story.lease(agent, node.now)
        facts = self.facts(kw, eid, list(effect.proposal.premise_names))
        if state is State.PROPOSED:
            return Authorize(node.now, lease, facts)
        if state is State.AUTHORIZED:
            return Dispatch(node.now, lease, facts)
        return Recover(node.now, lease, facts, lookup)

    def command(self, kw: CodingWorker, eid: str, cmd: Any) -> Proc:
        return
        yield

    def finish(self, kw: CodingWorker, job: Job, eid: str) -> None:
        node = kw.node
        effect = kw.effects.by_id.get(eid)
        if effect is None or not effect.state.final:
            return
        if effect.state is State.COMMITTED:
            node.memory["spent"] = node.memory.get("spent", 0) + job.unit.cost
        reg = node.memory.setdefault("registry", {})
        for item in [i for i, v in reg.items() if v[0] == eid]:
            del reg[item]
        node.complete(job, f"{effect.state.value} ({effect.reason})")

    def restart(self, node: Any, jobs: list[Job]) -> Proc:
        kw = self.worker(node)
        kw.load(restart=True)
        self.boot(kw)
        units = {e.proposal.payload.get("unit"): eid for eid, e in kw.effects.by_id.items()}
        for eid, effect in list(kw.effects.by_id.items()):
            if not effect.state.final:
                node.spawn(self.resume(kw, eid, jobs))
        for job in jobs:
            known = units.get(job.unit.name)
            if known is None:
                node.spawn(self.handle(node, job, True))
            elif kw.effects.by_id[known].state.final:
                self.finish(kw, job, known)
        return
        yield

    def boot(self, kw: CodingWorker) -> None:
        return None

    def resume(self, kw: CodingWorker, eid: str, jobs: list[Job]) -> Proc:
        kw.node.log("kernel", "recover", "recovery: a change open in the journal")
        yield from kw.advance(eid)
        unit = kw.effects.by_id[eid].proposal.payload.get("unit")
        for job in jobs:
            if job.unit.name == unit and not job.done:
                self.finish(kw, job, eid)


def _agent(unit: str) -> str:
    from sim.coding.story import UNITS
    return UNITS[unit].agent
