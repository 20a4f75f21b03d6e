"""A Hypothesis state machine: one worker driving the kernel against a tiny simulated world.

The world: a target with configurable capabilities (dedupes within a window, queryable with
a lookup lag, both, or neither) that drops requests arriving after their deadline; a network
whose requests and acks can be delivered, lost or delayed; a lease that can be revoked,
renewed or expire; facts a person can change by hand; a clock that only moves forward; and
a journal whose unflushed tail is lost at a crash, sometimes leaving a torn last line.

Beside it, a trivially correct model: which effects the target applied, how often, with
which payload, and how much money moved per order. After every step the invariants K1-K8
are checked against that model and the recorded target history, and the durable journal
goes through ``kernel.oracle.check``. At the end, recovery runs with every answer delivered
and every effect must be final (K9).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import kernel
from kernel import Executed, State, oracle, verify

TARGETS = {
    "dedupe": kernel.Capabilities(dedupes=True, queryable=False, dedup_window=3_000),
    "dedupe+query": kernel.Capabilities(dedupes=True, queryable=True, dedup_window=3_000,
                                        lookup_lag=50),
    "query": kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=50),
    "neither": kernel.Capabilities(dedupes=False, queryable=False),
}
TIMING = kernel.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
PREMISES = {"refunded": 0}
ORDERS = (0, 1, 2)


@dataclass
class Request:
    send: kernel.Send
    sent_at: int


@dataclass
class AckMessage:
    effect_id: str
    attempt: int
    generation: int  # acks go to the worker that sent; a crash closes its connections


class KernelWorld(RuleBasedStateMachine):
    # ------------------------------------------------------------ set-up

    @initialize(kind=st.sampled_from(sorted(TARGETS)))
    def start(self, kind: str) -> None:
        self.caps = TARGETS[kind]
        self.now = 0
        self.lease = kernel.Lease("L", expires_at=30_000)
        self.leases = 0  # leases issued after the first one died
        self.facts: dict[str, Any] = {"refunded": 0}
        # the worker and its journal
        self.worker = kernel.Effects()
        self.chain = kernel.Chain()
        self.durable: list[str] = []
        self.unflushed: list[str] = []
        self.generation = 0
        self.alerts: list[kernel.Alert] = []
        self.claims: dict[str, int] = {}  # effect id -> claim_until of its last send
        # the network and the target
        self.requests: list[Request] = []
        self.acks: list[AckMessage] = []
        self.first_apply: dict[str, int] = {}
        self.history: list[dict[str, Any]] = []
        # the trivially correct model
        self.applies: Counter[str] = Counter()
        self.sends: Counter[str] = Counter()
        self.moved: Counter[int] = Counter()
        self.digest_applied: dict[str, set[str]] = {}
        self.order_of: dict[str, int] = {}

    # ------------------------------------------------------------ driving the kernel

    def proposal(self, order: int, amount: int) -> kernel.Proposal:
        return kernel.Proposal(payload={"amount": amount, "order": order}, premises=PREMISES,
                               lease=self.lease.id, capabilities=self.caps, timing=TIMING,
                               key={"order": order})

    def step(self, event: Any, eid: str | None = None) -> tuple[kernel.Command, ...]:
        commands = self.worker.apply(event, eid)
        for c in commands:
            if isinstance(c, kernel.Append):
                _, line = self.chain.seal(c.entry)
                self.unflushed.append(line)
                if c.fsync:
                    self.durable.extend(self.unflushed)
                    self.unflushed.clear()
            elif isinstance(c, kernel.Send):
                self.on_send(c)
            elif isinstance(c, kernel.Alert):
                self.alerts.append(c)
        return commands

    def on_send(self, send: kernel.Send) -> None:
        eid = send.effect_id
        durable_kinds = [(e["kind"], e.get("attempt")) for e in self.durable_entries()
                         if e["effect_id"] == eid]
        assert ("DISPATCHED", send.attempt) in durable_kinds, "K1: send before durable intent"
        assert self.lease.live(self.now), "K4: send without a live lease"
        assert not kernel.stale_premises(PREMISES, self.facts), "K5: send on stale premises"
        assert self.now >= self.claims.get(eid, 0), "K6: send while an earlier one may land"
        effect = self.worker.by_id[eid]
        assert kernel.payload_digest(send.payload) == effect.proposal.payload_digest, "K3"
        self.claims[eid] = effect.claim_until
        self.sends[eid] += 1
        self.order_of[eid] = send.payload["order"]
        self.history.append({"op": "send", "effect_id": eid, "attempt": send.attempt,
                             "ts": self.now})
        self.requests.append(Request(send, self.now))

    def durable_entries(self) -> list[dict[str, Any]]:
        return verify("".join(self.durable)).entries

    def effects_in(self, *states: State) -> list[str]:
        return sorted(eid for eid, e in self.worker.by_id.items() if e.state in states)

    # ------------------------------------------------------------ the agent and the worker

    @rule(order=st.sampled_from(ORDERS), amount=st.sampled_from([20, 20, 30]))
    def submit(self, order: int, amount: int) -> None:
        """A new proposal, or a duplicate, or a conflicting re-decision of the same order."""
        p = self.proposal(order, amount)
        known = self.worker.by_id.get(p.effect_id)
        commands = self.step(kernel.Propose(self.now, p))
        if known is not None:
            replies = [c.outcome for c in commands if isinstance(c, kernel.Reply)]
            conflicting = known.proposal.payload_digest != p.payload_digest
            assert (replies == ["conflicting_payload"]) == conflicting
            assert self.worker.by_id[p.effect_id] == known  # never a second effect

    @rule(order=st.sampled_from(ORDERS), amount=st.sampled_from([20, 20, 30]))
    def submit_and_dispatch(self, order: int, amount: int) -> None:
        """The gate's fast path: propose, authorize and dispatch at once."""
        eid = self.proposal(order, amount).effect_id
        self.submit(order, amount)
        if self.worker.by_id[eid].state is State.PROPOSED:
            self.step(kernel.Authorize(self.now, self.lease, dict(self.facts)), eid)
        if self.worker.by_id[eid].state is State.AUTHORIZED:
            self.step(kernel.Dispatch(self.now, self.lease, dict(self.facts)), eid)

    @precondition(lambda self: self.effects_in(State.PROPOSED))
    @rule(data=st.data())
    def authorize(self, data: st.DataObject) -> None:
        ids = self.effects_in(State.PROPOSED)
        if ids:
            eid = data.draw(st.sampled_from(ids))
            self.step(kernel.Authorize(self.now, self.lease, dict(self.facts)), eid)

    @precondition(lambda self: self.effects_in(State.AUTHORIZED))
    @rule(data=st.data())
    def dispatch(self, data: st.DataObject) -> None:
        ids = self.effects_in(State.AUTHORIZED)
        if ids:
            eid = data.draw(st.sampled_from(ids))
            self.step(kernel.Dispatch(self.now, self.lease, dict(self.facts)), eid)

    @precondition(lambda self: self.effects_in(State.DISPATCHED))
    @rule(data=st.data(), delay_answer=st.integers(0, 500))
    def recover(self, data: st.DataObject, delay_answer: int) -> None:
        """Drive Recover for one open effect: wait out its claim, query, decide."""
        ids = self.effects_in(State.DISPATCHED)
        if ids:
            self.resolve(data.draw(st.sampled_from(ids)), delay_answer)

    def resolve(self, eid: str, delay_answer: int = 0) -> None:
        lookup = None
        for _ in range(4):
            if self.worker.by_id[eid].state is not State.DISPATCHED:
                return
            event = kernel.Recover(self.now, self.lease, dict(self.facts), lookup)
            commands = self.step(event, eid)
            if any(isinstance(c, kernel.Send) for c in commands):
                return  # the resend's fate is up to the network rules
            for c in commands:
                if isinstance(c, kernel.WaitUntil):
                    assert c.time > self.now
                    self.advance_to(c.time)
                elif isinstance(c, kernel.Query):
                    lookup = kernel.Lookup(self.visible(eid), self.now)
                    self.advance_to(self.now + delay_answer)

    # ------------------------------------------------------------ the network and the target

    @precondition(lambda self: self.requests)
    @rule(data=st.data())
    def deliver_request(self, data: st.DataObject) -> None:
        if not self.requests:
            return
        request = self.requests.pop(data.draw(st.integers(0, len(self.requests) - 1)))
        send = request.send
        if self.now > send.deadline:
            return  # the target must drop a request that arrives after its deadline
        self.deliver_request_now(request)
        if data.draw(st.booleans(), label="ack sent"):
            self.acks.append(AckMessage(send.effect_id, send.attempt, self.generation))

    def apply_at_target(self, send: kernel.Send) -> None:
        eid = send.effect_id
        digest = kernel.payload_digest(send.payload)
        self.first_apply.setdefault(send.idempotency_key, self.now)
        self.applies[eid] += 1
        self.moved[send.payload["order"]] += send.payload["amount"]
        self.digest_applied.setdefault(eid, set()).add(digest)
        self.history.append({"op": "apply", "effect_id": eid, "ts": self.now,
                             "payload_digest": digest})

    def visible(self, eid: str) -> bool:
        landed = self.first_apply.get(eid)
        return landed is not None and self.now >= landed + self.caps.lookup_lag

    @precondition(lambda self: self.requests)
    @rule(data=st.data())
    def lose_request(self, data: st.DataObject) -> None:
        if self.requests:
            self.requests.pop(data.draw(st.integers(0, len(self.requests) - 1)))

    @precondition(lambda self: self.acks)
    @rule(data=st.data())
    def deliver_ack(self, data: st.DataObject) -> None:
        if not self.acks:
            return
        ack = self.acks.pop(data.draw(st.integers(0, len(self.acks) - 1)))
        if ack.generation == self.generation:
            self.step(kernel.Ack(self.now, ack.attempt), ack.effect_id)

    @precondition(lambda self: self.acks)
    @rule(data=st.data())
    def lose_ack(self, data: st.DataObject) -> None:
        if self.acks:
            self.acks.pop(data.draw(st.integers(0, len(self.acks) - 1)))

    # ------------------------------------------------------------ faults and the world

    @rule(torn=st.booleans(), cut=st.integers(1, 400))
    def crash(self, torn: bool, cut: int) -> None:
        """The worker dies: volatile effects and the unflushed journal tail are lost."""
        before = dict(self.worker.by_id)
        text = "".join(self.durable)
        if torn and self.unflushed:
            fragment = self.unflushed[0][:min(cut, len(self.unflushed[0]) - 1)]
            verdict = verify(text + fragment)
            assert len(verdict.notes) == 1 and "torn write" in verdict.notes[0]
        else:
            verdict = verify(text)
        assert verdict.valid is True, verdict.anomalies
        self.unflushed.clear()
        self.generation += 1
        self.worker = kernel.Effects(kernel.replay(verdict.entries))
        last = verdict.entries[-1]["hash"] if verdict.entries else kernel.GENESIS
        self.chain = kernel.Chain(seq=len(verdict.entries), head=last)
        for eid, old in before.items():  # nothing fsync'd is lost
            if old.state not in (State.PROPOSED, State.AUTHORIZED):
                new = self.worker.by_id[eid]
                assert (new.state, new.attempts, new.claim_until) == \
                    (old.state, old.attempts, old.claim_until)

    @rule(action=st.sampled_from(["renew", "renew", "renew", "revoke"]),
          length=st.integers(1_000, 30_000))
    def lease_changes(self, action: str, length: int) -> None:
        """The authority behind the lease is renewed (mostly) or revoked. A lease never comes
        back to life: a live one is extended under its id, a dead one is replaced by a new
        lease under a new id (later proposals name it; earlier ones lost their authority)."""
        if action == "revoke":
            self.lease = kernel.Lease(self.lease.id, self.lease.expires_at, revoked=True)
        elif self.lease.live(self.now):
            self.lease = kernel.Lease(self.lease.id, max(self.lease.expires_at,
                                                         self.now + length))
        else:
            self.leases += 1
            self.lease = kernel.Lease(f"L{self.leases}", self.now + length)

    @rule(refunded=st.sampled_from([0, 0, 0, 5]))
    def change_facts(self, refunded: int) -> None:
        """A person refunds by hand (or the books are put right again)."""
        self.facts["refunded"] = refunded

    @rule(dt=st.sampled_from([1, 50, 150, 250, 400, 1_000, 2_500, 2_900]))
    def advance_time(self, dt: int) -> None:
        self.advance_to(self.now + dt)

    def advance_to(self, t: int) -> None:
        self.now = max(self.now, t)

    # ------------------------------------------------------------ invariants

    @invariant()
    def k8_the_journal_verifies(self) -> None:
        verdict = verify("".join(self.durable) + "".join(self.unflushed))
        assert verdict.valid is True, verdict.anomalies

    @invariant()
    def k2_at_most_once(self) -> None:
        for eid, n in self.applies.items():
            assert n <= 1 or self.caps.tier == 3, f"K2: {eid[:12]} applied {n} times"
        if self.caps.tier == 3:
            assert all(n <= 1 for n in self.sends.values()), "K2: tier-3 effect resent"

    @invariant()
    def k3_only_the_recorded_payload_moves_money(self) -> None:
        recorded = {e["effect_id"]: e for e in self.durable_entries() if e["kind"] == "PROPOSED"}
        for eid, digests in self.digest_applied.items():
            assert digests == {recorded[eid]["payload_digest"]}, "K3"
        for eid, order in self.order_of.items():
            assert self.moved[order] in (0, recorded[eid]["payload"]["amount"]), "double pay"

    @invariant()
    def k7_outcomes_are_honest(self) -> None:
        assert not self.alerts, self.alerts
        for eid, effect in self.worker.by_id.items():
            applied = self.applies[eid] > 0
            if effect.state is State.COMMITTED or effect.executed is Executed.TRUE:
                assert applied, f"K7: {effect.state} {effect.reason} but never applied"
            if effect.executed is Executed.FALSE:
                assert not applied, f"K7: executed=false but applied ({effect.state})"
            if effect.state is State.AMBIGUOUS:
                assert not self.caps.queryable, "K7: AMBIGUOUS at a queryable target"

    @invariant()
    def the_oracle_finds_nothing_wrong(self) -> None:
        verdict = oracle.check("".join(self.durable), self.history)
        assert verdict.valid is True, verdict.first

    def teardown(self) -> None:
        """K9: with recovery running and the target answering, every effect resolves."""
        if not hasattr(self, "worker"):
            return
        self.requests.clear()
        self.acks.clear()
        for eid in self.effects_in(State.PROPOSED):  # recovery resolves unsent effects too
            self.step(kernel.Authorize(self.now, self.lease, dict(self.facts)), eid)
        for eid in self.effects_in(State.AUTHORIZED):
            self.step(kernel.Dispatch(self.now, self.lease, dict(self.facts)), eid)
            self.answer_all(eid)
        for eid in self.effects_in(State.DISPATCHED):
            for _ in range(3):
                self.resolve(eid)
                self.answer_all(eid)
        assert not self.effects_in(State.PROPOSED, State.AUTHORIZED, State.DISPATCHED), \
            "K9: an effect never resolved"
        verdict = oracle.check("".join(self.durable), self.history, complete=True)
        assert verdict.valid is True, verdict.first

    def answer_all(self, eid: str) -> None:
        """Deliver every pending request of ``eid`` in time and acknowledge it."""
        while self.requests:
            request = self.requests.pop()
            self.deliver_request_now(request)
            self.step(kernel.Ack(self.now, request.send.attempt), eid)

    def deliver_request_now(self, request: Request) -> None:
        """The target receives a request in time: it applies it unless it is a duplicate."""
        send = request.send
        key_seen = self.first_apply.get(send.idempotency_key)
        if not (self.caps.dedupes and key_seen is not None
                and self.now < key_seen + self.caps.dedup_window):
            self.apply_at_target(send)


KernelWorld.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestKernelWorld = KernelWorld.TestCase


def test_the_world_reaches_every_final_state() -> None:
    """The machine is not vacuous: scripted runs reach COMMITTED, REFUSED and AMBIGUOUS."""
    reached = set()
    for target in ("query", "neither"):
        world = KernelWorld()
        world.start(target)
        world.submit(0, 20)
        eid = world.effects_in(State.PROPOSED)[0]
        world.step(kernel.Authorize(0, world.lease, {"refunded": 0}), eid)
        world.step(kernel.Dispatch(0, world.lease, {"refunded": 0}), eid)
        world.requests.clear()  # lost: recovery must settle it
        world.change_facts(5)
        world.resolve(eid)
        reached.add(world.worker.by_id[eid].state)
        world.submit(1, 20)
        world.change_facts(0)
        ok = world.effects_in(State.PROPOSED)[0]
        world.step(kernel.Authorize(world.now, world.lease, {"refunded": 0}), ok)
        world.step(kernel.Dispatch(world.now, world.lease, {"refunded": 0}), ok)
        world.deliver_request_now(world.requests.pop())
        world.step(kernel.Ack(world.now, 1), ok)
        reached.add(world.worker.by_id[ok].state)
    assert reached == {State.COMMITTED, State.REFUSED, State.AMBIGUOUS}


def test_no_resend_that_could_land_after_the_dedup_window() -> None:
    """A scripted run the random search rarely finds: the ack is lost and recovery comes
    late in the dedup window; a resend then could land after the target forgot the key."""
    world = KernelWorld()
    world.start("dedupe")
    world.submit_and_dispatch(0, 20)
    request = world.requests.pop()
    world.deliver_request_now(request)  # applied; the ack is lost
    world.advance_to(request.sent_at + TARGETS["dedupe"].dedup_window - 150)
    world.resolve(request.send.effect_id)
    for late in world.requests:  # whatever was resent arrives as late as it may
        world.advance_to(late.send.deadline)
        world.deliver_request_now(late)
    world.k2_at_most_once()
    effect = world.worker.by_id[request.send.effect_id]
    assert (effect.state, effect.reason) == (State.AMBIGUOUS, "dedup_window_expired_no_lookup")
