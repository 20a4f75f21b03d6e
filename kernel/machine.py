"""The effect state machine: one transition table, typed events, commands out.

How it works. An ``Effect`` is an immutable record of one effect's progress. ``step(effect,
event)`` looks up ``(state, type(event))`` in ``TRANSITIONS``; a missing pair raises
``IllegalTransition`` before anything is built, so the caller's effect is untouched. A
handler returns a ``Transition``: the new effect and the commands the driver must carry out
in order (append a journal entry, fsync'd or not; send; query; wait; surface an AMBIGUOUS
effect; raise an alert). The kernel never performs a command itself.

Journal entries are emitted as plain dicts without ``seq``/``prev``/``hash``; the journal
module seals them into the hash chain. ``replay`` folds sealed entries back into effects,
so a restarted worker recovers exactly the durable state.

    (new) --Propose--> PROPOSED --Authorize--> AUTHORIZED --Dispatch--> DISPATCHED
    PROPOSED/AUTHORIZED --(lease dead | premise stale)--> REFUSED
    DISPATCHED --Ack--> COMMITTED
    DISPATCHED --Recover--> DISPATCHED (wait, query, resend) | COMMITTED | REFUSED | AMBIGUOUS
    final --Ack | LookupAnswer--> same state, late answer journaled
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from kernel.errors import IllegalTransition, KernelError
from kernel.identity import JSON
from kernel.model import (
    Capabilities,
    Executed,
    Lease,
    Proposal,
    State,
    Timing,
    stale_premises,
)
from kernel.recovery import Decision, Lookup, decide

# ---------------------------------------------------------------- events (inputs)


@dataclass(frozen=True, slots=True)
class Propose:
    now: int
    proposal: Proposal


@dataclass(frozen=True, slots=True)
class Authorize:
    now: int
    lease: Lease
    facts: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class Dispatch:
    now: int
    lease: Lease
    facts: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class Ack:
    """The target confirmed that it applied (or had already applied) the effect."""

    now: int
    attempt: int


@dataclass(frozen=True, slots=True)
class Recover:
    """Resolve a DISPATCHED effect whose answer never came (after a crash or a timeout).

    ``lookup`` is the answer to the last Query command, if one was asked for."""

    now: int
    lease: Lease
    facts: Mapping[str, JSON]
    lookup: Lookup | None = None


@dataclass(frozen=True, slots=True)
class LookupAnswer:
    """A lookup result that arrives after the effect already reached a final state.

    ``asked_at`` is when the query left; a "not found" counts as evidence only if it was
    asked after the last send's claim expired (before that, the effect may still have been
    in flight or invisible behind the target's lookup lag)."""

    now: int
    found: bool
    asked_at: int | None = None


Event = Propose | Authorize | Dispatch | Ack | Recover | LookupAnswer

# ---------------------------------------------------------------- commands (outputs)


@dataclass(frozen=True, slots=True)
class Append:
    entry: dict[str, Any]
    fsync: bool


@dataclass(frozen=True, slots=True)
class Send:
    effect_id: str
    idempotency_key: str
    payload: JSON
    attempt: int
    deadline: int


@dataclass(frozen=True, slots=True)
class Query:
    effect_id: str


@dataclass(frozen=True, slots=True)
class WaitUntil:
    time: int


@dataclass(frozen=True, slots=True)
class Surface:
    """Tell a person: this effect is AMBIGUOUS, and why."""

    effect_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a submission that did not create a new effect."""

    effect_id: str
    outcome: str  # "in_flight" | "duplicate" | "conflicting_payload" | "already_final"


@dataclass(frozen=True, slots=True)
class Alert:
    """An invariant violation observed by the kernel itself (a late answer contradicting it)."""

    invariant: str
    message: str


Command = Append | Send | Query | WaitUntil | Surface | Reply | Alert

# ---------------------------------------------------------------- the effect record


class Effect(NamedTuple):
    proposal: Proposal
    state: State
    attempts: int = 0
    first_sent_at: int | None = None
    claim_until: int = 0
    executed: Executed = Executed.FALSE
    reason: str | None = None
    authorized: dict[str, Any] | None = None

    @property
    def effect_id(self) -> str:
        return self.proposal.effect_id


class Transition(NamedTuple):
    effect: Effect
    commands: tuple[Command, ...]


def _moved(effect: Effect, state: State, executed: Executed, reason: str | None) -> Effect:
    """The effect in a new state (a positional build: NamedTuple._replace is slow)."""
    return Effect(effect.proposal, state, effect.attempts, effect.first_sent_at,
                  effect.claim_until, executed, reason, effect.authorized)


def _entry(kind: str, effect: Effect, now: int, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "effect_id": effect.proposal.effect_id, "ts": now, **fields}


def _checks(now: int, lease: Lease, facts: Mapping[str, JSON], p: Proposal) -> dict[str, Any]:
    """What was checked at a decision point, as recorded in the journal."""
    live = lease.live(now) and lease.id == p.lease
    return {"lease": {"id": lease.id, "expires_at": lease.expires_at, "revoked": lease.revoked,
                      "live": live},
            "facts": {k: facts.get(k) for k in p.premise_names},
            "stale": stale_premises(p.premises, facts)}


def _refusal(checks: dict[str, Any]) -> str | None:
    if not checks["lease"]["live"]:
        return "lease_dead"
    if checks["stale"]:
        return "premise_stale"
    return None


def _refuse(effect: Effect, now: int, reason: str, executed: Executed = Executed.FALSE,
            **evidence: Any) -> Transition:
    done = _moved(effect, State.REFUSED, executed, reason)
    entry = _entry("REFUSED", effect, now, reason=reason, executed=executed.value, **evidence)
    return Transition(done, (Append(entry, fsync=True),))

# ---------------------------------------------------------------- handlers


def _propose(effect: Effect | None, ev: Propose) -> Transition:
    p = ev.proposal
    new = Effect(p, State.PROPOSED)
    caps, timing = p.recorded_setup
    entry = {"kind": "PROPOSED", "effect_id": p.effect_id, "ts": ev.now, "payload": p.payload,
             "payload_digest": p.payload_digest, "key": p.key, "premises": dict(p.premises),
             "lease": p.lease, "target": p.target, "capabilities": dict(caps),
             "timing": dict(timing)}
    return Transition(new, (Append(entry, fsync=False),))


def _resubmit(effect: Effect, ev: Propose) -> Transition:
    """Same effect id again: never a second effect, whatever the payload says."""
    eid = effect.effect_id
    if ev.proposal.payload_digest != effect.proposal.payload_digest:
        entry = _entry("REJECTED", effect, ev.now, reason="conflicting_payload",
                       payload_digest=ev.proposal.payload_digest)
        return Transition(effect, (Append(entry, fsync=True), Reply(eid, "conflicting_payload")))
    if effect.state is State.COMMITTED:
        return Transition(effect, (Reply(eid, "duplicate"),))
    if effect.state.final:
        return Transition(effect, (Reply(eid, "already_final"),))
    return Transition(effect, (Reply(eid, "in_flight"),))


def _authorize(effect: Effect, ev: Authorize) -> Transition:
    checks = _checks(ev.now, ev.lease, ev.facts, effect.proposal)
    refusal = _refusal(checks)
    if refusal:
        return _refuse(effect, ev.now, refusal, checks=checks)
    done = Effect(effect.proposal, State.AUTHORIZED, authorized=checks)
    return Transition(done, (Append(_entry("AUTHORIZED", effect, ev.now, checks=checks),
                                    fsync=False),))


def _send(effect: Effect, now: int, checks: dict[str, Any], phase: str,
          lookup: Lookup | None = None) -> Transition:
    """Journal DISPATCHED durably, then send: the write-ahead rule (K1) in one place."""
    timing = effect.proposal.timing
    attempt = effect.attempts + 1
    deadline = now + timing.send_timeout
    claim_until = deadline + timing.settle_margin
    first = effect.first_sent_at if effect.first_sent_at is not None else now
    done = Effect(effect.proposal, State.DISPATCHED, attempt, first, claim_until,
                  Executed.UNKNOWN, None,
                  checks if phase == "dispatch" else effect.authorized)
    evidence = {"lookup": lookup.as_json()} if lookup is not None else {}
    entry = _entry("DISPATCHED", effect, now, attempt=attempt, phase=phase, deadline=deadline,
                   claim_until=claim_until, first_sent_at=first, checks=checks, **evidence)
    p = effect.proposal
    send = Send(p.effect_id, p.effect_id, p.payload, attempt, deadline)
    return Transition(done, (Append(entry, fsync=True), send))


def _dispatch(effect: Effect, ev: Dispatch) -> Transition:
    checks = _checks(ev.now, ev.lease, ev.facts, effect.proposal)
    refusal = _refusal(checks)
    if refusal:
        return _refuse(effect, ev.now, refusal, checks=checks)
    return _send(effect, ev.now, checks, "dispatch")


def _ack(effect: Effect, ev: Ack) -> Transition:
    if not 1 <= ev.attempt <= effect.attempts:
        raise IllegalTransition(effect.state, ev, f"no attempt {ev.attempt} was sent")
    done = _moved(effect, State.COMMITTED, Executed.TRUE, "ack")
    entry = _entry("COMMITTED", effect, ev.now, via="ack", attempt=ev.attempt)
    return Transition(done, (Append(entry, fsync=True),))


def _recover(effect: Effect, ev: Recover) -> Transition:
    checks = _checks(ev.now, ev.lease, ev.facts, effect.proposal)
    d: Decision = decide(effect, ev.now, checks["lease"]["live"], not checks["stale"], ev.lookup)
    evidence: dict[str, Any] = {"lookup": ev.lookup.as_json()} if ev.lookup else {}
    if d.action == "wait":
        return Transition(effect, (WaitUntil(d.until),))
    if d.action == "query":
        return Transition(effect, (Query(effect.effect_id),))
    if d.action == "commit":
        done = _moved(effect, State.COMMITTED, Executed.TRUE, d.reason)
        entry = _entry("COMMITTED", effect, ev.now, via="lookup", **evidence)
        return Transition(done, (Append(entry, fsync=True),))
    if d.action == "refuse":
        return _refuse(effect, ev.now, d.reason, Executed.FALSE, checks=checks, **evidence)
    if d.action == "resend":
        return _send(effect, ev.now, checks, "recovery", ev.lookup)
    done = _moved(effect, State.AMBIGUOUS, Executed.UNKNOWN, d.reason)
    entry = _entry("AMBIGUOUS", effect, ev.now, reason=d.reason, checks=checks, **evidence)
    return Transition(done, (Append(entry, fsync=True), Surface(effect.effect_id, d.reason)))


def _late(effect: Effect, ev: Ack | LookupAnswer) -> Transition:
    """An answer after the end: journal it; settle an AMBIGUOUS receipt; flag a contradiction."""
    confirms = isinstance(ev, Ack) or ev.found
    denies = isinstance(ev, LookupAnswer) and not ev.found and ev.asked_at is not None \
        and ev.asked_at >= effect.claim_until
    answer: dict[str, Any] = {"answer": "ack", "attempt": ev.attempt} if isinstance(ev, Ack) \
        else {"answer": "lookup", "found": ev.found}
    if isinstance(ev, LookupAnswer) and ev.asked_at is not None:
        answer["asked_at"] = ev.asked_at
    commands: list[Command] = [Append(_entry("LATE", effect, ev.now, **answer), fsync=True)]
    done = effect
    if confirms and effect.executed is Executed.UNKNOWN:
        done = effect._replace(executed=Executed.TRUE)
    elif confirms and effect.executed is Executed.FALSE:
        commands.append(Alert("K7", f"effect {effect.effect_id} was REFUSED as never applied, "
                                    f"but the target later confirmed it"))
    elif denies and effect.executed is Executed.TRUE:
        commands.append(Alert("K7", f"effect {effect.effect_id} was COMMITTED, but a later "
                                    f"lookup did not find it"))
    return Transition(done, tuple(commands))


Handler = Callable[[Any, Any], Transition]


class Rule(NamedTuple):
    handler: Handler
    targets: frozenset[State]  # every state the handler may return


def _rule(handler: Handler, *targets: State) -> Rule:
    return Rule(handler, frozenset(targets))


P, A, D = State.PROPOSED, State.AUTHORIZED, State.DISPATCHED
C, R, X = State.COMMITTED, State.REFUSED, State.AMBIGUOUS

# The one transition table. A (state, event) pair that is absent is illegal.
TRANSITIONS: dict[tuple[State | None, type], Rule] = {
    (None, Propose): _rule(_propose, P),
    **{(s, Propose): _rule(_resubmit, s) for s in State},
    (P, Authorize): _rule(_authorize, A, R),
    (A, Dispatch): _rule(_dispatch, D, R),
    (D, Ack): _rule(_ack, C),
    (D, Recover): _rule(_recover, D, C, R, X),
    **{(s, Ack): _rule(_late, s) for s in (C, R, X)},
    **{(s, LookupAnswer): _rule(_late, s) for s in (C, R, X)},
}


def step(effect: Effect | None, event: Event) -> Transition:
    """Apply one event to one effect. Raises IllegalTransition and changes nothing if the
    event is not allowed in the effect's state."""
    state = effect.state if effect is not None else None
    rule = TRANSITIONS.get((state, type(event)))
    if rule is None:
        raise IllegalTransition(state.value if state else "(new)", event)
    result = rule.handler(effect, event)
    assert result.effect.state in rule.targets, "a handler left its declared targets"
    return result


def edges() -> list[tuple[str, str, str]]:
    """(from, event, to) for every state change the table allows: the state diagram."""
    out = []
    for (state, event), rule in TRANSITIONS.items():
        for target in sorted(rule.targets, key=list(State).index):
            if state is not target:
                out.append((state.value if state else "(new)", event.__name__, target.value))
    return out


# ---------------------------------------------------------------- replay after a restart


def proposal_of(entry: Mapping[str, Any]) -> Proposal:
    """Rebuild the proposal a PROPOSED entry recorded (raises KernelError if inconsistent)."""
    caps = Capabilities(**entry["capabilities"])
    p = Proposal(payload=entry["payload"], premises=entry["premises"], lease=entry["lease"],
                 capabilities=caps, timing=Timing(**entry["timing"]), key=entry["key"],
                 target=entry["target"])
    if p.effect_id != entry["effect_id"] or p.payload_digest != entry["payload_digest"]:
        raise KernelError(f"entry {entry.get('seq')}: effect id or payload digest does not "
                          f"match the recorded decision")
    return p


def apply_entry(effect: Effect | None, entry: Mapping[str, Any]) -> Effect | None:
    """Fold one durable journal entry into the effect it belongs to."""
    kind = entry["kind"]
    if kind == "PROPOSED":
        return effect or Effect(proposal=proposal_of(entry), state=State.PROPOSED)
    if effect is None:
        raise KernelError(f"entry {entry.get('seq')}: {kind} for an effect never proposed")
    if kind == "AUTHORIZED":
        return effect._replace(state=State.AUTHORIZED, authorized=entry["checks"])
    if kind == "DISPATCHED":
        authorized = entry["checks"] if entry["phase"] == "dispatch" else effect.authorized
        return effect._replace(state=State.DISPATCHED, attempts=entry["attempt"],
                               first_sent_at=entry["first_sent_at"],
                               claim_until=entry["claim_until"], executed=Executed.UNKNOWN,
                               authorized=authorized)
    if kind == "COMMITTED":
        reason = "ack" if entry["via"] == "ack" else "found_by_lookup"
        return effect._replace(state=State.COMMITTED, executed=Executed.TRUE, reason=reason)
    if kind == "REFUSED":
        return effect._replace(state=State.REFUSED, executed=Executed.FALSE,
                               reason=entry["reason"])
    if kind == "AMBIGUOUS":
        return effect._replace(state=State.AMBIGUOUS, executed=Executed.UNKNOWN,
                               reason=entry["reason"])
    if kind == "LATE" and (entry["answer"] == "ack" or entry.get("found")):
        if effect.executed is Executed.UNKNOWN:
            return effect._replace(executed=Executed.TRUE)
    return effect  # REJECTED and uninformative LATE entries do not change the effect


def replay(entries: Iterable[Mapping[str, Any]]) -> dict[str, Effect]:
    """The effects a journal describes, in order of first appearance."""
    effects: dict[str, Effect] = {}
    for entry in entries:
        eid = entry["effect_id"]
        folded = apply_entry(effects.get(eid), entry)
        if folded is not None:
            effects[eid] = folded
    return effects


class Effects:
    """A worker's volatile view of its effects: effect id -> Effect, advanced by ``step``.

    Lost at a crash; rebuilt from the durable journal with ``Effects(replay(entries))``."""

    def __init__(self, effects: Mapping[str, Effect] | None = None) -> None:
        self.by_id: dict[str, Effect] = dict(effects or {})

    def apply(self, event: Event, effect_id: str | None = None) -> tuple[Command, ...]:
        """Step the effect the event is about (a Propose names it; others pass effect_id)."""
        eid = event.proposal.effect_id if isinstance(event, Propose) else effect_id
        if eid is None:
            raise KernelError(f"{type(event).__name__} needs the effect id it is about")
        result = step(self.by_id.get(eid), event)
        self.by_id[eid] = result.effect
        return result.commands

    def open(self) -> list[Effect]:
        """Effects sent and never confirmed: the ones recovery must resolve."""
        return [e for e in self.by_id.values() if e.state is State.DISPATCHED]
