"""A Hypothesis state machine: several coordinated units compete for items and one budget.

The world: one worker (its memory lost at a crash, with the journal's unflushed tail), a
repository-like target (dedupes, can be looked up) that rejects a write whose fencing token
is lower than one it has seen for an item, a verification that passes or fails per unit, a
plan that can be superseded, a network that loses and delays, and a clock. The worker
drives ``kernel.step`` with the view folded by ``kernel.view.Folder`` from the journal.

Beside it, a model that shares no code with the kernel: tokens, claims, reservations and
sends are recomputed from the raw journal entries and the target's record, and after every
step G1 (one order), G2 (one live claim per item; no stale write lands), G5 (no commit
without a pass), G7 (reserved <= cap, applied <= reserved) and G8 (no send under a
superseded plan) are checked, and ``kernel.invariants.check_units`` must find nothing in the
journal. At the end every unit must reach a final state (K9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import kernel
from kernel import State, verify
from kernel.invariants import check_units

REPO = kernel.Capabilities(dedupes=True, queryable=True, dedup_window=100_000, lookup_lag=20)
TIMING = kernel.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
LEASE = kernel.Lease("L", expires_at=10**9)
FACTS = {"base": 1}
COST, CAP = 10, 20
# unit -> (writes, reads): units 0 and 1 fight for x, 2 reads x, 3 writes z and reads y
UNITS = {0: (("x",), ()), 1: (("x", "y"), ()), 2: (("y",), ("x",)), 3: (("z",), ("y",))}
FINAL = {"COMMITTED", "REFUSED", "AMBIGUOUS"}


@dataclass
class Request:
    send: kernel.Send
    items: tuple[str, ...]


class UnitsWorld(RuleBasedStateMachine):
    @initialize(verify_units=st.booleans(), ttl=st.sampled_from([150, 400, 5_000]))
    def start(self, verify_units: bool, ttl: int) -> None:
        self.verify_units, self.ttl = verify_units, ttl
        self.now, self.plan = 0, 1
        self.worker = kernel.Effects()
        self.chain = kernel.Chain()
        self.durable: list[dict[str, Any]] = []
        self.unflushed: list[dict[str, Any]] = []
        self.folder = kernel.Folder()
        self.good: dict[str, bool] = {}
        self.requests: list[Request] = []
        self.acks: list[tuple[str, int]] = []
        self.highest: dict[str, int] = {}  # target: highest token seen per item
        self.applied: dict[str, int] = {}  # target: effect id -> token it landed with
        self.passed: set[str] = set()
        self.units: dict[str, int] = {}

    # ------------------------------------------------------------ driving the kernel

    def proposal(self, n: int, version: int) -> kernel.Proposal:
        writes, reads = UNITS[n]
        c = kernel.Coordination(writes=writes, reads=reads, ttl=self.ttl, budget="b",
                                cost=COST, cap=CAP, plan="p", plan_version=version,
                                verify=self.verify_units)
        return kernel.Proposal(payload={"unit": n, "v": version}, premises=FACTS, lease="L",
                               capabilities=REPO, timing=TIMING, key={"unit": n, "v": version},
                               coordination=c)

    def step(self, event: Any, eid: str | None = None) -> tuple[kernel.Command, ...]:
        commands = self.worker.apply(event, eid)
        for c in commands:
            if isinstance(c, kernel.Append):
                entry = self.chain.seal(c.entry)[0]
                self.unflushed.append(entry)
                self.folder.add(entry)
                if c.fsync:
                    self.durable += self.unflushed
                    self.unflushed = []
            elif isinstance(c, kernel.Send):
                self.on_send(c)
        return commands

    def on_send(self, send: kernel.Send) -> None:
        effect = self.worker.by_id[send.effect_id]
        c = effect.proposal.coordination
        assert c is not None
        assert c.plan_version == self.plan, "G8: sent under a superseded plan"
        token = self.admission_seq(send.effect_id)
        assert send.token == token, f"G1: token {send.token} is not the admission's seq {token}"
        self.requests.append(Request(send, c.writes))

    def admission_seq(self, eid: str) -> int | None:
        seqs = [e["seq"] for e in self.entries() if e["effect_id"] == eid
                and e["kind"] == "AUTHORIZED"]
        return seqs[-1] if seqs else None

    def entries(self) -> list[dict[str, Any]]:
        return self.durable + self.unflushed

    def view(self) -> kernel.View:
        return self.folder.view()

    def in_state(self, *states: State) -> list[str]:
        return sorted(eid for eid, e in self.worker.by_id.items() if e.state in states)

    # ------------------------------------------------------------ the units and the worker

    @rule(n=st.sampled_from(sorted(UNITS)))
    def propose(self, n: int) -> None:
        p = self.proposal(n, self.plan)
        self.units[p.effect_id] = n
        self.step(kernel.Propose(self.now, p))

    @precondition(lambda self: self.in_state(State.PROPOSED))
    @rule(data=st.data())
    def admit(self, data: st.DataObject) -> None:
        eid = data.draw(st.sampled_from(self.in_state(State.PROPOSED)))
        self.admit_now(eid)

    @precondition(lambda self: self.in_state(State.AUTHORIZED))
    @rule(data=st.data())
    def dispatch(self, data: st.DataObject) -> None:
        eid = data.draw(st.sampled_from(self.in_state(State.AUTHORIZED)))
        self.step(kernel.Dispatch(self.now, LEASE, FACTS, self.view(),
                                  kernel.Plan("p", self.plan)), eid)

    @precondition(lambda self: self.in_state(State.DISPATCHED, State.LANDED))
    @rule(data=st.data())
    def recover(self, data: st.DataObject) -> None:
        self.resolve(data.draw(st.sampled_from(self.in_state(State.DISPATCHED, State.LANDED))))

    def resolve(self, eid: str) -> None:
        lookup = None
        for _ in range(4):
            if self.worker.by_id[eid].state not in (State.DISPATCHED, State.LANDED):
                return
            event = kernel.Recover(self.now, LEASE, FACTS, lookup, self.view(),
                                   kernel.Plan("p", self.plan))
            for c in self.step(event, eid):
                if isinstance(c, kernel.WaitUntil):
                    self.now = max(self.now, c.time)
                elif isinstance(c, kernel.Query):
                    landed = self.applied.get(eid)
                    lookup = kernel.Lookup(landed is not None, self.now)
                elif isinstance(c, kernel.Verify):
                    self.run_verification(eid)
                elif isinstance(c, kernel.Send):
                    return

    def run_verification(self, eid: str) -> None:
        good = self.good.setdefault(eid, self.units[eid] != 3)  # unit 3 breaks the tests
        if good:
            self.passed.add(eid)
        self.step(kernel.Verification(self.now, "passed" if good else "failed"), eid)

    @precondition(lambda self: self.in_state(State.LANDED))
    @rule(data=st.data(), runs=st.booleans())
    def verification(self, data: st.DataObject, runs: bool) -> None:
        eid = data.draw(st.sampled_from(self.in_state(State.LANDED)))
        if runs:
            self.run_verification(eid)
        else:
            self.step(kernel.Verification(self.now, "could_not_run"), eid)

    # ------------------------------------------------------------ the network and the target

    @precondition(lambda self: self.requests)
    @rule(data=st.data(), acked=st.booleans())
    def deliver(self, data: st.DataObject, acked: bool) -> None:
        request = self.requests.pop(data.draw(st.integers(0, len(self.requests) - 1)))
        send = request.send
        if self.now > send.deadline or send.token is None:
            return
        if any(self.highest.get(i, -1) > send.token for i in request.items):
            return  # fenced: the target rejects a stale token, unanswered
        if send.effect_id not in self.applied:
            self.applied[send.effect_id] = send.token
            for i in request.items:
                self.highest[i] = max(self.highest.get(i, -1), send.token)
        if acked:
            self.acks.append((send.effect_id, send.attempt))

    @precondition(lambda self: self.requests)
    @rule(data=st.data())
    def lose_request(self, data: st.DataObject) -> None:
        self.requests.pop(data.draw(st.integers(0, len(self.requests) - 1)))

    @precondition(lambda self: self.acks)
    @rule(data=st.data())
    def deliver_ack(self, data: st.DataObject) -> None:
        eid, attempt = self.acks.pop(data.draw(st.integers(0, len(self.acks) - 1)))
        commands = self.step(kernel.Ack(self.now, attempt), eid)
        if any(isinstance(c, kernel.Verify) for c in commands):
            self.run_verification(eid)

    # ------------------------------------------------------------ faults and the world

    @rule()
    def crash(self) -> None:
        """Memory and the unflushed tail are lost; the view is rebuilt from the journal."""
        self.unflushed = []
        self.acks.clear()
        self.worker = kernel.Effects(kernel.replay(self.durable))
        self.folder = kernel.Folder()
        for entry in self.durable:
            self.folder.add(entry)
        last = self.durable[-1]["hash"] if self.durable else kernel.GENESIS
        self.chain = kernel.Chain(seq=len(self.durable), head=last)

    @rule()
    def supersede(self) -> None:
        self.plan += 1

    @rule(dt=st.sampled_from([1, 50, 150, 300, 1_000, 6_000]))
    def advance(self, dt: int) -> None:
        self.now += dt

    # ------------------------------------------------------------ invariants (model side)

    def admitted(self) -> dict[str, dict[str, Any]]:
        """Effect id -> its last AUTHORIZED entry, from the raw journal."""
        out: dict[str, dict[str, Any]] = {}
        for e in self.entries():
            if e["kind"] == "AUTHORIZED":
                out[e["effect_id"]] = e
        return out

    def last_kind(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for e in self.entries():
            if e["kind"] not in ("LATE", "REJECTED"):
                out[e["effect_id"]] = e
        return out

    @invariant()
    def g1_one_order(self) -> None:
        assert verify(kernel.journal.render(self.entries())).valid is True
        tokens = [e["admission"]["token"] for e in self.admitted().values()]
        assert len(tokens) == len(set(tokens)), "G1: two units share a token"
        for e in self.admitted().values():
            assert e["admission"]["token"] == e["seq"], "G1: token is not the entry's seq"

    @invariant()
    def g2_one_live_claim_per_item(self) -> None:
        """(No stale write lands: the target's own rule above, exercised when a claim
        expires while its request is in flight; Coord.tla checks that it is needed.)"""
        last = self.last_kind()
        holders: dict[str, list[str]] = {}
        for eid, e in self.admitted().items():
            if last[eid]["kind"] in FINAL or self.now >= e["admission"]["until"]:
                continue
            for item in UNITS[self.units[eid]][0]:
                holders.setdefault(item, []).append(eid)
        assert all(len(h) == 1 for h in holders.values()), f"G2: {holders}"

    @invariant()
    def g5_no_commit_without_a_pass(self) -> None:
        for eid, e in self.last_kind().items():
            if self.verify_units and e["kind"] == "COMMITTED":
                assert eid in self.passed and e["via"] == "verification", "G5"

    @invariant()
    def g7_reserved_within_cap_and_applied_within_reserved(self) -> None:
        last = self.last_kind()
        reserved = sum(COST for eid in self.admitted()
                       if not (last[eid]["kind"] == "REFUSED" and last[eid]["executed"] == "false"))
        assert reserved <= CAP, f"G7: reserved {reserved} > cap {CAP}"
        assert COST * len(self.applied) <= reserved, "G7: applied more than reserved"

    @invariant()
    def the_guarantee_judges_find_nothing(self) -> None:
        assert check_units(self.entries()) == []

    def teardown(self) -> None:
        """K9: with recovery running and the target answering, every unit ends final."""
        if not hasattr(self, "worker"):
            return
        self.requests.clear()
        self.acks.clear()
        for _ in range(len(UNITS) * 3 + 3):
            for eid in self.in_state(State.PROPOSED):
                self.admit_now(eid)
            for eid in self.in_state(State.AUTHORIZED):
                self.step(kernel.Dispatch(self.now, LEASE, FACTS, self.view(),
                                          kernel.Plan("p", self.plan)), eid)
                self.deliver_all()
            for eid in self.in_state(State.DISPATCHED, State.LANDED):
                self.resolve(eid)
                self.deliver_all()
            self.now += self.ttl + 1_000
        open_units = self.in_state(State.PROPOSED, State.AUTHORIZED, State.DISPATCHED,
                                   State.LANDED)
        assert not open_units, f"K9: {len(open_units)} units never resolved"

    def admit_now(self, eid: str) -> None:
        self.step(kernel.Authorize(self.now, LEASE, FACTS, self.view(),
                                   kernel.Plan("p", self.plan), self.chain.seq), eid)

    def deliver_all(self) -> None:
        while self.requests:
            request = self.requests.pop()
            self.acks.append((request.send.effect_id, request.send.attempt))
            if not any(self.highest.get(i, -1) > (request.send.token or 0)
                       for i in request.items):
                self.applied.setdefault(request.send.effect_id, request.send.token or 0)
            eid, attempt = self.acks.pop()
            if self.worker.by_id[eid].state is State.DISPATCHED:
                for c in self.step(kernel.Ack(self.now, attempt), eid):
                    if isinstance(c, kernel.Verify):
                        self.run_verification(eid)


UnitsWorld.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestUnitsWorld = UnitsWorld.TestCase
