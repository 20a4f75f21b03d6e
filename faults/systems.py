"""The four systems of DESIGN.md section 5, behind one interface.

How it works. A system has a ``name`` and two generator functions the world runs as SimPy
processes: ``handle(node, job, rerun)`` carries out one submitted job, and
``restart(node, jobs)`` runs in a fresh incarnation after a crash with the jobs that never
finished. Everything a system touches goes through its ``node`` (sim.world.Node): the clock
(``wait``), the agent (``decide``), the network (``call``, ``query``), the disk, the lease and
the facts, and the crash points (``reach``: True means this worker just died, stop now).
Volatile state lives in ``node.memory`` and dies with the node. This module imports no
simulator code: any world that offers the same node runs these systems.

- naive: no journal; a crash means the agent runs again (and may re-decide); one HTTP retry
  on a timeout.
- idempotency: a stable key derived from the request; retries with it; no lease or premise
  checks.
- durable: the decision and step results are recorded and replayed; a step started without
  a recorded result is re-run with the same key (at-least-once); no re-check. The engine
  holds the workflow lock: only one restarted worker resumes a workflow.
- kernel: the exactly-once kernel, driven as its API asks (see ``KernelWorker``).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

import kernel
from kernel import (
    Ack,
    Alert,
    Append,
    Authorize,
    Dispatch,
    Effects,
    KernelError,
    Lookup,
    LookupAnswer,
    Proposal,
    Propose,
    Query,
    Recover,
    Reply,
    Send,
    State,
    Surface,
    WaitUntil,
)

Proc = Generator[Any, Any, None]
DISPATCH_DELAY = 50  # ms between the decision and the dispatch (approval queue, tool call)
LEASE_ID = "lease-agent-7"
# The durable engine's record lines: JSONEncoder(sort_keys=True)'s C encoder, made once (a
# record is plain data without cycles: no markers needed).
_encode_pieces = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ": ", ", ",
    True, False, True)


class Naive:
    name = "naive"
    retries = 1

    def key(self, node: Any, job: Any) -> str | None:
        return None

    def handle(self, node: Any, job: Any, rerun: bool) -> Proc:
        payload = node.decide(job, rerun)
        yield node.wait(DISPATCH_DELAY)
        if node.reach("before_send"):
            return
        key = self.key(node, job)
        resp = None
        for attempt in range(1, self.retries + 2):
            resp = yield node.call(key, payload, attempt=attempt,
                                   timeout=node.timing.send_timeout)
            if resp is not None:
                break
        if node.reach("after_ack"):
            return
        node.complete(job, resp.kind if resp else "gave up after timeouts")

    def restart(self, node: Any, jobs: list[Any]) -> Proc:
        for job in jobs:
            node.spawn(self.handle(node, job, True))
        return
        yield


class Idempotency(Naive):
    """A stable key from the request (order, case); retries reuse it; no checks."""

    name = "idempotency"
    retries = 2

    def key(self, node: Any, job: Any) -> str | None:
        return "idem-" + node.story.decision(job)


class Durable:
    """Recorded decision, at-least-once steps with a stable key, no re-check."""

    name = "durable"
    retries = 3

    def handle(self, node: Any, job: Any, rerun: bool) -> Proc:
        wf = self.workflows(node)
        wid = node.story.decision(job)
        if wid in wf["result"]:
            node.complete(job, wf["result"][wid])
            return
        wf["jobs"].setdefault(wid, []).append(job)
        if wid in wf["running"]:
            if node.tracing:
                node.log("kernel", "attach", f"engine attaches job {job.id} to running workflow")
            return
        payload = wf["decided"].get(wid)
        if payload is None:
            payload = node.decide(job, rerun)
            self.record(node, {"wf": wid, "kind": "decided", "payload": payload})
            wf["decided"][wid] = payload
        yield from self.step(node, wid, payload)

    def step(self, node: Any, wid: str, payload: dict[str, Any]) -> Proc:
        wf = self.workflows(node)
        wf["running"].add(wid)
        yield node.wait(DISPATCH_DELAY)
        if node.reach("before_send"):
            return
        self.record(node, {"wf": wid, "kind": "started"})
        resp = None
        for attempt in range(1, self.retries + 2):
            resp = yield node.call(wid + "/refund", payload, attempt=attempt,
                                   timeout=node.timing.send_timeout)
            if resp is not None:
                break
        result = resp.kind if resp else "gave up after timeouts"
        line = self.line({"wf": wid, "kind": "result", "result": result})
        if node.reach("after_ack", line):
            return
        node.disk.append(line, True)
        wf["result"][wid] = result
        wf["running"].discard(wid)
        for job in wf["jobs"].pop(wid, []):
            node.complete(job, result)

    def restart(self, node: Any, jobs: list[Any]) -> Proc:
        if node.index > 0:
            return  # the engine's workflow lock: one worker resumes each workflow
        wf = self.workflows(node)
        for line in node.disk.lines:
            rec = json.loads(line)
            if rec["kind"] == "decided":
                wf["decided"][rec["wf"]] = rec["payload"]
            elif rec["kind"] == "result":
                wf["result"][rec["wf"]] = rec["result"]
        node.disk.truncate(len(node.disk.lines))
        node.log("kernel", "replay", f"engine replays {len(node.disk.lines)} history records")
        for job in jobs:
            node.spawn(self.handle(node, job, True))
        return
        yield

    @staticmethod
    def workflows(node: Any) -> dict[str, Any]:
        return node.memory.setdefault("wf", {"decided": {}, "result": {}, "running": set(),
                                             "jobs": {}})

    @staticmethod
    def line(record: dict[str, Any]) -> str:
        return "".join(_encode_pieces(record, 0)) + "\n"

    def record(self, node: Any, record: dict[str, Any]) -> None:
        node.disk.append(self.line(record), True)
        node.log("journal", record["kind"], f"engine records {record['kind']}")


class KernelWorker:
    """One incarnation's kernel driver: volatile effects, the chain head, the journal.

    Every event goes through ``apply``: if another worker appended to the shared journal since
    this one last read it, the view is rebuilt from the disk first (a conditional append, as
    a lock or O_APPEND check would give), then the kernel steps, journal entries are sealed and
    written in order, and the remaining commands are returned for the caller to carry out.
    """

    def __init__(self, node: Any) -> None:
        self.node = node
        self.effects = Effects()
        self.chain = kernel.Chain()

    def load(self, restart: bool = False) -> None:
        node = self.node
        verdict = kernel.verify(node.disk.text())
        entries = verdict.entries
        if verdict.valid is not True:
            node.run.errors.append(f"journal invalid at restart: {verdict.anomalies[0]}")
        if restart:
            node.disk.truncate(len(entries))
            note = "; ".join(verdict.notes)
            node.log("journal", "verify", f"journal verified: {len(entries)} entries"
                     + (f" ({note})" if note else ""))
        self.effects = Effects(kernel.replay(entries))
        self.chain = kernel.Chain(len(entries), entries[-1]["hash"] if entries else
                                  kernel.GENESIS)

    def apply(self, event: Any, eid: str | None = None, point: str | None = None) -> list[Any]:
        node = self.node
        if not node.alive:
            return []
        self.refresh()
        try:
            commands = self.effects.apply(event, eid)
        except KernelError as exc:
            node.run.errors.append(f"kernel refused {type(event).__name__}: {exc}")
            return []
        rest = []
        for cmd in commands:
            if type(cmd) is Append:
                entry, line = self.chain.seal(cmd.entry)
                if point is not None and node.reach(point, line):
                    return []
                point = None
                node.disk.append(line, cmd.fsync, entry)
                if node.tracing:
                    state = self.effects.by_id[entry["effect_id"]].state
                    node.log("journal", entry["kind"], self.describe(entry, cmd.fsync),
                             state=state.value, seq=entry["seq"])
            else:
                rest.append(cmd)
        return rest

    @staticmethod
    def describe(entry: dict[str, Any], fsync: bool) -> str:
        kind = entry["kind"]
        extra = entry.get("reason") or entry.get("via") or ""
        if kind == "DISPATCHED":
            extra = f"attempt {entry['attempt']} ({entry['phase']})"
        sync = ", fsync" if fsync else ""
        return f"{kind} {extra}".strip() + sync

    def refresh(self) -> None:
        """Re-read the journal if another worker appended (the conditional append), unless
        this world breaks that assumption."""
        node = self.node
        if node.disk.length != self.chain.seq and node.plan.breaks != "conditional_append":
            self.load()

    def state(self, eid: str) -> State | None:
        self.refresh()
        effect = self.effects.by_id.get(eid)
        return effect.state if effect is not None else None

    def observe(self, eid: str) -> tuple[kernel.Lease, dict[str, int]]:
        """Lease and facts now, excluding our own refund where the target can identify it."""
        node = self.node
        return node.lease(), node.facts(eid if node.caps.queryable else None)

    def advance(self, eid: str, early: Lookup | None = None) -> Proc:
        """Drive one effect to a final state: authorize, dispatch, await, recover. ``early``
        (plan.eager_lookup): a lookup answer offered to every recovery step that has no
        fresher one (the kernel must count only answers asked after the claim's end)."""
        node = self.node
        lookup = early
        while True:
            state = self.state(eid)
            if state is None or state.final:
                return
            lease, facts = self.observe(eid)
            if state is State.PROPOSED:
                event: Any = Authorize(node.now, lease, facts)
            elif state is State.AUTHORIZED:
                event = Dispatch(node.now, lease, facts)
            else:
                event = Recover(node.now, lease, facts, lookup)
                if lookup is not None and lookup is early and \
                        node.now >= self.effects.by_id[eid].claim_until > early.asked_at:
                    node.run.took.add("early lookup")  # offered where it must not count
                lookup = early
                if node.generation:
                    seen = node.run.recoverers_seen.setdefault(eid, set())
                    seen.add(node.index)
                    if len(seen) > 1:
                        node.run.took.add("two recoverers")  # a second recoverer overlapped
            for cmd in self.apply(event, eid):
                kind = type(cmd)
                if kind is Send:
                    if node.reach("before_send"):
                        return
                    yield self.send(cmd)
                elif kind is WaitUntil:
                    if node.reach("recovering"):
                        return
                    if node.tracing:
                        node.log("kernel", "wait", f"wait until {cmd.time} (claim in flight)")
                    yield node.wait_until(cmd.time)
                elif kind is Query:
                    if node.reach("recovering"):
                        return
                    asked = node.now
                    found = yield node.query(eid)
                    if self.state(eid) in kernel.FINAL_STATES:
                        self.late_lookup(eid, found, asked)
                        return
                    lookup = Lookup(found, asked)
                elif kind is Surface:
                    if node.tracing:
                        node.log("kernel", "surface", f"AMBIGUOUS surfaced: {cmd.reason}")
                elif kind is Alert:
                    node.run.alerts.append(f"{cmd.invariant}: {cmd.message}")

    def late_lookup(self, eid: str, found: bool, asked: int) -> None:
        """A lookup answered after the effect became final: journaled as LATE with when it
        was asked, so the kernel can tell a stale "absent" (asked before another worker's
        resend) from one that contradicts COMMITTED."""
        node = self.node
        for cmd in self.apply(LookupAnswer(node.now, found, asked_at=asked), eid):
            if type(cmd) is Alert:
                node.run.alerts.append(f"{cmd.invariant}: {cmd.message}")

    def send(self, cmd: Send) -> Any:
        node = self.node
        eid = cmd.effect_id

        def on_answer(resp: Any) -> None:
            if resp.kind == "conflict":
                node.run.errors.append("target refused a kernel send as conflicting")
                return
            for extra in self.apply(Ack(node.now, cmd.attempt), eid, point="after_ack"):
                if type(extra) is Alert:
                    node.run.alerts.append(f"{extra.invariant}: {extra.message}")

        return node.call(cmd.idempotency_key, cmd.payload, digest=self.digest(eid),
                         deadline=cmd.deadline, effect_id=eid, attempt=cmd.attempt,
                         timeout=max(1, cmd.deadline - node.now), on_answer=on_answer)

    def digest(self, eid: str) -> str:
        return self.effects.by_id[eid].proposal.payload_digest


class Kernel:
    name = "kernel"

    @staticmethod
    def receipts(run: Any) -> list[dict[str, Any]]:
        """What the kernel reports at the end: one receipt per effect of the durable journal."""
        return [r.as_json() for r in kernel.receipts([e for e in run.disk.entries if e])]

    @staticmethod
    def worker(node: Any) -> KernelWorker:
        kw = node.memory.get("kernel")
        if kw is None:
            kw = node.memory["kernel"] = KernelWorker(node)
        return kw

    def handle(self, node: Any, job: Any, rerun: bool) -> Proc:
        kw = self.worker(node)
        payload = node.decide(job, rerun)
        proposal = Proposal(payload=payload, premises=node.facts(),
                            lease=LEASE_ID, capabilities=node.caps, timing=node.timing,
                            key=node.story.key(job), target=node.tier)
        eid = proposal.effect_id
        for cmd in kw.apply(Propose(node.now, proposal)):
            if type(cmd) is Reply:
                if node.tracing:
                    node.log("kernel", "reply", f"resubmission answered: {cmd.outcome}")
                node.complete(job, cmd.outcome)
                return
        lease, facts = kw.observe(eid)
        kw.apply(Authorize(node.now, lease, facts), eid)
        if kw.state(eid) is State.AUTHORIZED:
            yield node.wait(DISPATCH_DELAY)
        yield from kw.advance(eid)
        self.finish(node, kw, eid, job)

    @staticmethod
    def finish(node: Any, kw: KernelWorker, eid: str, job: Any) -> None:
        effect = kw.effects.by_id.get(eid)
        if effect is not None and effect.state.final:
            node.complete(job, f"{effect.state.value} ({effect.reason})")

    def restart(self, node: Any, jobs: list[Any]) -> Proc:
        kw = self.worker(node)
        kw.load(restart=True)
        for eid, effect in list(kw.effects.by_id.items()):
            if not effect.state.final:
                node.spawn(self.resume(node, kw, eid))
        for job in jobs:
            node.spawn(self.handle(node, job, True))
        return
        yield

    @staticmethod
    def resume(node: Any, kw: KernelWorker, eid: str) -> Proc:
        effect = kw.effects.by_id[eid]
        if effect.claim_until <= node.now and node.reach("recovering"):
            return  # nothing to wait out: the crash comes as recovery starts
        node.log("kernel", "recover", "recovery: effect open in the journal",
                 state=effect.state.value)
        early = None
        if node.plan.eager_lookup and node.caps.queryable:
            asked = node.now
            early = Lookup((yield node.query(eid)), asked)
        yield from kw.advance(eid, early)


SYSTEMS: dict[str, Any] = {s.name: s for s in (Naive(), Idempotency(), Durable(), Kernel())}
SYSTEM_NAMES = tuple(SYSTEMS)
