"""Fault plans: what goes wrong in one simulated run, as plain data.

How it works. A ``FaultPlan`` names every fault a run can suffer: where the worker crashes
(a protocol point, not a wall-clock time, so the same plan means the same story for every
system), how long it stays down, what the world does meanwhile, extra submissions, a model
that re-decides, a slow or unanswered request, a lagging lookup, and the network's timing.
The catalogue of DESIGN.md section 6 is ``CATALOGUE`` (name -> plan); ``plan_from_seed``
draws a random plan from a seed with one ``random.Random``; ``REFERENCE`` holds the
reference outcomes of section 6 that the fixed table must reproduce.

Crash points, in protocol order:
- ``before_send``: the decision is made (and, for the kernel, DISPATCHED is durable), nothing
  has left the worker yet;
- ``sent``: the request left; the crash comes ``crash_delay`` ms later (in flight or after);
- ``after_apply``: the target applied the request; the answer has not arrived;
- ``after_ack``: the answer arrived; the crash hits while it is being recorded (``torn``
  tears the journal line being written);
- ``recovering``: a journaled worker is recovering an effect and starts waiting out its
  claim or asks for a lookup (only the kernel recovers this way; the baselines never reach
  it).

``recrash`` is a second crash point, reached by the worker(s) that restarted after the first
crash: a crash during recovery (the next restart runs recovery again).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, replace
from typing import Any

CRASH_POINTS = ("before_send", "sent", "after_apply", "after_ack", "recovering")
WORLD_EVENTS = ("manual_refund", "revoke_lease", "withdraw_approval", "hold_customer")
# The lease the decision named is revoked and the agent holds a fresh one under another id
# from then on: a live lease that is not the decision's authority. Drawn apart from
# WORLD_EVENTS (last, see plan_from_seed) so older seeds keep their plans.
LEASE_RENEWAL = "renew_lease"
# Drawn last too (see _boundary_knobs): the fact source stops reporting a premise's fact
# ("hide_fact") or reports it as another JSON type ("retype_fact": false becomes 0, as a
# database without booleans would); the decision's lease reaches its expiry exactly when the
# worker next checks it ("lease_expires": at the dispatch, or at the restart). Each tests a
# boundary of the kernel's checks: an unobserved fact, JSON equality, the lease's last instant.
FACT_FAULTS = ("hide_fact", "retype_fact")
LEASE_EXPIRY = "lease_expires"
LATE_WORLD_EVENTS = (LEASE_RENEWAL, *FACT_FAULTS, LEASE_EXPIRY)
ALL_WORLD_EVENTS = (*WORLD_EVENTS, *LATE_WORLD_EVENTS)
PREMISES = ("touched", "untouched")  # does the decision rely on a fact its own effect moves?
IN_FLIGHT = ("deadline", "bounded", "neither")  # how a late request is kept from landing
# Worlds where an assumption the kernel's safety rests on is broken (sim.assumptions):
# "lookup_lag" the target shows a landed effect later than its declared lag; "dedup_window"
# it forgets keys after a quarter of its declared window; "fsync" a crash also loses the last
# fsync'd journal line; "conditional_append" the driver appends without re-reading a journal
# another worker appended to. ("in_flight" is in_flight="neither".)
BREAKS = ("lookup_lag", "dedup_window", "fsync", "conditional_append")
# "in_flight_declared" is the same world with a target that says so (bounds_in_flight=False).
WORLDS = ("in_flight", "in_flight_declared", *BREAKS)
DEDUP_WINDOW = 60_000  # ms: the dedup window of deduplicating targets in the simulator
SEND_TIMEOUT = 2_000  # ms: the kernel's send timeout (sim.tiers.TIMING), also the delivery bound
DEDUP_MARGIN = 5_000  # ms: the kernel's dedup margin (sim.tiers.TIMING)
_CRASH_ONLY = ("crash_delay", "torn", "outage", "recoverers", "during_outage", "recrash")


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Everything that goes wrong in one run. The defaults are the happy path."""

    name: str = "happy path"
    crash: str | None = None  # one of CRASH_POINTS, or no crash
    crash_delay: int = 0  # ms after the crash point
    torn: bool = False  # the crash tears the journal line being written
    outage: int = 1_000  # ms from the crash to the restart
    recrash: str | None = None  # a second crash point, hit by the restarted worker(s)
    recoverers: int = 1  # workers restarting at once after the crash
    before_dispatch: tuple[str, ...] = ()  # world events between decision and dispatch
    during_outage: tuple[str, ...] = ()  # world events while the worker is down
    duplicate_submits: int = 0  # extra submissions of the same request
    duplicate_at: int = 20  # ms: when the extra submissions arrive
    conflicting_amount: int | None = None  # a second submission: same decision, other amount
    redecide_amount: int | None = None  # what the model decides when it runs again
    slow_send: int = 0  # extra ms on the first request's way to the target
    ack_lost: bool = False  # the first answer never arrives
    late_ack: int = 0  # extra ms on the first answer's way back
    lookup_lag: int | None = None  # override the queryable target's lookup lag (ms)
    net_latency: int = 40  # ms: base one-way latency
    net_jitter: int = 0  # ms: mean of the exponential extra latency
    premises: str = "touched"  # "untouched": the decision relies only on facts it never moves
    in_flight: str = "deadline"  # the target drops late requests | delivery is bounded | neither
    declares_no_bound: bool = False  # with "neither": the target says it bounds nothing
    breaks: str | None = None  # one of BREAKS: an assumption this world does not honour
    eager_lookup: bool = False  # the restarted kernel driver looks the effect up at once and
    # offers that (early) answer to every later recovery step that has no fresher one

    def __post_init__(self) -> None:
        if self.premises not in PREMISES:
            raise ValueError(f"unknown premises {self.premises!r} (known: {PREMISES})")
        if self.in_flight not in IN_FLIGHT:
            raise ValueError(f"unknown in_flight {self.in_flight!r} (known: {IN_FLIGHT})")
        if self.breaks is not None and self.breaks not in BREAKS:
            raise ValueError(f"unknown breaks {self.breaks!r} (known: {BREAKS})")
        for point in (self.crash, self.recrash):
            if point is not None and point not in CRASH_POINTS:
                raise ValueError(f"unknown crash point {point!r} (known: {CRASH_POINTS})")
        for event in self.before_dispatch + self.during_outage:
            if event not in ALL_WORLD_EVENTS:
                raise ValueError(f"unknown world event {event!r} (known: "
                                 f"{', '.join(ALL_WORLD_EVENTS)})")
        if self.recoverers < 1:
            raise ValueError("at least one worker must recover")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FaultPlan:
        """A plan from (some of) its fields; raises ValueError on unknown fields or values."""
        fields = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - fields)
        if unknown:
            raise ValueError(f"unknown plan field(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(fields))}")
        values = dict(data)
        for name in ("before_dispatch", "during_outage"):
            if name in values:
                values[name] = tuple(values[name])
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["before_dispatch"] = list(self.before_dispatch)
        data["during_outage"] = list(self.during_outage)
        return data

    def summary(self) -> str:
        """A short human description: only the fields that differ from the happy path."""
        parts = []
        for name in _FIELDS:
            value = getattr(self, name)
            if value == getattr(_HAPPY, name):
                continue
            if self.crash is None and name in _CRASH_ONLY:
                continue
            if isinstance(value, tuple):
                value = "+".join(value)
            parts.append(f"{name}={value}")
        return ", ".join(parts) or "no faults"


_HAPPY = FaultPlan()
_FIELDS = sorted(f for f in FaultPlan.__dataclass_fields__ if f != "name")
_CRASH_BEFORE_SEND = FaultPlan(crash="before_send", outage=1_000)
_CRASH_AFTER_APPLY = FaultPlan(crash="after_apply", outage=1_000)

CATALOGUE: dict[str, FaultPlan] = {plan.name: plan for plan in (
    FaultPlan(name="happy path"),
    replace(_CRASH_BEFORE_SEND, name="crash before send"),
    replace(_CRASH_AFTER_APPLY, name="crash before ack"),
    FaultPlan(name="duplicate submit", duplicate_submits=1),
    replace(_CRASH_AFTER_APPLY, name="model re-decides $30", redecide_amount=30),
    FaultPlan(name="conflicting payload", conflicting_amount=25),
    FaultPlan(name="lease revoked", before_dispatch=("revoke_lease",)),
    FaultPlan(name="stale premise", before_dispatch=("withdraw_approval",)),
    replace(_CRASH_BEFORE_SEND, name="manual refund during outage",
            during_outage=("manual_refund",)),
    replace(_CRASH_BEFORE_SEND, name="lease revoked during outage",
            during_outage=("revoke_lease",)),
    replace(_CRASH_AFTER_APPLY, name="key expired before recovery",
            outage=DEDUP_WINDOW + 10_000),
    FaultPlan(name="recovery racing a slow send", crash="sent", crash_delay=100, outage=500,
              slow_send=1_800),
    replace(_CRASH_BEFORE_SEND, name="two workers recovering", recoverers=2),
    FaultPlan(name="lookup lag at tier 2", crash="sent", crash_delay=100, outage=200,
              slow_send=1_800, lookup_lag=900),
    FaultPlan(name="torn journal write", crash="after_ack", torn=True, outage=1_000),
)}

# Reference outcomes of DESIGN.md section 6: (fault, system, tier) -> (dollars, outcome word).
# The outcome word must appear among the run's outcomes ("" = no requirement beyond dollars).
_K = "kernel"
REFERENCE: dict[tuple[str, str, str], tuple[int, str]] = {}


def _ref(fault: str, kernel: tuple[tuple[int, str], ...], naive: int, keyed: int) -> None:
    for tier, cell in zip(("t1", "t2", "t3"), kernel, strict=True):
        REFERENCE[(fault, _K, tier)] = cell
    REFERENCE[(fault, "naive", "t1")] = (naive, "")
    REFERENCE[(fault, "idempotency", "t1")] = (keyed, "")
    REFERENCE[(fault, "durable", "t1")] = (keyed, "")


_C, _R, _A = "COMMITTED", "REFUSED", "AMBIGUOUS"
_ref("happy path", ((20, _C), (20, _C), (20, _C)), 20, 20)
_ref("crash before send", ((20, _C), (20, _C), (0, _A)), 20, 20)
_ref("crash before ack", ((20, _C), (20, _C), (20, _A)), 40, 20)
_ref("duplicate submit", ((20, _C), (20, _C), (20, _C)), 40, 20)
_ref("model re-decides $30", ((20, "REJECTED"), (20, "REJECTED"), (20, "REJECTED")), 50, 20)
_ref("lease revoked", ((0, _R), (0, _R), (0, _R)), 20, 20)
_ref("stale premise", ((0, _R), (0, _R), (0, _R)), 20, 20)
_ref("manual refund during outage", ((20, _R), (20, _R), (20, _A)), 40, 40)
_ref("lease revoked during outage", ((0, _R), (0, _R), (0, _A)), 20, 20)
_ref("key expired before recovery", ((20, _C), (20, _C), (20, _A)), 40, 40)

# Verdicts the reference gives the baselines at t1 (True = FAIL).
REFERENCE_FAILS: dict[tuple[str, str], bool] = {}
for _fault, _fails in {
    "happy path": (False, False), "crash before send": (False, False),
    "crash before ack": (True, False), "duplicate submit": (True, False),
    "model re-decides $30": (True, False), "lease revoked": (True, True),
    "stale premise": (True, True), "manual refund during outage": (True, True),
    "lease revoked during outage": (True, True), "key expired before recovery": (True, True),
}.items():
    REFERENCE_FAILS[(_fault, "naive")] = _fails[0]
    REFERENCE_FAILS[(_fault, "idempotency")] = _fails[1]
    REFERENCE_FAILS[(_fault, "durable")] = _fails[1]


# Swarm testing: each case switches a random subset of fault kinds on, then draws the
# parameters of the kinds that are on, shaped so that they take effect (a slow send that
# lands after the restart, an outage past the dedup window while the effect is open...).
SWARM = ("crash", "torn", "recrash", "two_recoverers", "late_recovery", "world_before",
         "world_during", "duplicate", "conflicting", "redecide", "slow_send", "ack_lost",
         "late_ack", "lookup_lag", "jitter", "untouched", "bounded")
# The odds of a kind being on (0.4 unless named): raised where a million cases showed the
# fault taking effect in fewer than 5% of the kernel runs at some tier (two recoverers 4.1%
# and slow send 4.8% at t3, the delivery bound 4.8-5.0%) and for the kinds they thin out.
SWARM_ODDS = {"crash": 0.8, "two_recoverers": 0.6, "slow_send": 0.5, "torn": 0.5,
              "bounded": 0.5}
# A crash point neither a slow send nor a torn write asked for: the two that nothing else
# favours (before the send, after the target applied) twice as likely as the others.
OTHER_CRASHES = ("before_send", "after_apply") * 2 + ("sent", "after_ack")


def _events(rng: random.Random, on: bool, p: float) -> tuple[str, ...]:
    if not on:
        return ()
    events = tuple(e for e in WORLD_EVENTS if rng.random() < p)
    return events or (rng.choice(WORLD_EVENTS),)


def plan_from_seed(seed: int, world: str | None = None) -> FaultPlan:
    """A random plan from one ``random.Random(seed)``: first the swarm (which kinds are on),
    then every field in a fixed order. ``world`` (one of WORLDS) breaks one assumption:
    "in_flight" sets in_flight="neither", the others set ``breaks``."""
    r = random.Random(seed)
    on = {k for k in SWARM if r.random() < SWARM_ODDS.get(k, 0.4)}
    slow = "slow_send" in on
    crash = None
    if "crash" in on:
        crash = "sent" if slow and r.random() < 0.7 else \
            "after_ack" if "torn" in on and r.random() < 0.6 else r.choice(OTHER_CRASHES)
    latency = r.randint(1, 200)
    lag = r.randint(300, 900) if "lookup_lag" in on else None
    slow_send = r.choice((r.randint(200, 2_600), r.randint(2_600, 8_000))) if slow else 0
    if slow and lag is not None and r.random() < 0.6:  # lands so late that only the settle
        slow_send = r.randint(SEND_TIMEOUT - lag - latency + 1,
                              SEND_TIMEOUT - latency)  # margin hides it
    if "late_recovery" in on:
        outage = r.randint(DEDUP_WINDOW - 6_000, DEDUP_WINDOW + 30_000)
    elif slow and crash == "sent":
        outage = r.randint(50, max(60, slow_send - 100))  # restart before the slow send lands
    else:
        outage = r.choice((r.randint(50, 3_000), r.randint(3_000, 30_000)))
    plan = FaultPlan(
        name=f"random {seed}",
        crash=crash,
        crash_delay=r.choice((0, r.randint(1, 200), r.randint(1, 3_000))) if crash == "sent"
        else 0,
        torn="torn" in on and crash is not None,
        outage=outage,
        recoverers=2 if "two_recoverers" in on else 1,
        recrash=r.choice(CRASH_POINTS + ("recovering",) * 3) if "recrash" in on and crash
        else None,
        before_dispatch=_events(r, "world_before" in on, 0.3),
        during_outage=_events(r, "world_during" in on and crash is not None, 0.4),
        duplicate_submits=r.choice((1, 1, 2)) if "duplicate" in on else 0,
        duplicate_at=r.randint(0, 5_000),
        conflicting_amount=25 if "conflicting" in on else None,
        redecide_amount=30 if "redecide" in on else None,
        slow_send=slow_send,
        ack_lost="ack_lost" in on,
        late_ack=r.randint(500, 4_000) if "late_ack" in on else 0,
        lookup_lag=lag,
        net_latency=latency,
        net_jitter=r.randint(1, 150) if "jitter" in on else 0,
        premises="untouched" if "untouched" in on else "touched",
        in_flight="neither" if world in ("in_flight", "in_flight_declared")
        else "bounded" if "bounded" in on else "deadline",
        declares_no_bound=world == "in_flight_declared",
        breaks=world if world in BREAKS else None,
    )
    return _late_knobs(r, plan, world)


def _late_knobs(r: random.Random, plan: FaultPlan, world: str | None) -> FaultPlan:
    """Knobs added after the sweep's first seeds were published, drawn after everything else
    so that a seed keeps the plan it had wherever they are off: a lease renewal (the
    decision's lease revoked, a live one of another id held; not in bounded-delivery cases,
    whose lost requests it would hide), and a target that bounds nothing in flight and says
    so (bounds_in_flight=false: no assumption is broken, so the kernel must stay safe; a slow
    send then often lands past its deadline; only in cases that drew a deadline)."""
    renew, declared, late = r.random() < 0.45, r.random() < 0.4, r.random() < 0.85
    if renew and plan.in_flight != "bounded":  # a refused send would hide the bound's loss
        when = "during_outage" if plan.crash and r.random() < 0.75 else "before_dispatch"
        plan = replace(plan, **{when: (*getattr(plan, when), LEASE_RENEWAL)})
    if declared and world is None and plan.in_flight == "deadline":  # keep bounded cases
        slow = plan.slow_send or (r.randint(SEND_TIMEOUT + 1, 8_000) if late else 0)
        plan = replace(plan, in_flight="neither", declares_no_bound=True, slow_send=slow)
    return _boundary_knobs(r, plan)


def _boundary_knobs(r: random.Random, plan: FaultPlan) -> FaultPlan:
    """The knobs added last (drawn after every other): a fact hidden or retyped and the
    lease expiring at the instant it is next checked (during the outage in a case with a
    crash, else before the dispatch: before the dispatch of a crash case they would stop
    the first send, and with it the faults that need one); a driver that offers an early
    lookup answer; a restart at the very instant the dedup window closes (first send +
    window - margin)."""
    fact, fact_kind, expiry = r.random() < 0.3, r.choice(FACT_FAULTS), r.random() < 0.2
    eager, edge = r.random() < 0.6, r.random() < 0.4
    when = "during_outage" if plan.crash else "before_dispatch"
    events = (fact_kind,) * fact + (LEASE_EXPIRY,) * expiry
    plan = replace(plan, **{when: getattr(plan, when) + events})
    if plan.crash:
        plan = replace(plan, eager_lookup=eager)
    if edge and plan.crash in ("before_send", "sent") and not plan.slow_send:
        # the crash comes crash_delay after the send, so the restart lands on the window's
        # edge; nothing else happens meanwhile that would decide the recovery on its own
        # (and a slow send is left alone: it must land after the restart)
        plan = replace(plan, outage=DEDUP_WINDOW - DEDUP_MARGIN - plan.crash_delay,
                       during_outage=(), recrash=None)
    return plan
