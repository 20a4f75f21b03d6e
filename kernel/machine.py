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
    DISPATCHED --Ack | Recover(found)--> LANDED       (a target that requires verification)
    LANDED --Verification--> COMMITTED (passed) | REFUSED (failed) | LANDED (could not run)

Coordinated units (DESIGN.md section 8). A proposal with ``coordination=Coordination(...)``
(write set, read set, claim ttl, budget/cost/cap, plan/version, verify) is a unit. Its
PROPOSED entry carries ``coordination``. ``Authorize`` must then carry ``view`` (the
journal-wide view, ``kernel.view.fold`` of every entry before this one, or
``Folder.view()``), ``seq`` (the seq its entry will get: the fencing token) and ``plan``
(``Plan(id, version)``, the plan's current version). Admission decides in that one entry:
a write item under another unit's live claim -> no entry, command ``Blocked(items, until)``
(stays PROPOSED; try again later); lease dead / plan superseded / premise stale / a unit
whose claim covers one of our reads was already sent / reserved + cost > cap -> REFUSED
(``lease_dead``, ``plan_superseded``, ``premise_stale``, ``read_overlap_moved``,
``over_budget``); else AUTHORIZED, fsync'd, with ``admission: {token, until, overlaps}``
and ``checks.unit`` (plan, budget, moved). ``Dispatch`` and ``Recover`` must carry ``view``
and ``plan`` too: the plan, the claim (``claim_expired``) and the overlaps are re-checked
like the lease, at dispatch and before any resend. Every ``Send`` carries ``token``; the
target must reject a write with a token lower than one it has seen for those items. With
``verify=True`` an ack (or a positive lookup) journals LANDED and commands ``Verify``; the
driver runs the verification and steps ``Verification(now, "passed"|"failed"|
"could_not_run")``: COMMITTED ``via: verification``, REFUSED ``verification_failed``
(``executed: true``, command ``Restore``: put the before-images back), or a VERIFIED entry.
``Recover`` on a LANDED unit commands ``Verify`` again. A unit's final entry releases its
claims; its reservation is released only by REFUSED with ``executed: false``.
``kernel.view.status(entries, now)`` says who holds what, why each open unit waits, what
each budget holds, and what could be undone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from kernel.errors import IllegalTransition, KernelError
from kernel.identity import JSON
from kernel.model import (
    Capabilities,
    Coordination,
    Executed,
    Lease,
    Plan,
    Proposal,
    State,
    Timing,
    View,
    observed,
)
from kernel.recovery import Decision, Lookup, decide, in_flight_bounded

# ---------------------------------------------------------------- events (inputs)


@dataclass(frozen=True, slots=True)
class Propose:
    now: int
    proposal: Proposal


@dataclass(frozen=True, slots=True)
class Authorize:
    """Authorize, and for a coordinated unit admit it: ``view`` is the journal-wide view
    folded from every entry before this one (``kernel.view.fold``), ``seq`` the seq this
    decision's entry will get (its fencing token), ``plan`` the plan's current version."""

    now: int
    lease: Lease
    facts: Mapping[str, JSON]
    view: View | None = None
    plan: Plan | None = None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Dispatch:
    now: int
    lease: Lease
    facts: Mapping[str, JSON]
    view: View | None = None
    plan: Plan | None = None


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
    view: View | None = None
    plan: Plan | None = None


@dataclass(frozen=True, slots=True)
class LookupAnswer:
    """A lookup result that arrives after the effect already reached a final state.

    ``asked_at`` is when the query left; a "not found" counts as evidence only if it was
    asked after the last send's claim expired (before that, the effect may still have been
    in flight or invisible behind the target's lookup lag)."""

    now: int
    found: bool
    asked_at: int | None = None


@dataclass(frozen=True, slots=True)
class Verification:
    """The control plane ran the target's verification on the landed effect itself:
    ``result`` is "passed", "failed" or "could_not_run". Only a pass commits."""

    now: int
    result: str


Event = Propose | Authorize | Dispatch | Ack | Recover | LookupAnswer | Verification
VERIFICATION_RESULTS = ("passed", "failed", "could_not_run")

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
    token: int | None = None  # the fencing token: the target rejects a lower one


@dataclass(frozen=True, slots=True)
class Verify:
    """Run the target's verification on the landed effect, then step a Verification."""

    effect_id: str


@dataclass(frozen=True, slots=True)
class Restore:
    """Put back what the effect replaced (its before-images): its verification failed."""

    effect_id: str


@dataclass(frozen=True, slots=True)
class Blocked:
    """Admission must wait: ``items`` are claimed by live claims until ``until``."""

    effect_id: str
    items: tuple[str, ...]
    until: int


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


Command = Append | Send | Query | WaitUntil | Surface | Reply | Alert | Verify | Restore | Blocked

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
    admission: dict[str, Any] | None = None  # a coordinated unit's claim and reservation
    verified: str | None = None  # the last journaled verification result

    @property
    def effect_id(self) -> str:
        return self.proposal.effect_id

    @property
    def token(self) -> int | None:
        return self.admission["token"] if self.admission is not None else None


class Transition(NamedTuple):
    effect: Effect
    commands: tuple[Command, ...]


def _moved(effect: Effect, state: State, executed: Executed, reason: str | None) -> Effect:
    """The effect in a new state (a positional build: NamedTuple._replace is slow)."""
    return Effect(effect.proposal, state, effect.attempts, effect.first_sent_at,
                  effect.claim_until, executed, reason, effect.authorized, effect.admission,
                  effect.verified)


def _entry(kind: str, effect: Effect, now: int, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "effect_id": effect.proposal.effect_id, "ts": now, **fields}


def _checks(now: int, lease: Lease, facts: Mapping[str, JSON], p: Proposal) -> dict[str, Any]:
    """What was checked at a decision point, as recorded in the journal."""
    live = lease.live(now) and lease.id == p.lease
    seen, stale = observed(p, facts)
    return {"lease": {"id": lease.id, "expires_at": lease.expires_at, "revoked": lease.revoked,
                      "live": live},
            "facts": seen, "stale": stale}


def _refusal(checks: dict[str, Any]) -> str | None:
    if not checks["lease"]["live"]:
        return "lease_dead"
    unit = checks.get("unit")
    if unit is None:
        return "premise_stale" if checks["stale"] else None
    if "plan" in unit and not unit["plan"]["ok"]:
        return "plan_superseded"
    if "claim" in unit and not unit["claim"]["live"]:
        return "claim_expired"
    if checks["stale"]:
        return "premise_stale"
    if unit["moved"]:
        return "read_overlap_moved"
    if "budget" in unit and not unit["budget"]["ok"]:
        return "over_budget"
    return None


_AUTHORITY = ("lease_dead", "plan_superseded", "claim_expired")


def _view_of(ev: Authorize | Dispatch | Recover) -> View:
    if ev.view is None:
        raise KernelError(f"{type(ev).__name__} of a coordinated unit needs the journal-wide "
                          f"view (kernel.view.fold of the entries before it)")
    return ev.view


def _unit_checks(now: int, c: Coordination, admission: Mapping[str, Any] | None, view: View,
                 plan: Plan | None, overlaps: Mapping[str, str]) -> dict[str, Any]:
    """A coordinated unit's own checks: plan current, claim live, overlapped units unmoved."""
    out: dict[str, Any] = {"moved": sorted({e for e in overlaps.values() if e in view.moved})}
    if c.plan is not None:
        seen = plan.version if plan is not None and plan.id == c.plan else 0
        current = max(seen, view.plans.get(c.plan, 0))
        out["plan"] = {"id": c.plan, "version": c.plan_version, "current": current,
                       "ok": c.plan_version >= current}
    if admission is not None:
        out["claim"] = {"token": admission["token"], "until": admission["until"],
                        "live": now < admission["until"]}
    return out


def _unit_send_checks(effect: Effect, ev: Dispatch | Recover,
                      checks: dict[str, Any]) -> dict[str, Any]:
    c, adm = effect.proposal.coordination, effect.admission
    if c is None or adm is None:
        return checks
    checks["unit"] = _unit_checks(ev.now, c, adm, _view_of(ev), ev.plan, adm["overlaps"])
    return checks


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
    if p.coordination is not None:
        entry["coordination"] = p.coordination.as_json()
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
    if effect.proposal.coordination is not None:
        return _admit(effect, ev, effect.proposal.coordination)
    checks = _checks(ev.now, ev.lease, ev.facts, effect.proposal)
    refusal = _refusal(checks)
    if refusal:
        return _refuse(effect, ev.now, refusal, checks=checks)
    done = Effect(effect.proposal, State.AUTHORIZED, authorized=checks)
    return Transition(done, (Append(_entry("AUTHORIZED", effect, ev.now, checks=checks),
                                    fsync=False),))


def _admit(effect: Effect, ev: Authorize, c: Coordination) -> Transition:
    """Admission in one entry: write set unclaimed (else wait), read overlaps recorded,
    plan current, cost reserved within the shared cap; the entry's seq is the token."""
    view, eid, now = _view_of(ev), effect.effect_id, ev.now
    if ev.seq is None:
        raise KernelError("Authorize of a coordinated unit needs the seq of its entry")

    def held(item: str) -> str | None:
        claim = view.claims.get(item)
        return claim.effect_id if claim and claim.live(now) and claim.effect_id != eid else None

    blocking = [view.claims[i] for i in c.writes if held(i)]
    if blocking:
        return Transition(effect, (Blocked(eid, tuple(b.item for b in blocking),
                                           min(b.until for b in blocking)),))
    overlaps = {i: h for i in c.reads if (h := held(i)) is not None}
    checks = _checks(now, ev.lease, ev.facts, effect.proposal)
    checks["unit"] = unit = _unit_checks(now, c, None, view, ev.plan, overlaps)
    if c.budget is not None:
        reserved = view.reserved.get(c.budget, 0)
        cap = min(c.cap, view.caps.get(c.budget, c.cap))
        unit["budget"] = {"name": c.budget, "cost": c.cost, "reserved": reserved, "cap": cap,
                          "ok": reserved + c.cost <= cap}
    refusal = _refusal(checks)
    if refusal:
        return _refuse(effect, now, refusal, checks=checks)
    admission = {"token": ev.seq, "until": now + c.ttl, "overlaps": overlaps}
    done = Effect(effect.proposal, State.AUTHORIZED, authorized=checks, admission=admission)
    entry = _entry("AUTHORIZED", effect, now, checks=checks, admission=admission)
    return Transition(done, (Append(entry, fsync=True),))


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
                  checks if phase == "dispatch" else effect.authorized, effect.admission,
                  effect.verified)
    p = effect.proposal  # _entry's members spelled out here and in _ack: the hottest entries
    entry = {"kind": "DISPATCHED", "effect_id": p.effect_id, "ts": now, "attempt": attempt,
             "phase": phase, "deadline": deadline, "claim_until": claim_until,
             "first_sent_at": first, "checks": checks}
    if lookup is not None:
        entry["lookup"] = lookup.as_json()
    send = Send(p.effect_id, p.effect_id, p.payload, attempt, deadline, effect.token)
    return Transition(done, (Append(entry, fsync=True), send))


def _dispatch(effect: Effect, ev: Dispatch) -> Transition:
    checks = _unit_send_checks(effect, ev, _checks(ev.now, ev.lease, ev.facts, effect.proposal))
    refusal = _refusal(checks)
    if refusal:
        return _refuse(effect, ev.now, refusal, checks=checks)
    return _send(effect, ev.now, checks, "dispatch")


def _ack(effect: Effect, ev: Ack) -> Transition:
    if not 1 <= ev.attempt <= effect.attempts:
        raise IllegalTransition(effect.state, ev, f"no attempt {ev.attempt} was sent")
    if _verifies(effect):
        return _landed(effect, ev.now, "ack", attempt=ev.attempt)
    done = _moved(effect, State.COMMITTED, Executed.TRUE, "ack")
    entry = {"kind": "COMMITTED", "effect_id": effect.proposal.effect_id, "ts": ev.now,
             "via": "ack", "attempt": ev.attempt}
    return Transition(done, (Append(entry, fsync=True),))


def _verifies(effect: Effect) -> bool:
    c = effect.proposal.coordination
    return c is not None and c.verify


def _landed(effect: Effect, now: int, via: str, **evidence: Any) -> Transition:
    """Applied at a target that requires verification: journal it, then verify."""
    reason = "ack" if via == "ack" else "found_by_lookup"
    done = _moved(effect, State.LANDED, Executed.TRUE, reason)
    entry = _entry("LANDED", effect, now, via=via, **evidence)
    return Transition(done, (Append(entry, fsync=True), Verify(effect.effect_id)))


def _verification(effect: Effect, ev: Verification) -> Transition:
    """Only a journaled pass commits; a failure refuses the change and restores it."""
    if ev.result not in VERIFICATION_RESULTS:
        raise KernelError(f"verification result must be one of {', '.join(VERIFICATION_RESULTS)}"
                          f", not {ev.result!r}")
    eid = effect.effect_id
    if ev.result == "passed":
        done = _moved(effect, State.COMMITTED, Executed.TRUE, "verified")._replace(
            verified="passed")
        return Transition(done, (Append(_entry("COMMITTED", effect, ev.now, via="verification"),
                                        fsync=True),))
    if ev.result == "failed":
        done = _moved(effect, State.REFUSED, Executed.TRUE, "verification_failed")._replace(
            verified="failed")
        entry = _entry("REFUSED", effect, ev.now, reason="verification_failed", executed="true")
        return Transition(done, (Append(entry, fsync=True), Restore(eid)))
    done = effect._replace(verified="could_not_run")
    return Transition(done, (Append(_entry("VERIFIED", effect, ev.now, result=ev.result),
                                    fsync=True),))


def _recover(effect: Effect, ev: Recover) -> Transition:
    if ev.lookup is not None and not effect.proposal.capabilities.queryable:
        raise IllegalTransition(effect.state, ev, "a lookup answer from a target that "
                                                  "cannot be looked up")
    checks = _unit_send_checks(effect, ev, _checks(ev.now, ev.lease, ev.facts, effect.proposal))
    refusal = _refusal(checks)
    d: Decision = decide(effect, ev.now, refusal not in _AUTHORITY, refusal in _AUTHORITY
                         or refusal is None, ev.lookup, refusal)
    evidence: dict[str, Any] = {"lookup": ev.lookup.as_json()} if ev.lookup else {}
    if d.action == "wait":
        return Transition(effect, (WaitUntil(d.until),))
    if d.action == "query":
        return Transition(effect, (Query(effect.effect_id),))
    if d.action == "commit" and _verifies(effect):
        return _landed(effect, ev.now, "lookup", **evidence)
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
    if isinstance(ev, LookupAnswer) and not effect.proposal.capabilities.queryable:
        raise IllegalTransition(effect.state, ev, "a lookup answer from a target that "
                                                  "cannot be looked up")
    confirms = isinstance(ev, Ack) or ev.found
    # a negative lookup denies only where the claim bounds what is in flight: elsewhere the
    # effect may land after the lookup was answered (or stay invisible for the lag)
    denies = isinstance(ev, LookupAnswer) and not ev.found and ev.asked_at is not None \
        and ev.asked_at >= effect.claim_until and in_flight_bounded(effect)
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


def _reverify(effect: Effect, ev: Recover) -> Transition:
    """A landed effect found open after a restart: run its verification (again)."""
    return Transition(effect, (Verify(effect.effect_id),))


def _ignore(effect: Effect, ev: Ack) -> Transition:
    """Another ack of a landed effect: it is already journaled as applied."""
    return Transition(effect, ())


Handler = Callable[[Any, Any], Transition]


class Rule(NamedTuple):
    handler: Handler
    targets: frozenset[State]  # every state the handler may return


def _rule(handler: Handler, *targets: State) -> Rule:
    return Rule(handler, frozenset(targets))


P, A, D, L = State.PROPOSED, State.AUTHORIZED, State.DISPATCHED, State.LANDED
C, R, X = State.COMMITTED, State.REFUSED, State.AMBIGUOUS

# The one transition table. A (state, event) pair that is absent is illegal.
TRANSITIONS: dict[tuple[State | None, type], Rule] = {
    (None, Propose): _rule(_propose, P),
    **{(s, Propose): _rule(_resubmit, s) for s in State},
    (P, Authorize): _rule(_authorize, P, A, R),
    (A, Dispatch): _rule(_dispatch, D, R),
    (D, Ack): _rule(_ack, C, L),
    (D, Recover): _rule(_recover, D, C, L, R, X),
    (L, Verification): _rule(_verification, L, C, R),
    (L, Recover): _rule(_reverify, L),
    (L, Ack): _rule(_ignore, L),
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
    unit = entry.get("coordination")
    p = Proposal(payload=entry["payload"], premises=entry["premises"], lease=entry["lease"],
                 capabilities=caps, timing=Timing(**entry["timing"]), key=entry["key"],
                 target=entry["target"],
                 coordination=Coordination.from_json(unit) if unit is not None else None)
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
        return effect._replace(state=State.AUTHORIZED, authorized=entry["checks"],
                               admission=entry.get("admission"))
    if kind == "DISPATCHED":
        authorized = entry["checks"] if entry["phase"] == "dispatch" else effect.authorized
        return effect._replace(state=State.DISPATCHED, attempts=entry["attempt"],
                               first_sent_at=entry["first_sent_at"],
                               claim_until=entry["claim_until"], executed=Executed.UNKNOWN,
                               authorized=authorized)
    if kind == "COMMITTED":
        if entry["via"] == "verification":
            return effect._replace(state=State.COMMITTED, executed=Executed.TRUE,
                                   reason="verified", verified="passed")
        reason = "ack" if entry["via"] == "ack" else "found_by_lookup"
        return effect._replace(state=State.COMMITTED, executed=Executed.TRUE, reason=reason)
    if kind == "LANDED":
        reason = "ack" if entry["via"] == "ack" else "found_by_lookup"
        return effect._replace(state=State.LANDED, executed=Executed.TRUE, reason=reason)
    if kind == "VERIFIED":
        return effect._replace(verified=entry["result"])
    if kind == "REFUSED" and entry["reason"] == "verification_failed":
        return effect._replace(state=State.REFUSED, executed=Executed.TRUE,
                               reason=entry["reason"], verified="failed")
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
        """Effects sent and never confirmed, or landed and not yet verified: the ones
        recovery must resolve (Recover on each)."""
        return [e for e in self.by_id.values() if e.state in (State.DISPATCHED, State.LANDED)]
