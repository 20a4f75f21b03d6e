"""Trace validation: check a recorded kernel run, step by step, against Kernel.tla.

How it works. Every kernel step is normalised to a ``Step``: the spec action it must be
(Propose, Authorize, Dispatch, Recover, Lookup, LateLookup, Ack), the time, the effect
before and after (``kernel.Effect``), and what the kernel observed (lease live, premises
held, the lookup answer it was given, the acked attempt) and did (the request it sent,
whether it alerted). The step becomes one spec state: the effect is ``rec[1]``, the
observations are the world (``lease``, ``prem``, ``ans``, ``acks``). The project's checker
computes that state's successors under the named action, from Kernel.tla instantiated with
the run's own capabilities and timing; the step is a spec step iff the kernel's outcome
is among them. Times are shifted so that ``now`` is a fixed origin (the spec is invariant
under a shift of time), so the successor sets are cached per relative situation and a
sweep pays the checker once per distinct situation (microseconds per step otherwise).

Two inputs are accepted:

* ``validate_trace(steps, capabilities=..., timing=...)``: a list of dicts
  ``{"event": <kernel Event>, "effect_id": str, "before": Effect | None,
  "after": Effect, "commands": tuple of kernel Commands}`` (what ``kernel.step`` was
  given and returned); ``tier`` may replace ``capabilities`` (1, 2, 3 or "t1q"), and both
  default to the proposal's own when a Propose is in the trace;
* ``validate_journal(entries)``: sealed journal entries (``kernel.verify(...).entries``),
  one step per entry, the observations taken from what the entry records.

Both return a ``TraceResult``: ``ok``, ``steps`` checked, and for the first step that is
not a spec step its ``index`` and a one-line ``explanation``. ``check(doc)`` adapts a
simulator trace document (sim/TRACES.md) to ``{"valid", "anomalies"}``.

The journal input is judged without the kernel's code: entries are folded into the spec's
record by ``fold`` below (the fields each entry records), never by the kernel's replay, so
a bug in the kernel cannot reach its own judge. The spec is compiled once per process and
per (dedupes, queryable) pair: the lookup lag only matters to the target's visibility,
which a trace step never models (lookup answers come from the trace), so it is not part of
the model's key; ``warm()`` compiles every tier up front (before a pool forks).
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel import (
    Ack,
    Alert,
    Authorize,
    Capabilities,
    Dispatch,
    KernelError,
    LookupAnswer,
    Propose,
    Query,
    Recover,
    Send,
    Timing,
)
from spec.checker.values import FnDict, record
from spec.conformance import specgraph

NO_REC = record(st="NONE", pay=0, att=0, first=-1, claim=0, ex="false")  # as Kernel.tla's
NO_ANS = record(found=False, asked=-1)
ORIGIN = 2**40  # "now" after the shift: far above any time a run can produce
NO_EVIDENCE = -2  # a late answer without asked_at: before every claim, so never evidence
TIERS = {1: (True, False), "t1": (True, False), "t1q": (True, True), 2: (False, True),
         "t2": (False, True), 3: (False, False), "t3": (False, False)}


@dataclass(frozen=True)
class Step:
    action: str                   # the spec action this kernel step must be
    now: int
    before: Any  # a kernel Effect, or a Rec folded from the journal (same field names)
    after: Any
    lease_live: bool = True
    premises_hold: bool = True
    lookup: tuple[bool, int] | None = None  # (found, asked_at) held by the worker
    attempt: int = 0              # Ack: the acknowledged attempt
    amount: int = 1               # Propose: 1 = the recorded payload, 2 = another one
    sent: tuple[int, int] | None = None     # (attempt, deadline) of the request sent
    alerted: bool | None = None   # None: unknown (a journal does not record alerts)
    what: str = ""


@dataclass
class TraceResult:
    ok: bool
    steps: int = 0
    index: int | None = None      # the first step that is not a spec step
    explanation: str = ""
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"valid": self.ok, "steps": self.steps, "index": self.index,
                "explanation": self.explanation}

# ---------------------------------------------------------------- the spec side


def model_for(caps: Capabilities, timing: Timing):
    """Kernel.tla with one effect and one worker, under a run's capabilities and timing
    (compiled once per process for each distinct key; the lookup lag is not part of it)."""
    return _model(caps.dedupes, caps.queryable, caps.dedup_window, timing)


def warm(capabilities: Iterable[Capabilities], timing: Timing) -> None:
    """Compile the spec for each of these capabilities now (e.g. before forking workers)."""
    for caps in capabilities:
        model_for(caps, timing)


@functools.lru_cache(maxsize=64)
def _model(dedupes: bool, queryable: bool, window: int, timing: Timing):
    caps = Capabilities(dedupes, queryable, window, 0)
    return specgraph.load_model({
        "Keys": {1}, "Amounts": {1, 2}, "Workers": {1}, "Dedupes": caps.dedupes,
        "Queryable": caps.queryable, "SendTimeout": timing.send_timeout,
        "SettleMargin": timing.settle_margin, "DedupWindow": caps.dedup_window,
        "DedupMargin": timing.dedup_margin, "LookupLag": caps.lookup_lag, "MaxTime": 0,
        "MaxCrashes": 0, "MaxLoss": 0, "Revocable": False, "PremiseMovable": False,
        "Prunable": False})


def shift(t: int | None, now: int) -> int:
    """A time relative to the step's ``now``; -1 (never) stays -1."""
    if t == NO_EVIDENCE:
        return 0
    return -1 if t is None or t < 0 else t - now + ORIGIN


def rec_key(e: Any, now: int) -> tuple[Any, ...] | None:
    """The effect record's spec fields, time-shifted: (state, attempts, first, claim, executed)."""
    if e is None:
        return None
    claim = shift(e.claim_until, now) if e.attempts else 0  # 0: never sent
    return str(e.state), e.attempts, shift(e.first_sent_at, now), claim, str(e.executed)


def rec_at(e: Any, now: int) -> FnDict:
    key = rec_key(e, now)
    if key is None:
        return NO_REC
    st, att, first, claim, ex = key
    return record(st=st, pay=1, att=att, first=first, claim=claim, ex=ex)


def spec_state(model, s: Step) -> tuple:
    ans = NO_ANS if s.lookup is None else record(found=s.lookup[0],
                                                 asked=shift(s.lookup[1], s.now))
    acks = frozenset({record(id=1, att=s.attempt)}) if s.action == "Ack" else frozenset()
    values = {"now": ORIGIN, "rec": (rec_at(s.before, s.now),), "dur": ("ALL",),
              "up": (True,), "ans": ((ans,),), "net": frozenset(), "acks": acks,
              "tgt": (record(n=0, at=-1, kept=False),), "lease": s.lease_live,
              "prem": (s.premises_hold,), "crashes": 0, "losses": 0, "sent": (0,),
              "sentPay": (frozenset(),), "alarm": False}
    return tuple(values[n] for n in model.var_names)


Outcome = tuple[FnDict, bool | None, tuple[int, int] | None]


# Small: a sweep asks only for steps that missed _PASSED (new situations), so this cache
# rarely hits there; at 50,000 its spec states held ~3 KB each (150 MB over 12,000 cases).
@functools.lru_cache(maxsize=1_024)
def allowed(model, action: str, state: tuple) -> frozenset[Outcome]:
    """What the spec's ``action`` may do from ``state``: (rec, alarm, request sent)."""
    names = model.var_names
    out = set()
    for label, t in specgraph.labeled_successors(model, state):
        if label != action:
            continue
        v = dict(zip(names, t))
        req = next(iter(v["net"]), None)
        out.add((v["rec"][0], v["alarm"], None if req is None else (req["att"], req["dl"])))
    return frozenset(out)

# ---------------------------------------------------------------- checking one step


def outcome(s: Step) -> Outcome:
    sent = None if s.sent is None else (s.sent[0], shift(s.sent[1], s.now))
    return rec_at(s.after, s.now), bool(s.alerted), sent


PASSED_MAX = 8_192  # a sweep repeats a few thousand situations; new ones keep coming
# (~4 per case, each seen once), so a larger set only holds those: memory stays flat
_PASSED: set[tuple[Any, ...]] = set()  # keys of steps already found to be spec steps


def step_key(model, s: Step) -> tuple[Any, ...]:
    """Everything ``check_step`` reads of a step, time-shifted like the spec state it builds
    (so a step with the same key has the same spec state, outcome and verdict). A cheap key:
    ``run`` skips the spec for a step whose key already passed."""
    lookup = None if s.lookup is None else (s.lookup[0], shift(s.lookup[1], s.now))
    sent = None if s.sent is None else (s.sent[0], shift(s.sent[1], s.now))
    return (model, s.action, rec_key(s.before, s.now), rec_key(s.after, s.now), s.lease_live,
            s.premises_hold, lookup, s.attempt if s.action == "Ack" else 0, sent, s.alerted)


def check_step(model, s: Step) -> str | None:
    """None if the step is a spec step, else why not."""
    state = spec_state(model, s)
    if s.action in ("Wait", "Query", "Idle"):
        return idle_step(model, s, state)
    options = allowed(model, s.action, state)
    got = outcome(s)
    if s.alerted is None:
        options = frozenset((r, None, q) for r, _, q in options)
        got = (got[0], None, got[2])
    if got in options:
        return None
    return mismatch(s, got, options)


def idle_step(model, s: Step, state: tuple) -> str | None:
    """Recover that waited or asked for a lookup: the spec must not be able to decide."""
    if allowed(model, "Recover", state):
        return f"{s.what}: the kernel did not decide ({s.action.lower()}) but the spec's " \
               f"Recover decides here"
    can_query = bool(allowed(model, "Lookup", state))
    if s.action != "Idle" and can_query != (s.action == "Query"):
        return f"{s.what}: the kernel chose to {s.action.lower()} but the spec " \
               f"{'would look it up' if can_query else 'has no lookup to make'}"
    return None


def show_outcome(o: Outcome, now: int) -> str:
    r, alarm, sent = o
    d = dict(r)
    for k in ("first", "claim"):
        if d[k] > ORIGIN // 2:
            d[k] = d[k] - ORIGIN + now
    text = f"{d['st']} att={d['att']} first={d['first']} claim={d['claim']} ex={d['ex']}"
    if sent is not None:
        text += f" sends attempt {sent[0]} deadline {sent[1] - ORIGIN + now}"
    return text + (" ALERT" if alarm else "")


def mismatch(s: Step, got: Outcome, options: frozenset[Outcome]) -> str:
    allowed_text = "; ".join(sorted(show_outcome(o, s.now) for o in options)) or "nothing"
    before = str(s.before.state) if s.before is not None else "(new)"
    return (f"{s.what}: from {before} the kernel went to {show_outcome(got, s.now)}, "
            f"but the spec's {s.action} allows: {allowed_text}")


def run(steps: Iterable[tuple[Any, Step]]) -> TraceResult:
    """Check (model, step) pairs in order; stop at the first step that is not a spec step."""
    result = TraceResult(True)
    for i, (model, s) in enumerate(steps):
        key = step_key(model, s)
        why = None if key in _PASSED else check_step(model, s)
        if why is None:
            if len(_PASSED) >= PASSED_MAX:
                _PASSED.clear()  # bounded: memory stays flat over a long sweep
            _PASSED.add(key)
        result.steps = i + 1
        if why:
            result.ok, result.index, result.explanation = False, i, f"step {i}: {why}"
            break
    return result


# ---------------------------------------------------------------- input 1: kernel steps


def observed(ev: Any, e: Any) -> tuple[bool, bool]:
    p = e.proposal
    live = not ev.lease.revoked and ev.now < ev.lease.expires_at and ev.lease.id == p.lease
    return live, all(ev.facts.get(k, _UNSEEN) == v for k, v in p.premises.items())


_UNSEEN = object()  # a fact nobody observed: unequal to every value


def sent_of(commands: Sequence[Any]) -> tuple[int, int] | None:
    for c in commands:
        if isinstance(c, Send):
            return c.attempt, c.deadline
    return None


def from_kernel_step(raw: Mapping[str, Any]) -> Step:
    ev, before, after = raw["event"], raw.get("before"), raw.get("after")
    commands = tuple(raw.get("commands", ()))
    alerted = any(isinstance(c, Alert) for c in commands) if "commands" in raw else None
    common = {"now": ev.now, "before": before, "after": after, "alerted": alerted,
              "sent": sent_of(commands), "what": f"{type(ev).__name__} at {ev.now}"}
    if isinstance(ev, Propose):
        other = before is not None and \
            ev.proposal.payload_digest != before.proposal.payload_digest
        return Step("Propose", amount=2 if other else 1, **common)
    if isinstance(ev, (Authorize, Dispatch)):
        live, holds = observed(ev, before)
        return Step(type(ev).__name__, lease_live=live, premises_hold=holds, **common)
    if isinstance(ev, Recover):
        live, holds = observed(ev, before)
        lookup = None if ev.lookup is None else (ev.lookup.found, ev.lookup.asked_at)
        action = recover_action(commands) if "commands" in raw else \
            ("Idle" if after == before else "Recover")
        return Step(action, lease_live=live, premises_hold=holds, lookup=lookup, **common)
    if isinstance(ev, Ack):
        return Step("Ack", attempt=ev.attempt, **common)
    if isinstance(ev, LookupAnswer):
        asked = getattr(ev, "asked_at", None)
        return Step("LateLookup", lookup=(ev.found, NO_EVIDENCE if asked is None else asked),
                    **common)
    raise KernelError(f"not a kernel event: {ev!r}")


def recover_action(commands: Sequence[Any]) -> str:
    if any(isinstance(c, Query) for c in commands):
        return "Query"
    if commands and all(type(c).__name__ == "WaitUntil" for c in commands):
        return "Wait"
    return "Recover"


def tier_caps(tier: Any, timing: Timing) -> Capabilities:
    dedupes, queryable = TIERS[tier]
    window = timing.dedup_margin * 2 + 1 if dedupes else 0
    return Capabilities(dedupes, queryable, dedup_window=window, lookup_lag=0)


def validate_trace(steps: Sequence[Mapping[str, Any]], tier: Any = None,
                   capabilities: Capabilities | None = None,
                   timing: Timing | None = None) -> TraceResult:
    """Check every kernel step of a recorded run against Kernel.tla's next-state relation.

    ``steps``: dicts with ``event`` (a kernel Event), ``effect_id``, ``before`` (Effect or
    None), ``after`` (Effect) and, if known, ``commands`` (what ``kernel.step`` returned).
    Each step is judged under its effect's own capabilities and timing (its proposal's),
    unless ``capabilities`` / ``timing`` are given; ``tier`` (1, "t1q", 2, 3) is used only
    for an effect that carries neither."""
    def model_of(raw: Mapping[str, Any]):
        effect = raw.get("after") or raw.get("before")
        p = effect.proposal if effect is not None else None
        tm = timing or (p.timing if p else Timing())
        caps = capabilities or (p.capabilities if p else tier_caps(tier, tm))
        return model_for(caps, tm)
    return run((model_of(s), from_kernel_step(s)) for s in steps)


# ---------------------------------------------------------------- input 2: the journal


def entry_checks(entry: Mapping[str, Any]) -> tuple[bool, bool]:
    checks = entry.get("checks") or {}
    live = bool(checks.get("lease", {}).get("live", True))
    return live, not checks.get("stale", [])


def entry_lookup(entry: Mapping[str, Any]) -> tuple[bool, int] | None:
    raw = entry.get("lookup")
    return None if raw is None else (raw["found"], raw["asked_at"])


@dataclass(frozen=True, slots=True)
class Rec:
    """What the spec's ``rec`` holds for one effect, folded from journal entries alone."""

    state: str
    attempts: int = 0
    first_sent_at: int | None = None
    claim_until: int = 0
    executed: str = "false"


def fold(rec: Rec | None, entry: Mapping[str, Any]) -> Rec | None:
    """The record after one journal entry, from the fields the entry itself records."""
    kind = entry["kind"]
    if kind == "PROPOSED":
        return rec or Rec("PROPOSED")
    if rec is None or kind == "REJECTED":
        return rec
    if kind == "AUTHORIZED":
        return Rec("AUTHORIZED", rec.attempts, rec.first_sent_at, rec.claim_until, rec.executed)
    if kind == "DISPATCHED":
        return Rec("DISPATCHED", entry["attempt"], entry["first_sent_at"], entry["claim_until"],
                   "unknown")
    if kind in ("COMMITTED", "REFUSED", "AMBIGUOUS"):
        executed = {"COMMITTED": "true", "AMBIGUOUS": "unknown"}.get(
            kind, str(entry.get("executed", "false")))
        return Rec(kind, rec.attempts, rec.first_sent_at, rec.claim_until, executed)
    confirms = kind == "LATE" and (entry.get("answer") == "ack" or entry.get("found") is True)
    if confirms and rec.executed == "unknown":
        return Rec(rec.state, rec.attempts, rec.first_sent_at, rec.claim_until, "true")
    return rec


def setup_of(entry: Mapping[str, Any]) -> tuple[Capabilities, Timing]:
    """The capabilities and timing a PROPOSED entry records."""
    return Capabilities(**entry["capabilities"]), Timing(**entry["timing"])


def journal_step(before: Rec | None, entry: Mapping[str, Any]) -> Step:
    kind, now = entry["kind"], entry["ts"]
    after = fold(before, entry)
    live, holds = entry_checks(entry)
    common = {"now": now, "before": before, "after": after, "alerted": None,
              "what": f"line {entry['seq'] + 1} {kind}"}
    if kind == "DISPATCHED":
        common["sent"] = (entry["attempt"], entry["deadline"])
    if kind in ("PROPOSED", "REJECTED"):
        return Step("Propose", amount=2 if kind == "REJECTED" else 1, **common)
    if before is not None and before.state in ("PROPOSED", "AUTHORIZED"):
        action = "Authorize" if before.state == "PROPOSED" else "Dispatch"
        return Step(action, lease_live=live, premises_hold=holds, **common)
    if kind == "COMMITTED" and entry["via"] == "ack":
        return Step("Ack", attempt=entry.get("attempt", 1), **common)
    if kind == "LATE":
        if entry["answer"] == "ack":
            return Step("Ack", attempt=entry.get("attempt", 1), **common)
        asked = entry.get("asked_at")
        return Step("LateLookup", lookup=(bool(entry.get("found")),
                                          NO_EVIDENCE if asked is None else asked), **common)
    return Step("Recover", lease_live=live, premises_hold=holds, lookup=entry_lookup(entry),
                **common)


def validate_journal(entries: Sequence[Mapping[str, Any]]) -> TraceResult:
    """Check each sealed journal entry as one kernel step of Kernel.tla, each effect under
    the capabilities and timing its PROPOSED entry records."""
    effects: dict[str, Rec | None] = {}
    models: dict[str, Any] = {}
    steps = []
    for entry in entries:
        eid = entry["effect_id"]
        if eid not in models:
            if entry["kind"] != "PROPOSED":
                return TraceResult(False, len(steps), len(steps), f"line {entry['seq'] + 1}: "
                                   f"{entry['kind']} for an effect never proposed")
            models[eid] = model_for(*setup_of(entry))
        step = journal_step(effects.get(eid), entry)
        steps.append((models[eid], step))
        effects[eid] = step.after
    return run(steps)


def check(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A simulator trace document (sim/TRACES.md) -> {"valid", "anomalies"}."""
    result = validate_journal(doc.get("journal") or [])
    anomalies = [] if result.ok else [{"type": "not_a_spec_step", "index": result.index,
                                       "explanation": result.explanation}]
    return {"valid": result.ok, "steps": result.steps, "anomalies": anomalies}
