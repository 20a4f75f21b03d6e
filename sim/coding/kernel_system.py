"""The kernel system of the coding table: the claims kernel driving the repository target.

How it works. A unit's change is planned on the tree it read (``kernel.changes.plan``: after-images,
before-image digests, normalised symbol digests of what it reads and defines, digests of its
verifying tests) and proposed with its coordination: the items it writes (claimed, fenced),
the symbols it reads (overlaps recorded), its cost against the shared budget, its plan
version, and ``verify``. Every Authorize, Dispatch and Recover carries the journal-wide view
folded from the journal at that instant (``kernel.view.fold``) and the plan's current
version. A Blocked admission waits and asks again. A send carries the fencing token, and the
target journals the change's images before writing. An ack makes the change LANDED; the
control plane runs the repository's tests itself and steps the result; a failure restores
the before-images. After a crash, the target first completes half-written changes forward
(its image journal), then the kernel recovers every open unit from the journal alone.
"""

from __future__ import annotations

from typing import Any

from kernel import (
    Authorize,
    Coordination,
    Dispatch,
    Lookup,
    Plan,
    Proposal,
    Propose,
    Recover,
    Reply,
    State,
    Verification,
    changes,
    symbols,
)
from kernel.view import fold
from sim.coding.model import merge
from sim.coding.story import CAPS, UNITS, WORK, Job
from sim.coding.systems import CLAIM_TTL, POLL, CodingWorker, Original, Proc, payload_of
from sim.tiers import TIMING

VERIFY_MS = 300  # ms the control plane's test run takes
REPLANS = 2  # a unit refused because what it relied on changed is planned again this often
REPLAN_ON = ("premise_stale", "read_overlap_moved")
REPLAN_WAIT = 1_000


class KernelSystem(Original):
    fencing = True

    def __init__(self) -> None:
        super().__init__("kernel")

    def handle(self, node: Any, job: Job, rerun: bool, replans: int = 0) -> Proc:
        kw = self.worker(node)
        unit, story = job.unit, node.story
        node.decide(job, rerun)
        tree = story.repo.tree()
        writes = merge(tree, list(unit.ops))
        change, premises = changes.plan(tree, unit.name, writes, unit.tests)
        premises["tests:untouched"] = "yes"
        lease = story.lease(unit.agent, node.now)
        cap = story.plan.cap
        coordination = Coordination(
            writes=change.items, reads=tuple(f"sym:{n}" for n in symbols.reads(tree, writes)),
            ttl=max(1, min(story.plan.claim_ttl or CLAIM_TTL, lease.expires_at - node.now)),
            budget="shared" if cap is not None else None,
            cost=unit.cost if cap is not None else 0, cap=cap or 0, plan=unit.plan,
            plan_version=story.plan_version(unit.plan, job.at), verify=True)
        proposal = Proposal(payload=payload_of(unit, change, journaled=True), premises=premises,
                            lease=lease.id, capabilities=CAPS, timing=TIMING, target="repo",
                            coordination=coordination)
        eid = proposal.effect_id
        story.changes[eid] = change
        story.journaled.add(eid)
        for cmd in kw.apply(Propose(node.now, proposal)):
            if isinstance(cmd, Reply):
                if cmd.outcome == "already_final" and replans:
                    self.finish(kw, job, eid)  # planned again: the same change, decided
                else:
                    node.complete(job, cmd.outcome)
                return
        yield from self.authorize(kw, job, eid)
        if kw.state(eid) is State.AUTHORIZED:
            yield node.wait(WORK)
        yield from kw.advance(eid)
        effect = kw.effects.by_id.get(eid)
        if effect is not None and effect.state is State.REFUSED and replans < REPLANS and \
                str(effect.reason).startswith(REPLAN_ON) and node.alive:
            node.log("agent", "replan", f"{unit.name} refused ({effect.reason}): the agent "
                                        f"plans again on the tree as it is now")
            yield node.wait(REPLAN_WAIT)
            yield from self.handle(node, job, True, replans + 1)
            return
        self.finish(kw, job, eid)

    def authorize(self, kw: CodingWorker, job: Job, eid: str) -> Proc:
        node = kw.node
        while kw.state(eid) is State.PROPOSED:
            blocked = [c for c in kw.apply(self.event(kw, eid, State.PROPOSED, None), eid)
                       if type(c).__name__ == "Blocked"]
            if not blocked:
                return
            until = min(b.until for b in blocked)
            node.log("kernel", "blocked", f"{job.unit.name} waits: {', '.join(blocked[0].items)} "
                                          f"claimed until {until}")
            yield node.wait_until(min(until, node.now + POLL))

    def facts(self, kw: CodingWorker, eid: str, names: list[str]) -> dict[str, Any]:
        story = kw.node.story
        tree = story.repo.tree()
        change = kw.change(eid)
        own = changes.own_landed(tree, change, story.repo.befores(change))
        out: dict[str, Any] = changes.facts(tree, [n for n in names if n != "tests:untouched"],
                                          own)
        if "tests:untouched" in names:
            out["tests:untouched"] = "no" if change.edits_own_tests() else "yes"
        return out

    def event(self, kw: CodingWorker, eid: str, state: State, lookup: Lookup | None) -> Any:
        node = kw.node
        if node.disk.length != kw.chain.seq:
            kw.load()
        effect = kw.effects.by_id[eid]
        unit = UNITS[effect.proposal.payload["unit"]]
        lease = node.story.lease(unit.agent, node.now)
        facts = self.facts(kw, eid, list(effect.proposal.premise_names))
        view = fold(node.disk.entries)
        plan = Plan(unit.plan, node.story.plan_version(unit.plan, node.now))
        if state is State.PROPOSED:
            return Authorize(node.now, lease, facts, view=view, plan=plan, seq=kw.chain.seq)
        if state is State.AUTHORIZED:
            return Dispatch(node.now, lease, facts, view=view, plan=plan)
        return Recover(node.now, lease, facts, lookup, view=view, plan=plan)

    def command(self, kw: CodingWorker, eid: str, cmd: Any) -> Proc:
        node, story = kw.node, kw.node.story
        kind = type(cmd).__name__
        if kind == "Verify":
            while story.verifying_until > node.now:  # one test run at a time
                yield node.wait_until(story.verifying_until)
            story.verifying_until = node.now + VERIFY_MS
            yield node.wait(VERIFY_MS)
            if kw.state(eid) is not State.LANDED:
                return
            result = story.repo.verify(self.verified_tree(kw, eid))
            node.log("kernel", "verify", f"the control plane ran the tests: {result}")
            for extra in kw.apply(Verification(node.now, result), eid):
                yield from self.command(kw, eid, extra)
        elif kind == "Restore":
            change = kw.change(eid)
            story.repo.restore(change)
            story.restored.append((change.unit, node.now))
            node.log("target", "restore", f"before-images of {change.unit} restored")

    @staticmethod
    def verified_tree(kw: CodingWorker, eid: str) -> dict[str, str]:
        """The tree with this change, without other changes that landed and are not verified
        yet: each change is verified on what is committed plus itself."""
        repo = kw.node.story.repo
        tree: dict[str, str] = repo.tree()
        for other, effect in kw.effects.by_id.items():
            if other == eid or effect.state not in (State.DISPATCHED, State.LANDED):
                continue
            change = kw.change(other)
            for w in change.writes:
                befores = repo.befores(change)
                if w.path in befores:
                    text = changes.revert(tree.get(w.path), befores[w.path], w.after)
                    if text is None:
                        tree.pop(w.path, None)
                    else:
                        tree[w.path] = text
        return tree

    def admit(self, kw: CodingWorker, job: Job, change: changes.Change, eid: str) -> str | None:
        return None  # admission is the kernel's (Authorize with the journal-wide view)

    def finish(self, kw: CodingWorker, job: Job, eid: str) -> None:
        effect = kw.effects.by_id.get(eid)
        if effect is not None and effect.state.final:
            kw.node.complete(job, f"{effect.state.value} ({effect.reason})")

    def boot(self, kw: CodingWorker) -> None:
        done = kw.node.story.repo.recover()
        if done:
            kw.node.log("target", "recover", f"the repository completes {len(done)} "
                                             f"half-written change(s) forward")
