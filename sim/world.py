"""One simulated run: clock, network, disk, target, story, crashes and restarts.

How it works. ``Run`` owns a SimPy environment (integer milliseconds), one
``random.Random(seed)`` split into sub-seeded streams (network, disk), the target for the
tier, the refund story and the fault plan. Jobs arrive at their times and are handed to a
live worker incarnation (``Node``); a system under test (``faults.systems``) handles them as
SimPy processes, calling the network and the disk through its node. When a process reaches
the plan's crash point (``Node.reach``), the live incarnation crashes: it is marked dead,
its processes are interrupted, unflushed disk lines are lost (maybe leaving a torn line),
and after the outage ``recoverers`` new incarnations restart with the unfinished jobs; they
may crash once more at the plan's ``recrash`` point. World events fire before dispatch and
during the first outage. Every request that leaves a worker and
every application by the target is recorded: the measurements use nothing else.

The in-flight bound is a world knob (``plan.in_flight``), the same for every system: the
target drops a request that arrives after its deadline ("deadline"), or the network delivers
within ``MAX_DELIVERY`` ms or loses the request ("bounded"), or neither holds and a slow
request lands whenever it arrives ("neither": the kernel's claim then proves nothing).
``took`` collects the fault kinds that actually took effect in this run (a slow send that
landed after the restart, a torn tail really on disk at the restart...): the coverage
floors count these, not the plan.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections.abc import Callable, Generator
from typing import Any

import simpy
from simpy.events import Initialize

from faults.plans import DEDUP_WINDOW, LEASE_EXPIRY, LEASE_RENEWAL, SEND_TIMEOUT, FaultPlan
from faults.systems import DISPATCH_DELAY, LEASE_ID
from kernel import Capabilities, Lease, replay
from sim.clock import Clock, Livelock, Task
from sim.disk import Disk
from sim.refund import Job, RefundStory
from sim.scenario import Scenario
from sim.target import Request, Response, Target
from sim.tiers import TIMING, capabilities

HORIZON = 3_600_000  # ms: a run that is not over after a simulated hour counts as stuck
RENEWED_LEASE_ID = LEASE_ID + "-renewed"
MAX_DELIVERY = SEND_TIMEOUT  # ms: the delivery bound of the "bounded" world (the claim covers it)
# The three leases an agent can hold (a Lease is immutable: made once, not per question).
LIVE_LEASE = Lease(LEASE_ID, HORIZON * 10, False)
REVOKED_LEASE = Lease(LEASE_ID, HORIZON * 10, True)
RENEWED_LEASE = Lease(RENEWED_LEASE_ID, HORIZON * 10, False)


class Run:
    def __init__(self, plan: FaultPlan, system: Any, tier: str, seed: int,
                 trace: bool = False, scenario: type[Scenario] = RefundStory) -> None:
        self.env = Clock()
        self._net_rng: random.Random | None = None  # made on first use (most runs never do)
        self._disk_rng: random.Random | None = None
        self.plan, self.system, self.tier, self.seed = plan, system, tier, seed
        self.caps = capabilities(tier, plan.lookup_lag)
        if plan.declares_no_bound:  # the kernel is told: waiting out a claim proves nothing
            self.caps = dataclasses.replace(self.caps, bounds_in_flight=False)
        self.timing = TIMING
        self.target = Target(true_capabilities(self.caps, plan.breaks),
                             honours_deadline=plan.in_flight == "deadline")
        self.story: Scenario = scenario()
        configure = getattr(self.story, "configure", None)
        if configure is not None:
            configure(plan)
        self.disk = Disk()
        self.lease_revoked_at: int | None = None  # the decision's lease (LEASE_ID)
        self.lease_expires_at: int | None = None  # its expiry, if the world sets one
        self.lease_renewed = False
        self.events: list[dict[str, Any]] | None = [] if trace else None
        self.history: list[dict[str, Any]] = []
        self.jobs = self.story.jobs(plan)
        self.nodes: list[Node] = []
        self.generation = 0  # the live incarnations' generation (0, then 1 after a restart...)
        self.armed = plan.crash  # the crash point that will kill the live generation
        self.outages: list[list[int | None]] = []  # [crashed at, restarted at]
        self.requests = 0
        self.messages = 0  # traced runs: sends and lookups numbered, so each arrow is exact
        self.alerts: list[str] = []
        self.errors: list[str] = []
        self.effect_state: str | None = None  # traced kernel runs: the effect's state now
        self.sent: list[Request] = []  # every request that left a worker, in order
        self.took: set[str] = set()  # fault kinds that took effect (coverage)
        self.recoverers_seen: dict[str, set[int]] = {}  # effect id -> recovering node indexes
        self.receipts: list[Any] = []  # what the system under test reports at the end

    @property
    def net_rng(self) -> random.Random:
        if self._net_rng is None:
            self._net_rng = random.Random(streams(self.seed)[0])
        return self._net_rng

    @property
    def disk_rng(self) -> random.Random:
        if self._disk_rng is None:
            self._disk_rng = random.Random(streams(self.seed)[1])
        return self._disk_rng

    # ---------------------------------------------------------------- running

    def run(self) -> Run:
        self.nodes.append(Node(self, 0, 0))
        for job in self.jobs:
            self.at(job.at, self.arrive, job)
        for name in self.plan.before_dispatch:
            self.at(DISPATCH_DELAY // 2, self.world_event, name, "before dispatch")
        try:
            self.env.run(until=HORIZON)
        except Livelock as exc:  # a system that never lets time move: its run ends here
            self.errors.append(str(exc))
        report = getattr(self.system, "receipts", None)
        if report is not None:
            self.receipts = report(self)
        return self

    def release(self) -> None:
        """Break the run's reference cycles once it is measured (workers and their processes,
        answers awaited, the queue), so its objects are freed at once rather than left for
        the cycle collector; the measurements (target, journal, jobs, sent...) stay."""
        self.env._queue.clear()
        for node in self.nodes:
            for proc in node.procs:
                proc._target = None  # type: ignore[assignment]
            node.procs.clear()
            node.memory.clear()
        self.nodes.clear()
        for req in self.sent:
            req.reply = None

    def at(self, delay: int, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` ``delay`` ms from now, ordered as a SimPy timeout made now."""
        self.env.call(delay, fn, args)

    @property
    def now(self) -> int:
        return int(self.env._now)

    def log(self, actor: str, kind: str, label: str, state: str | None = None,
            **details: Any) -> None:
        if self.events is None:
            return
        event: dict[str, Any] = {"t": self.now, "actor": actor, "kind": kind, "label": label}
        if details:
            event["details"] = details
        if state is not None:
            self.effect_state = state
        if self.effect_state is not None:
            event["state"] = self.effect_state
        self.events.append(event)

    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.alive]

    def arrive(self, job: Job) -> None:
        job.arrived = True
        if job.kind in ("duplicate", "conflicting"):
            self.took.add("duplicate submit" if job.kind == "duplicate" else "conflicting payload")
        if self.events is not None:
            self.log("agent", "submit", f"job {job.id} submitted ({job.kind})", job=job.id)
        live = self.live()
        if live:
            live[0].spawn(self.system.handle(live[0], job, False))

    # ---------------------------------------------------------------- the world

    def world_event(self, name: str, when: str) -> None:
        if name == LEASE_EXPIRY:
            if self.lease_expires_at is None:
                # the instant the worker next checks: the dispatch, or the restart (the
                # event fires halfway through the dispatch delay or the outage)
                wait = self.plan.outage if when == "during outage" else DISPATCH_DELAY
                self.lease_expires_at = self.now + wait - wait // 2
                self.took.add(f"{name} {when}")
                self.log("world", name, f"lease {LEASE_ID} expires at {self.lease_expires_at}")
            return
        if name in ("revoke_lease", LEASE_RENEWAL):
            if self.lease_revoked_at is None:
                self.lease_revoked_at = self.now
                self.took.add(f"{name} {when}")
                self.lease_renewed = name == LEASE_RENEWAL
                self.log("world", name, f"lease {LEASE_ID} revoked" + (
                    f"; the agent holds lease {RENEWED_LEASE_ID} from now on"
                    if self.lease_renewed else ""))
            return
        label = self.story.world_event(name)
        if label is None:
            self.log("world", name, f"{name.replace('_', ' ')}: nothing to do")
        else:
            self.took.add(f"{name} {when}")
            self.log("world", name, label)

    def lease(self) -> Lease:
        """The lease the agent holds now: after a renewal, a live one the decision never
        named (the kernel must not take it as the decision's authority)."""
        if self.lease_renewed:
            return RENEWED_LEASE
        if self.lease_revoked_at is not None:
            return REVOKED_LEASE
        if self.lease_expires_at is not None:
            return Lease(LEASE_ID, self.lease_expires_at, False)
        return LIVE_LEASE

    def lease_live(self) -> bool:
        """Ground truth: the decision's lease is live now (its last instant is before its
        expiry, never at it)."""
        return self.lease_revoked_at is None and (self.lease_expires_at is None
                                                  or self.now < self.lease_expires_at)

    # ---------------------------------------------------------------- crashes

    def crash(self, writing: str | None = None) -> None:
        """The live incarnations die now: volatile state and unflushed lines are lost."""
        live = self.live()
        if not live:
            return
        active = self.env.active_process
        for node in live:
            node.alive = False
            for proc in node.procs:
                if proc.is_alive and proc is not active and \
                        not isinstance(proc._target, Initialize):
                    proc.interrupt("crash")
        self.outages.append([self.now, None])
        torn = self.disk.crash(lambda: self.disk_rng, self.plan.torn, writing,
                               fsync_lies=self.plan.breaks == "fsync")
        if self.events is not None and self.effect_state is not None:
            self.effect_state = durable_state(self.disk.entries)
        self.log("world", "crash", "worker crashes: volatile state lost"
                 + (" (during recovery)" if self.generation else ""),
                 workers=[n.number for n in live], **({"torn": torn} if torn else {}))
        if self.generation == 0:
            for name in self.plan.during_outage:
                self.at(self.plan.outage // 2, self.world_event, name, "during outage")
        self.at(self.plan.outage, self.restart)

    def crash_generation(self, generation: int, point: str) -> None:
        if generation == self.generation and self.live():
            self.took.add(crash_kind(point, generation))
            self.crash()

    def restart(self) -> None:
        if self.disk.torn:
            self.took.add("torn write")
        if self.generation == 0 and self.open_effect() and self.sent and \
                self.now - self.sent[0].sent_at >= DEDUP_WINDOW - self.timing.dedup_margin:
            self.took.add("late recovery")
        self.generation += 1
        self.armed = self.plan.recrash if self.generation == 1 else None
        self.outages[-1][1] = self.now
        jobs = [j for j in self.jobs if j.arrived and not j.done]
        fresh = []
        for index in range(self.plan.recoverers):
            fresh.append(Node(self, self.generation, index))
            self.nodes.append(fresh[-1])
        self.log("world", "restart", f"{self.plan.recoverers} worker(s) restart",
                 jobs=[j.id for j in jobs], workers=[n.number for n in fresh])
        for node in fresh:
            node.spawn(self.system.restart(node, jobs))

    # ---------------------------------------------------------------- network and target

    def latency(self) -> int:
        plan = self.plan
        if plan.net_jitter:
            return plan.net_latency + int(self.net_rng.expovariate(1.0 / plan.net_jitter))
        return plan.net_latency

    def transmit(self, req: Request) -> None:
        first = self.requests == 0
        self.requests += 1
        req.first = first
        self.sent.append(req)
        if req.effect_id is not None:
            self.history.append({"op": "send", "effect_id": req.effect_id,
                                 "attempt": req.attempt, "ts": req.sent_at})
        delay = self.latency() + (self.plan.slow_send if first else 0)
        if self.plan.in_flight == "bounded" and delay > MAX_DELIVERY:
            self.took.add("delivery bound")
            self.log("network", "lost", "the request is lost (delivery is bounded)",
                     msg=req.msg)
            return
        self.at(delay, self.reach_target, req, first)

    def open_effect(self) -> bool:
        """Whether the durable journal holds an effect sent and never finished."""
        kinds = {e["kind"] for e in self.disk.entries if e is not None}
        return "DISPATCHED" in kinds and not kinds & {"COMMITTED", "REFUSED", "AMBIGUOUS"}

    def reach_target(self, req: Request, first: bool) -> None:
        req.arrived_at = self.now
        if self.plan.in_flight == "neither" and req.deadline is not None \
                and self.now > req.deadline:
            self.took.add("late delivery")  # a target that keeps no bound takes it
        if first and self.plan.slow_send and self.outages and self.outages[0][1] is not None:
            self.took.add("slow send")  # the first request lands after the restart
        resp = self.target.receive(req, self.now)
        req.accepted = resp is not None
        applied = resp is not None and resp.kind == "applied"
        if applied:
            self.story.on_apply(req.payload, req.decision, req.effect_id)
            if req.effect_id is not None:
                self.history.append({"op": "apply", "effect_id": req.effect_id, "ts": self.now,
                                     "payload_digest": req.digest})
        if self.events is not None:
            self.log_arrival(req, resp)
        if resp is None:
            return
        if applied:
            self.reach("after_apply", req.generation)
        if first and self.plan.ack_lost:
            self.took.add("ack lost")
            self.log("network", "lost", "the answer is lost on the way back", msg=req.msg)
            return
        delay = self.latency() + (self.plan.late_ack if first else 0)
        self.at(delay, req.reply, resp)

    def log_arrival(self, req: Request, resp: Response | None) -> None:
        what = self.story.describe(req.payload)
        who = f"attempt {req.attempt}" if req.effect_id else "no key" if req.key is None \
            else "key"
        if resp is None:
            self.log("target", "dropped", f"{what} ({who}) arrived after its deadline: dropped",
                     deadline=req.deadline, msg=req.msg, sender=req.worker)
        elif resp.kind == "applied":
            self.log("target", "applied", f"{what} applied ({who})", key=req.key,
                     msg=req.msg, sender=req.worker, **self.story.metrics())
        else:
            self.log("target", resp.kind, f"{what} ({who}) {resp.kind} by key", key=req.key,
                     msg=req.msg, sender=req.worker)

    def lookup(self, node: Node, effect_id: str, done: simpy.Event, msg: int = 0) -> None:
        def answer() -> None:
            found = self.target.lookup(effect_id, self.now)
            if self.target.lag_matters(effect_id, self.now):
                self.took.add("lookup lag")
            if self.events is not None:
                self.log("target", "lookup",
                         f"lookup by effect id: {'found' if found else 'absent'}",
                         msg=msg, sender=node.number)
            self.at(self.latency(), lambda: node.alive and done.succeed(found))
        self.at(self.latency(), answer)

    def reach(self, point: str, generation: int, writing: str | None = None) -> bool:
        """A worker of ``generation`` reached a crash point; True when it crashed right now."""
        if self.armed != point or generation != self.generation:
            return False
        self.armed = None
        if point == "sent" and self.plan.crash_delay:
            self.at(self.plan.crash_delay, self.crash_generation, generation, point)
            return False
        self.took.add(crash_kind(point, generation))
        self.crash(writing)
        return True


class Node:
    """One incarnation of a worker: what a system under test may touch.

    ``number`` names it in traces (1 = the first worker, then each restarted one in order of
    creation); every event it logs carries it as ``details.worker``."""

    def __init__(self, run: Run, generation: int, index: int) -> None:
        self.run = run
        self.number = len(run.nodes) + 1
        self.env = run.env
        self.generation = generation
        self.index = index
        self.alive = True
        self.procs: list[simpy.Process] = []
        self.caps = run.caps
        self.timing = run.timing
        self.tier = run.tier
        self.story = run.story
        self.disk = run.disk
        self.plan = run.plan
        self.memory: dict[str, Any] = {}  # the system's volatile state, lost at a crash
        self.tracing = run.events is not None

    @property
    def now(self) -> int:
        return int(self.env._now)

    def log(self, actor: str, kind: str, label: str, state: str | None = None,
            **details: Any) -> None:
        """An event this worker caused (``Run.log`` with ``worker``)."""
        if self.tracing:
            self.run.log(actor, kind, label, state, worker=self.number, **details)

    def spawn(self, gen: Generator[Any, Any, Any]) -> None:
        """Run ``gen`` as a process of this worker (not started if the worker died first;
        ended by the worker's crash)."""
        self.procs.append(Task(self.env, gen, self))

    def wait(self, ms: int) -> simpy.Event:
        return self.env.timeout(ms)

    def wait_until(self, t: int) -> simpy.Event:
        return self.env.timeout(max(0, t - self.now))

    def halt(self) -> simpy.Event:
        return self.env.event()  # never fires: the process waits for its interrupt

    def reach(self, point: str, writing: str | None = None) -> bool:
        return self.run.reach(point, self.generation, writing)

    def decide(self, job: Job, rerun: bool) -> dict[str, Any]:
        payload = self.story.decide(job, rerun, self.plan)
        job.payload = payload
        if payload.get("amount", job.amount) != job.amount:
            self.run.took.add("model re-decides")
        if self.tracing:
            self.log("agent", "decide", f"model decides: {self.story.describe(payload)}"
                     + (" (re-run)" if rerun else ""), job=job.id, payload=payload)
        return payload

    def lease(self) -> Lease:
        return self.run.lease()

    def facts(self, exclude: str | None = None) -> dict[str, Any]:
        return self.story.facts(exclude)

    def complete(self, job: Job, outcome: str) -> None:
        if not self.alive or job.done:
            return
        job.done, job.outcome, job.done_at = True, outcome, self.now
        if self.tracing:
            self.log("agent", "answer", f"job {job.id}: {outcome}", job=job.id)

    def call(self, key: str | None, payload: dict[str, Any], *,
             digest: str | None = None, deadline: int | None = None,
             effect_id: str | None = None, attempt: int = 1, timeout: int,
             on_answer: Callable[[Response], None] | None = None) -> simpy.Event:
        """Send a request; the event fires with the Response, or None at the timeout."""
        run, story = self.run, self.story
        decision = story.decision_of(payload)
        req = Request(system=run.system.name, generation=self.generation, key=key,
                      payload=payload, digest=digest or plain_digest(payload),
                      decision=decision, sent_at=self.now,
                      lease_live=run.lease_live(),
                      premises_hold=story.premises_hold(decision), deadline=deadline,
                      effect_id=effect_id, attempt=attempt, worker=self.number)
        done = self.env.event()

        def reply(resp: Response) -> None:
            if req.first and run.plan.late_ack and (not self.alive or done.triggered):
                run.took.add("late ack")  # the delayed answer came after the timeout or crash
            if not self.alive:
                self.log("network", "undelivered", "an answer reaches a dead worker", msg=req.msg)
                return
            if self.tracing:
                self.log("network", "answer", f"answer arrives: {resp.kind}", msg=req.msg)
            if on_answer is not None:
                on_answer(resp)
            if not done.triggered:
                done.succeed(resp)

        def expire() -> None:
            if self.alive and not done.triggered:
                done.succeed(None)

        req.reply = reply
        if self.tracing:
            run.messages += 1
            req.msg = run.messages
            label = f"send {story.describe(payload)}" + \
                (f" key {key[:12]}" if key else " (no key)")
            self.log("network", "send", label, attempt=attempt, deadline=deadline, msg=req.msg)
        run.transmit(req)
        self.env.call(timeout, expire, ())
        if self.reach("sent"):
            return self.halt()
        return done

    def query(self, effect_id: str) -> simpy.Event:
        """Ask the target whether the effect landed; the event fires with True/False."""
        done = self.env.event()
        msg = 0
        if self.tracing:
            self.run.messages += 1
            msg = self.run.messages
        self.log("network", "query", "lookup by effect id sent", msg=msg)
        self.run.lookup(self, effect_id, done, msg)
        return done


def true_capabilities(declared: Capabilities, breaks: str | None) -> Capabilities:
    """What the target really does: as declared, unless this world breaks its lag or window."""
    if breaks == "lookup_lag" and declared.queryable:
        return Capabilities(declared.dedupes, True, declared.dedup_window,
                            declared.lookup_lag + TIMING.settle_margin + 1_000)
    if breaks == "dedup_window" and declared.dedupes:
        return Capabilities(True, declared.queryable, declared.dedup_window // 4,
                            declared.lookup_lag)
    return declared


CRASH_KINDS = {"before_send": "crash before send", "sent": "crash in flight",
               "after_apply": "crash after apply", "after_ack": "crash after ack",
               "recovering": "crash while recovering"}


def crash_kind(point: str, generation: int) -> str:
    return CRASH_KINDS[point] if generation == 0 else "crash during recovery"


_plain_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
_spelled: dict[tuple[tuple[str, Any], ...], str] = {}  # flat payloads already spelled


def plain_digest(payload: dict[str, Any]) -> str:
    """What a baseline's request parameters are compared by (the kernel sends its own
    payload digest): any stable spelling of the parameters will do. A flat payload of
    strings and integers (the refund's) is spelled once and remembered."""
    if not all(type(v) is int or type(v) is str for v in payload.values()):
        return _plain_encode(payload)
    key = tuple(payload.items())
    text = _spelled.get(key)
    if text is None:
        if len(_spelled) >= 10_000:
            _spelled.clear()  # bounded
        text = _spelled[key] = _plain_encode(payload)
    return text


@functools.lru_cache(maxsize=4)
def streams(seed: int) -> tuple[int, int]:
    """The seeds of a run's network and disk streams, split from the run's seed (every run
    of a case has the same seed, so this is computed once per case)."""
    root = random.Random(seed)
    return root.getrandbits(64), root.getrandbits(64)


def durable_state(entries: list[Any]) -> str | None:
    """The state the durable journal gives the (last) effect, as a restart will find it."""
    effects = replay([e for e in entries if e is not None])
    return list(effects.values())[-1].state.value if effects else None


def simulate(plan: FaultPlan, system: Any, tier: str, seed: int, trace: bool = False,
             scenario: type[Scenario] = RefundStory) -> Run:
    """Run one (plan, system, tier, seed) of a scenario to the end."""
    return Run(plan, system, tier, seed, trace, scenario).run()
