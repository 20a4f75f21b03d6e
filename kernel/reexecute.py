"""Re-execution: a journal is valid exactly when the reference kernel, driven by the
observations the journal records, writes that journal.

How it works. Entries are taken in order. ``EVENTS[(state, kind)]`` rebuilds the input event
of an entry from its primary fields only: the entry's time, the lease record (id, expiry,
revocation), the facts observed, a lookup's answer and the time it was asked, an ack's
attempt, a proposal's decision record. The state is the one the kernel itself reached on the
earlier entries, never one the journal claims. ``machine.step`` then says what the kernel does
with that event, and the entry it appends is compared with the recorded one member by member
(all but seq, prev and hash). Derived members (``live``, ``stale``, deadlines, claims,
``first_sent_at``, attempt numbers, reasons) are thus recomputed, never believed.

The first difference stops the run as a ``Divergence``, whose sentence names the line, the
member and how the kernel computed its own value. Observations that cannot have happened
are divergences too: a lookup asked after its own entry, an ack of an attempt never sent. A
primary field that is missing (a refusal without the check it refused on) is a divergence,
never read as a default. A new entry kind fits with one rebuild function in ``EVENTS``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import orjson

from kernel.errors import IllegalTransition, KernelError
from kernel.machine import (
    Ack,
    Append,
    Authorize,
    Blocked,
    Dispatch,
    Effect,
    Event,
    LookupAnswer,
    Propose,
    Query,
    Recover,
    Reply,
    Verification,
    Verify,
    WaitUntil,
    step,
)
from kernel.model import Capabilities, Coordination, Lease, Plan, Proposal, State, Timing, View
from kernel.recovery import Lookup
from kernel.view import Folder

Entry = Mapping[str, Any]
CHAIN_FIELDS = frozenset({"seq", "prev", "hash"})
FOREVER = 2**53 - 1


class Divergence(Exception):
    """An entry the reference kernel does not write. ``kind`` is the divergence class."""

    def __init__(self, kind: str, field: str, explanation: str) -> None:
        super().__init__(explanation)
        self.kind = kind
        self.field = field
        self.explanation = explanation
        self.line = 0


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return text if len(text) <= 80 else text[:77] + "..."


def _need(entry: Entry, name: str, why: str) -> Any:
    if name not in entry:
        raise Divergence("missing_observation", name,
                         f"{entry['kind']} records no {name}: {why}")
    return entry[name]

# ---------------------------------------------------------------- rebuilding observations


def _checked(entry: Entry, effect: Effect) -> tuple[Lease, dict[str, Any]]:
    """The lease record and the facts a check observed (never a default for a missing one).

    The kernel records an unobserved fact as null; a null listed stale under a null premise
    can only have been unobserved, so it is rebuilt as absent."""
    checks = _need(entry, "checks", "the kernel records the lease and premise check it "
                   "decided on (a missing check is not a dead lease)")
    lease = checks["lease"]
    facts = checks["facts"]
    if checks["stale"]:
        stale = set(checks["stale"])
        premises = effect.proposal.premises
        facts = {k: v for k, v in facts.items()
                 if not (v is None and k in stale and k in premises and premises[k] is None)}
    return _lease(lease["id"], lease["expires_at"], lease["revoked"]), facts


# Lease records already built, by (id, expiry, revocation) of exactly str, int and bool: a
# journal observes the same few leases over and over (bounded, like the proposal memo).
_LEASES: dict[tuple[str, int, bool], Lease] = {}


def _lease(lid: Any, expires_at: Any, revoked: Any) -> Lease:
    if type(lid) is not str or type(expires_at) is not int or type(revoked) is not bool:
        return Lease(lid, expires_at, revoked)  # refused there, as by the kernel
    key = (lid, expires_at, revoked)
    lease = _LEASES.get(key)
    if lease is None:
        if len(_LEASES) >= 4_096:
            _LEASES.clear()
        lease = _LEASES[key] = Lease(lid, expires_at, revoked)
    return lease


def _lookup(entry: Entry) -> Lookup | None:
    raw = entry.get("lookup")
    if raw is None:
        return None
    if raw["asked_at"] > entry["ts"]:
        raise Divergence("impossible_observation", "lookup.asked_at",
                         f"the lookup was asked at {raw['asked_at']}, after its own entry's "
                         f"time {entry['ts']}")
    return Lookup(raw["found"], raw["asked_at"])


def _proposal(entry: Entry, ctx: Context) -> Proposal:
    unit = entry.get("coordination")
    try:
        return Proposal(payload=entry["payload"], premises=entry["premises"],
                        lease=entry["lease"], key=entry["key"], target=entry["target"],
                        capabilities=_setup(Capabilities, entry["capabilities"], ctx),
                        timing=_setup(Timing, entry["timing"], ctx),
                        coordination=Coordination.from_json(unit) if unit is not None
                        else None)
    except (KernelError, TypeError, ValueError) as exc:
        raise Divergence("refused_proposal", "kind",
                         f"the kernel refuses this proposal: {exc}") from None


def _setup(kind: Any, record: Any, ctx: Context) -> Any:
    """``kind(**record)`` (capabilities or timing), built once per record text in a run: a
    journal's proposals repeat a few such records, and the text (orjson's, sorted)
    determines the value, types included (true is not 1)."""
    try:
        text = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError: not plain JSON, so not a record to keep
        return kind(**record)
    held = ctx.setups.get(text)
    if held is None:
        if len(ctx.setups) >= 1_024:
            ctx.setups.clear()
        held = ctx.setups[text] = kind(**record)
    return held


class Context:
    """What a coordinated unit's events carry beside the entry: the journal-wide view of
    the entries before it (folded only once a coordinated unit appears) and the seq."""

    def __init__(self) -> None:
        self.earlier: list[Entry] = []
        self.folder: Folder | None = None
        self.seq = 0
        self.setups: dict[bytes, Any] = {}  # _setup's, for this run

    def view(self) -> View:
        if self.folder is None:
            self.folder = Folder()
            for entry in self.earlier:
                self.folder.add(entry)
        return self.folder.view()

    def done(self, entry: Entry) -> None:
        if self.folder is None:
            self.earlier.append(entry)
        else:
            self.folder.add(entry)


def _unit(effect: Effect, entry: Entry, ctx: Context) -> dict[str, Any]:
    """A coordinated unit's extra observations: the view, and the plan's current version
    as recorded in its check (the view's own record of the plan can only raise it)."""
    if effect.proposal.coordination is None:
        return {}
    unit = entry.get("checks", {}).get("unit")
    plan = unit.get("plan") if isinstance(unit, dict) else None
    if plan is not None and not (isinstance(plan, dict) and type(plan.get("id")) is str
                                 and type(plan.get("current")) is int):
        raise Divergence("missing_observation", "checks.unit.plan", "the plan check records "
                         "no plan id and current version (the observation it decided on)")
    return {"view": ctx.view(),
            "plan": Plan(plan["id"], plan["current"]) if plan is not None else None}


# ---------------------------------------------------------------- one rebuild per (state, kind)


def _propose(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    return Propose(entry["ts"], _proposal(entry, ctx))


def _resubmit(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    """A REJECTED entry: a proposal of this effect with the payload digest it names."""
    assert effect is not None
    again = replace(effect.proposal)
    object.__setattr__(again, "payload_digest", entry["payload_digest"])
    return Propose(entry["ts"], again)


def _authorize(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    assert effect is not None
    unit = _unit(effect, entry, ctx)
    if unit:
        unit["seq"] = ctx.seq
    return Authorize(entry["ts"], *_checked(entry, effect), **unit)


def _dispatch(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    assert effect is not None
    return Dispatch(entry["ts"], *_checked(entry, effect), **_unit(effect, entry, ctx))


def _recover(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    assert effect is not None
    return Recover(entry["ts"], *_checked(entry, effect), _lookup(entry),
                   **_unit(effect, entry, ctx))


def _commit(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    """An ack, or a recovery that found the effect (the kernel records no check for that:
    its decision to commit comes before any lease check, so any live lease stands in)."""
    assert effect is not None
    if entry["via"] == "ack":
        return Ack(entry["ts"], _need(entry, "attempt", "an ack names the attempt it answers"))
    p = effect.proposal
    return Recover(entry["ts"], Lease(p.lease, FOREVER), dict(p.premises), _lookup(entry),
                   **_unit(effect, entry, ctx))


def _verified(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    """After LANDED: the verification's result (COMMITTED passed, REFUSED failed)."""
    result = {"COMMITTED": "passed", "REFUSED": "failed"}.get(entry["kind"])
    return Verification(entry["ts"], result or entry.get("result", ""))


def _late(effect: Effect | None, entry: Entry, ctx: Context) -> Event:
    assert effect is not None
    if entry["answer"] == "ack":
        attempt = _need(entry, "attempt", "an ack names the attempt it answers")
        if attempt > effect.attempts:
            raise Divergence("impossible_observation", "attempt",
                             f"a late ack of attempt {attempt}, but the kernel sent "
                             f"{effect.attempts} attempt(s) of this effect")
        return Ack(entry["ts"], attempt)
    found = _need(entry, "found", "a lookup answer says whether the effect was found")
    asked = entry.get("asked_at")
    if asked is not None and asked > entry["ts"]:
        raise Divergence("impossible_observation", "asked_at",
                         f"the lookup was asked at {asked}, after its own entry's time "
                         f"{entry['ts']}")
    return LookupAnswer(entry["ts"], found, asked)


Rebuild = Callable[[Effect | None, Entry, Context], Event]
P, A, D, L = State.PROPOSED, State.AUTHORIZED, State.DISPATCHED, State.LANDED
FINALS = (State.COMMITTED, State.REFUSED, State.AMBIGUOUS)

EVENTS: dict[tuple[State | None, str], Rebuild] = {
    **{(s, "PROPOSED"): _propose for s in (None, *State)},
    **{(s, "REJECTED"): _resubmit for s in State},
    (P, "AUTHORIZED"): _authorize, (P, "REFUSED"): _authorize,
    (A, "DISPATCHED"): _dispatch, (A, "REFUSED"): _dispatch,
    **{(D, k): _recover for k in ("DISPATCHED", "REFUSED", "AMBIGUOUS")},
    (D, "COMMITTED"): _commit, (D, "LANDED"): _commit,
    **{(L, k): _verified for k in ("COMMITTED", "REFUSED", "VERIFIED")},
    **{(s, "LATE"): _late for s in FINALS},
}

# ---------------------------------------------------------------- comparing


def _silence(effect: Effect | None, commands: Iterable[Any]) -> str:
    """What the kernel does instead of writing an entry."""
    for c in commands:
        if isinstance(c, WaitUntil):
            return f"it waits until {c.time}, when the last send's claim expires"
        if isinstance(c, Query):
            claim = effect.claim_until if effect else 0
            return (f"it asks the target first (no lookup asked at or after the claim's end "
                    f"{claim})")
        if isinstance(c, Reply):
            return f"a new submission of this effect is answered '{c.outcome}', not journaled"
        if isinstance(c, Blocked):
            return (f"admission waits: {', '.join(c.items)} held by a live claim until "
                    f"{c.until}")
        if isinstance(c, Verify):
            return "it runs the verification (again)"
    return "it takes no step"


def _first_difference(expected: Mapping[str, Any], recorded: Mapping[str, Any],
                      path: str = "") -> tuple[str, Any, Any] | None:
    """(member path, kernel's value, recorded value) of the first difference in key order;
    ``...`` stands for an absent member."""
    names = expected.keys() | recorded.keys()
    for name in sorted(names - CHAIN_FIELDS if not path else names):
        want, got = expected.get(name, ...), recorded.get(name, ...)
        where = f"{path}{name}"
        if isinstance(want, dict) and isinstance(got, dict):
            inner = _first_difference(want, got, where + ".")
            if inner:
                return inner
        elif not _same(want, got):
            return where, want, got
    return None


def _typed_alike(expected: Mapping[str, Any], entry: Entry) -> bool:
    """Whether every member of ``expected`` is in ``entry`` with a value equal by ``_same``
    (a member that is the very same object is); one pass, the whole entry at once. With
    equal sizes, this is ``_same`` of two dicts."""
    for name, want in expected.items():
        got = entry.get(name, _ABSENT)
        if want is got:
            continue
        kind = type(want)
        if kind is not type(got):
            return False
        if kind is dict or kind is list or kind is tuple:
            if not _same(want, got):
                return False
        elif want != got:
            return False
    return True


_ABSENT = object()


def _same(a: Any, b: Any) -> bool:
    """Type-exact equality of JSON values: unlike ``==``, true is not 1 and 5.0 is not 5,
    at any depth (a recorded value of another JSON type is a divergence, never a match)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and _typed_alike(a, b)
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _how(field: str, effect: Effect | None, event: Event, entry: Entry,
         expected: Mapping[str, Any]) -> str:
    """How the kernel computed its value of ``field`` (the end of a divergence sentence)."""
    p = effect.proposal if effect else None
    ts = entry["ts"]
    if p is not None and field == "claim_until":
        return (f"deadline {expected.get('deadline')} + settle margin "
                f"{p.timing.settle_margin}")
    if p is not None and field == "deadline":
        return f"ts {ts} + send timeout {p.timing.send_timeout}"
    if effect is not None and field == "first_sent_at":
        return (f"the first send's time {effect.first_sent_at}" if effect.first_sent_at
                is not None else f"this first send's time {ts}")
    if effect is not None and field == "attempt" and entry["kind"] == "DISPATCHED":
        return f"{effect.attempts} earlier attempt(s) + 1"
    if p is not None and field == "checks.lease.live":
        lease = getattr(event, "lease", None)
        if lease is not None:
            return (f"lease {lease.id!r} (the proposal's is {p.lease!r}), revoked "
                    f"{str(lease.revoked).lower()}, expires at {lease.expires_at}, at ts {ts}")
    if p is not None and field.startswith("checks.stale"):
        return f"the premises {_shown(dict(p.premises))} against the facts observed"
    if field.startswith("checks.facts"):
        return "the facts observed for each premise (null where none was observed)"
    if field in ("reason", "kind", "executed", "via"):
        return "the lease and premise checks and the recovery order (DESIGN.md section 4)"
    if field in ("effect_id", "payload_digest"):
        return "the SHA-256 of the canonical decision key (or payload)"
    return "the observations recorded"


def _compare(effect: Effect | None, event: Event, entry: Entry,
             expected: Mapping[str, Any]) -> None:
    if expected["kind"] != entry["kind"]:
        reason = expected.get("reason") or expected.get("via") or expected.get("phase")
        raise Divergence("wrong_outcome", "kind",
                         f"recorded {entry['kind']}, the kernel writes {expected['kind']}"
                         f"{f' ({reason})' if reason else ''} from "
                         f"{_how('kind', effect, event, entry, expected)}")
    found = _first_difference(expected, entry)
    if found is None:
        return
    field, want, got = found
    how = _how(field, effect, event, entry, expected)
    if got is ...:
        raise Divergence("wrong_field", field, f"{field} is missing, the kernel records "
                         f"{_shown(want)} from {how}")
    if want is ...:
        raise Divergence("wrong_field", field, f"{field} is {_shown(got)}, the kernel "
                         f"records no {field}")
    raise Divergence("wrong_field", field, f"{field} is {_shown(got)}, the kernel computes "
                     f"{_shown(want)} from {how}")

# ---------------------------------------------------------------- the run


def reexecute_entry(effect: Effect | None, entry: Entry, ctx: Context | None = None) -> Effect:
    """The kernel's effect after the step that wrote ``entry``, or Divergence."""
    ctx = ctx or Context()
    state = effect.state if effect is not None else None
    rebuild = EVENTS.get((state, entry["kind"]))
    if rebuild is None:
        where = state.value if state else "an effect never proposed"
        raise Divergence("unexpected_entry", "kind",
                         f"the kernel never writes {entry['kind']} for {where}")
    event = rebuild(effect, entry, ctx)
    try:
        result = step(effect, event)
    except IllegalTransition as exc:
        raise Divergence("impossible_observation", "kind", str(exc)) from None
    for c in result.commands:
        if isinstance(c, Append):
            expected = c.entry
            break
    else:
        raise Divergence("silent_kernel", "kind", f"the kernel writes nothing at ts "
                         f"{entry['ts']}: {_silence(effect, result.commands)}")
    if len(expected) + 3 != len(entry) or not _typed_alike(expected, entry):
        _compare(effect, event, entry, expected)
    return result.effect


def reexecute(entries: Iterable[Entry]) -> dict[str, Effect]:
    """The kernel's effects after writing ``entries``; raises Divergence (with ``line``) at
    the first entry the reference kernel does not write."""
    effects: dict[str, Effect] = {}
    ctx = Context()
    for entry in entries:
        eid = entry["effect_id"]
        ctx.seq = entry["seq"]
        try:
            effects[eid] = reexecute_entry(effects.get(eid), entry, ctx)
        except Divergence as d:
            d.line = entry["seq"] + 1
            d.explanation = f"line {d.line}: effect {eid[:12]}: {d.explanation}"
            raise
        ctx.done(entry)
    return effects
