"""Invariants K1-K10 judged from a journal and the target's record alone, written from DESIGN.md.

How it works. This module is the oracle's independent layer: it imports nothing from the
kernel (not the state machine, not the recovery decision, not the model's helpers), so a
bug in the kernel's decision code cannot hide behind the same code here. It reads only
primary observations: each entry's time, the proposal (payload, premises, lease id,
capabilities, timing), the lease record of each check (id, expiry, revocation), the facts
observed, lookup answers with the time they were asked, acks with their attempt, and the
target's record. Every derived value (lease liveness, stale premises, deadlines, claims,
first send time, the dedup window) is recomputed; a recorded flag can condemn an entry
that admits a failed check, never excuse one.

Entries are grouped by effect in one pass; each effect is then judged in one pass over its
entries and its target records, so the whole check is linear in the journal and history.
The target's record is a list of ``{"op": "send", "effect_id", "attempt", "ts"}`` (a request
left a worker) and ``{"op": "apply", "effect_id", "ts", "payload_digest"}`` (the target
applied it). With ``complete`` the record is the target's whole record and recovery ran to
the end: an application of an effect the journal never names is K1, an effect without a
final entry K9.

What each invariant checks here (t = the entry's time, or a send record's time):
- K1: every send record has a DISPATCHED of its attempt at or before it; every application
  follows the effect's first DISPATCHED; attempts are journaled 1, 2, 3; with ``complete``,
  no application of an effect the journal never names.
- K2: at most one application; a tier-3 effect is dispatched and sent once; a resend has an
  open dedup window (first DISPATCHED + window - margin, and an in-flight bound) or a
  "not found" asked after every earlier claim and before the resend; nothing after a final.
- K3: the PROPOSED digest and id match its payload and key (when this module can spell them
  canonically), a decision is proposed once, REJECTED names another payload, and every
  application carries the recorded payload's digest.
- K4: each dispatch and send is under the proposal's lease, not revoked, unexpired at t;
  journal-wide, a lease id once observed revoked or expired is never observed live again.
- K5: each dispatch and send follows facts equal to every premise (JSON equality).
- K6: no DISPATCHED or send before the claim of an earlier one (deadline, recomputed as
  ts + send_timeout if later, plus settle_margin) expires.
- K7: COMMITTED needs an ack of a dispatched (and sent) attempt or a positive lookup, and an
  application no later than itself; REFUSED after a send needs a "not found" asked after the
  claim; executed=false, executed=true (COMMITTED or settled by a LATE answer) must match the
  record; AMBIGUOUS only after a send, where no lookup, open window or passing check could
  settle it, with a reason the facts support; no lookup asked after its own entry; a late
  confirmation that settles an AMBIGUOUS receipt comes no earlier than an application.
- K9 (``complete``): no effect left without a final entry: DISPATCHED ones are
  ``unresolved``, PROPOSED or AUTHORIZED ones (recovery re-runs their checks)
  ``unresolved_never_sent``. K10: a refusal's checks really failed, with
  the reason naming a failed check.

Coordinated units (DESIGN.md section 8: a PROPOSED entry with ``coordination``) are judged
once more, over the whole journal in seq order, from the proposal's write set, read set,
ttl, budget, cost, cap, plan and version, each entry's seq and time, and the plan versions
the checks observed. A unit's claim is recomputed: token = the seq of its AUTHORIZED entry,
live until that entry's time + ttl or the unit's first final entry. Journals without
coordination are untouched by this part.
- G1: seqs are 0, 1, 2 in journal order; a recorded token (at admission, at the target) is
  the seq of the unit's own admission.
- G2: no admission while another unit holds a live claim on one of its write items; no
  DISPATCHED of a unit without a live claim of its own; at the target (records with a
  ``token``), no write with a token lower than one it already applied for those items.
- G5: a unit that requires verification is COMMITTED only ``via: verification`` after a
  LANDED entry, never after a failed verification.
- G6 (limited): no DISPATCHED of a unit after a unit whose live claim covered its reads at
  its admission (recomputed) was dispatched and not proven unapplied.
- G7: at each admission the cost reserved against its budget (admitted units not REFUSED
  executed=false) is within the smallest cap declared so far; a unit that spent (COMMITTED,
  or applied in the target's record) holds a reservation then.
- G8: no admission or DISPATCHED of a unit whose plan version is below the highest version
  an earlier unit's proposal or any check (this entry's too) recorded for its plan.

Witnesses are journal lines (``line N``, N = seq + 1) and history records (``hI``, the
record's 0-based index); each explanation is one sentence naming them. Several violations
of one kind for one effect are reported once, with how many more there were.
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Entry = Mapping[str, Any]
Record = Mapping[str, Any]
FINALS = ("COMMITTED", "REFUSED", "AMBIGUOUS")
NEVER = 2**63  # a claim that never expires (the target states no in-flight bound)


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str  # "K1" ... "K10", "G1" ... "G8"
    type: str
    explanation: str
    witnesses: tuple[str, ...] = ()
    effect_id: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "type": self.type,
                "explanation": self.explanation, "witnesses": list(self.witnesses),
                "effect_id": self.effect_id}


# ---------------------------------------------------------------- JSON, identity, facts


# The C encoder without its Python wrapper (no cycle markers: a value is checked by _plain,
# which never ends on a cycle), returning the text in pieces: sorted, compact, raw UTF-8.
_pieces = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, None, json.encoder.encode_basestring, None, ":", ",", True, False, False)


def _plain(value: Any) -> bool:
    """Values whose RFC 8785 form is Python's sorted compact json: no floats, safe ints,
    keys in the Basic Multilingual Plane."""
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return True
    if kind is int:
        return bool(abs(value) <= 2**53 - 1)
    if kind is list:
        return all(map(_plain, value))
    if kind is dict:
        for k, v in value.items():
            if not ((k.isascii() or max(k) < "\U00010000") and _plain(v)):
                return False
        return True
    return False


def digest_of(value: Any) -> str | None:
    """SHA-256 of the canonical JSON of a plain value; None when this module cannot spell
    it (floats, non-BMP keys): then the binding is left to the oracle's other layers."""
    if not _plain(value):
        return None
    try:
        return hashlib.sha256("".join(_pieces(value, 0)).encode("utf-8")).hexdigest()
    except (UnicodeEncodeError, ValueError):
        return None


def same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, objects compare member by member."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# ---------------------------------------------------------------- one effect's record


@dataclass(slots=True)
class Effect:
    """What the journal and the target record say about one effect, in order."""

    eid: str
    proposal: Entry | None = None
    entries: list[Entry] = field(default_factory=list)
    sends: list[tuple[int, Record]] = field(default_factory=list)
    applies: list[tuple[int, Record]] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.eid[:12]

    def caps(self) -> Mapping[str, Any]:
        return (self.proposal or {}).get("capabilities") or {}

    def timing(self) -> Mapping[str, Any]:
        return (self.proposal or {}).get("timing") or {}

    def claim(self, sent_at: int, deadline: int, dispatched_at: int | None = None) -> int:
        """Until when a send made at ``sent_at`` may still land, from the target's stated
        in-flight bound: the deadline it honours, or its bounded delivery, plus the settle
        margin. The deadline a request carries is recomputed from its DISPATCHED entry's time
        (``dispatched_at``, the send time when not given); the recorded one can only extend
        it. Bounded delivery counts from the send itself."""
        caps, timing = self.caps(), self.timing()
        settle = int(timing.get("settle_margin", 0))
        issued = sent_at if dispatched_at is None else dispatched_at
        if caps.get("bounds_in_flight") is False:  # the target states no bound at all
            return NEVER
        bounds = []
        if caps.get("honours_deadline", True):
            bounds.append(max(deadline, issued + int(timing.get("send_timeout", 0))))
        if type(caps.get("max_delivery_delay")) is int:
            bounds.append(sent_at + caps["max_delivery_delay"])
        return min(bounds) + settle if bounds else NEVER

    def window_open(self, first_sent: int, now: int) -> bool:
        """A same-key resend made now is surely still deduplicated (DESIGN.md: the window
        minus a margin larger than send timeout plus settle margin)."""
        caps, timing = self.caps(), self.timing()
        if not caps.get("dedupes"):
            return False
        margin = max(int(timing.get("dedup_margin", 0)),
                     int(timing.get("send_timeout", 0)) + int(timing.get("settle_margin", 0)))
        return now < first_sent + int(caps.get("dedup_window", 0)) - margin

    def lease_live(self, checks: Mapping[str, Any], at: int) -> bool:
        lease = checks.get("lease") or {}
        return (lease.get("id") == (self.proposal or {}).get("lease")
                and lease.get("revoked") is False and type(lease.get("expires_at")) is int
                and at < lease["expires_at"] and lease.get("live") is not False)

    def stale(self, checks: Mapping[str, Any]) -> list[str]:
        """Premises the recorded facts do not support, plus any the record itself admits."""
        premises = (self.proposal or {}).get("premises") or {}
        facts = checks.get("facts") or {}
        out = [k for k, v in premises.items() if k not in facts or not same(facts[k], v)]
        admitted = checks.get("stale") or []
        if not out and not admitted:
            return out
        return sorted(set(out) | {s for s in admitted if isinstance(s, str)})

    def tier(self) -> int:
        caps = self.caps()
        return 1 if caps.get("dedupes") else 2 if caps.get("queryable") else 3

    def bounded(self) -> bool:
        """The target states an in-flight bound (today's journals: it honours deadlines)."""
        return self.claim(0, 0) < NEVER

    def lookups_prove_absence(self) -> bool:
        """A "not found" is evidence only at a queryable target whose settle margin exceeds
        its lookup lag and which states an in-flight bound."""
        caps = self.caps()
        settle = int(self.timing().get("settle_margin", 0))
        return bool(caps.get("queryable")) and settle > int(caps.get("lookup_lag", 0)) \
            and self.bounded()


def line(entry: Entry) -> str:
    return f"line {int(entry['seq']) + 1}"


def group(entries: Iterable[Entry], history: Sequence[Record] | None) -> dict[str, Effect]:
    effects: dict[str, Effect] = {}
    for entry in entries:
        eid = entry["effect_id"]
        fx = effects.get(eid)
        if fx is None:
            fx = effects[eid] = Effect(eid)
        if entry["kind"] == "PROPOSED" and fx.proposal is None:
            fx.proposal = entry
        fx.entries.append(entry)
    for i, record in enumerate(history or ()):
        eid = record["effect_id"]
        fx = effects.get(eid)
        if fx is None:
            fx = effects[eid] = Effect(eid)
        (fx.sends if record.get("op", "apply") == "send" else fx.applies).append((i, record))
    return effects


class Report:
    """Collects violations: the first of each (effect, type) with a count of the rest."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], Violation] = {}
        self.more: dict[tuple[str, str], int] = {}

    def add(self, fx: Effect, invariant: str, kind: str, explanation: str,
            *witnesses: str) -> None:
        key = (fx.eid, kind)
        if key in self.first:
            self.more[key] = self.more.get(key, 0) + 1
            return
        self.first[key] = Violation(invariant, kind, explanation, witnesses, fx.eid)

    def violations(self) -> list[Violation]:
        out = []
        for key, v in self.first.items():
            n = self.more.get(key, 0)
            if n:
                v = Violation(v.invariant, v.type, f"{v.explanation[:-1]} ({n} more like it).",
                              v.witnesses, v.effect_id)
            out.append(v)
        return out


# ---------------------------------------------------------------- the journal, effect by effect


@dataclass(slots=True)
class Walk:
    """What one pass over an effect's entries learnt, for the target-record checks."""

    dispatched: dict[int, Entry] = field(default_factory=dict)
    first_sent: int | None = None
    claim: int = 0  # the latest claim of any send journaled so far
    last_attempt: int = 0
    final: Entry | None = None
    settled: Entry | None = None  # a LATE confirmation of an AMBIGUOUS effect


def _negative_lookup(fx: Effect, walk: Walk, entry: Entry) -> bool:
    """The entry carries a lookup that proves the effect absent when it was decided."""
    lookup = entry.get("lookup") or {}
    return (lookup.get("found") is False and fx.lookups_prove_absence()
            and walk.claim <= int(lookup.get("asked_at", -1)) <= int(entry["ts"]))


def _proposed(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    if e is not fx.proposal:
        same_payload = e.get("payload_digest") == fx.proposal.get("payload_digest") \
            if fx.proposal else False
        out.add(fx, "K3", "proposed_twice" if same_payload else "decision_rewritten",
                f"{line(e)}: effect {fx.short} is proposed a second time"
                + ("" if same_payload else " with another payload") + ".", line(e))
        return
    wanted = digest_of(e.get("payload"))
    if wanted is not None and wanted != e.get("payload_digest"):
        out.add(fx, "K3", "payload_digest_mismatch", f"{line(e)}: the recorded payload_digest "
                f"of effect {fx.short} is not the digest of its payload.", line(e))
    key = e.get("payload") if e.get("key") is None else e.get("key")
    named = digest_of(key)
    if named is not None and named != fx.eid:
        out.add(fx, "K3", "identity_mismatch", f"{line(e)}: effect id {fx.short} is not the "
                f"digest of its decision key (or payload).", line(e))


def _dispatched(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    ts, attempt, checks = int(e["ts"]), e.get("attempt"), e.get("checks") or {}
    if walk.final is not None:
        out.add(fx, "K2", "dispatched_after_final", f"{_attempt(fx, e)} is dispatched after "
                f"its final entry {line(walk.final)}.", line(e), line(walk.final))
    if attempt != walk.last_attempt + 1:
        out.add(fx, "K1", "attempt_out_of_order", f"{_attempt(fx, e)} follows attempt "
                f"{walk.last_attempt}: attempts are numbered 1, 2, 3 as they are sent.", line(e))
    if not fx.lease_live(checks, ts):
        out.add(fx, "K4", "dispatched_without_authority", f"{_attempt(fx, e)} is dispatched at "
                f"{ts} under a lease its own record shows not live then (or another lease).",
                line(e))
    stale = fx.stale(checks)
    if stale:
        out.add(fx, "K5", "dispatched_on_stale_premise", f"{_attempt(fx, e)} is dispatched "
                f"although the recorded facts do not support premise(s) {', '.join(stale)}.",
                line(e))
    if walk.dispatched:
        _resend(fx, walk, e, out)
    walk.dispatched.setdefault(int(attempt or 0), e)
    walk.last_attempt = max(walk.last_attempt, int(attempt or 0))
    if walk.first_sent is None:
        walk.first_sent = ts
    walk.claim = max(walk.claim, fx.claim(ts, int(e.get("deadline", 0))))


def _attempt(fx: Effect, e: Entry) -> str:
    """How a sentence about a DISPATCHED entry starts (built only when one is written)."""
    return f"{line(e)}: effect {fx.short} attempt {e.get('attempt')}"


def _resend(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    ts, where = int(e["ts"]), _attempt(fx, e)
    if ts < walk.claim:
        out.add(fx, "K6", "resent_inside_claim", f"{where} is resent at {ts} while an earlier "
                f"send may still land (its claim runs until {walk.claim}).", line(e))
    if fx.tier() == 3:
        out.add(fx, "K2", "tier3_resent", f"{where} is a resend at a target that can neither "
                f"deduplicate nor be looked up.", line(e))
        return
    assert walk.first_sent is not None
    same_key = fx.window_open(walk.first_sent, ts) and fx.bounded()
    if not (same_key or _negative_lookup(fx, walk, e)):
        out.add(fx, "K2", "resend_unsafe", f"{where} is resent at {ts} with neither an open "
                f"dedup window (first send {walk.first_sent}) nor a lookup proving it absent "
                f"after the claim.", line(e))


def _committed(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    if not walk.dispatched:
        out.add(fx, "K7", "committed_never_sent", f"{_about(fx, e)} is COMMITTED but was never "
                f"dispatched.", line(e))
    elif e.get("via") == "ack" and e.get("attempt") not in walk.dispatched:
        out.add(fx, "K7", "ack_of_unsent_attempt", f"{_about(fx, e)} is COMMITTED by an ack of "
                f"attempt {e.get('attempt')}, which was never dispatched.", line(e))
    elif e.get("via") == "lookup" and not ((e.get("lookup") or {}).get("found") is True
                                          and fx.caps().get("queryable")):
        out.add(fx, "K7", "committed_without_lookup", f"{_about(fx, e)} is COMMITTED via lookup "
                f"without a lookup at a queryable target that found it.", line(e))


def _about(fx: Effect, e: Entry) -> str:
    return f"{line(e)}: effect {fx.short}"


UNIT_REASONS = ("plan_superseded", "claim_expired", "read_overlap_moved", "over_budget")


def unit_check(e: Entry) -> str:
    """The unit check a refusal names, at admission, dispatch or recovery (a recovery's
    reason is the check's name with ``_at_recovery``, and ``_cannot_confirm`` after it when
    it ends AMBIGUOUS), or ""."""
    reason = str(e.get("reason", "")).removesuffix("_cannot_confirm")
    reason = reason.removesuffix("_at_recovery")
    return reason if reason in UNIT_REASONS else ""


def unit_reason(fx: Effect, e: Entry) -> bool:
    """A coordinated unit refused for a unit check: its cause is judged with G1-G8."""
    return "coordination" in (fx.proposal or {}) and bool(unit_check(e))


def _reason_contradicts(fx: Effect, e: Entry) -> bool:
    reason, checks, ts = str(e.get("reason", "")), e.get("checks"), int(e["ts"])
    if checks is None:
        return False
    if reason.startswith("lease_dead") and fx.lease_live(checks, ts):
        return True
    return reason.startswith("premise_stale") and not fx.stale(checks)


def _refused(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    checks, ts, where = e.get("checks"), int(e["ts"]), f"{line(e)}: effect {fx.short}"
    for_a_check = str(e.get("reason", "")).startswith(("lease_dead", "premise_stale"))
    if checks is None and for_a_check:
        out.add(fx, "K10", "refused_without_cause", f"{where} is REFUSED for a failed check "
                f"it does not record.", line(e))
    elif checks is not None and fx.lease_live(checks, ts) and not fx.stale(checks) \
            and not unit_reason(fx, e):
        out.add(fx, "K10", "refused_without_cause", f"{where} is REFUSED though its recorded "
                f"lease was live and its premises held.", line(e))
    elif _reason_contradicts(fx, e):
        out.add(fx, "K10", "reason_contradicts_checks", f"{where} is REFUSED as "
                f"'{e.get('reason')}', which its own recorded checks contradict.", line(e))
    if not walk.dispatched and str(e.get("reason", "")).endswith("_at_recovery"):
        out.add(fx, "K10", "recovery_reason_without_send", f"{where} is REFUSED as "
                f"'{e.get('reason')}' although it was never dispatched.", line(e))
    if walk.dispatched and e.get("executed", "false") == "false" \
            and not _negative_lookup(fx, walk, e):
        out.add(fx, "K7", "refused_without_proof", f"{where} is REFUSED (executed=false) after "
                f"a send without a lookup, asked after the claim, proving it absent.", line(e))


def _ambiguous(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    where, caps = f"{line(e)}: effect {fx.short}", fx.caps()
    if not walk.dispatched:
        out.add(fx, "K7", "ambiguous_never_sent", f"{where} is AMBIGUOUS but was never sent, "
                f"so it is provably not applied.", line(e))
        return
    if fx.lookups_prove_absence() or (e.get("lookup") or {}).get("found") is True:
        out.add(fx, "K7", "needless_ambiguity", f"{where} ended AMBIGUOUS although its target "
                f"can be looked up.", line(e))
    elif _resend_was_safe(fx, walk, e):
        out.add(fx, "K7", "needless_ambiguity", f"{where} ended AMBIGUOUS inside its dedup "
                f"window with a live lease and holding premises: a resend was safe.", line(e))
    if _ambiguity_reason_wrong(fx, walk, e, caps):
        out.add(fx, "K7", "ambiguity_reason_contradicts", f"{where} is AMBIGUOUS as "
                f"'{e.get('reason')}', which the recorded facts contradict.", line(e))


def _resend_was_safe(fx: Effect, walk: Walk, e: Entry) -> bool:
    checks, ts = e.get("checks"), int(e["ts"])
    if walk.first_sent is None or not fx.window_open(walk.first_sent, ts) or ts < walk.claim:
        return False
    if not fx.bounded():  # a late landing could outlast the window: no resend was safe
        return False
    if unit_reason(fx, e):  # a unit check failed (judged with G1-G8): no resend was safe
        return False
    return checks is None or (fx.lease_live(checks, ts) and not fx.stale(checks))


def _ambiguity_reason_wrong(fx: Effect, walk: Walk, e: Entry, caps: Mapping[str, Any]) -> bool:
    reason = str(e.get("reason", ""))
    if reason == "no_dedup_no_lookup":
        return bool(caps.get("dedupes"))
    if reason == "dedup_window_expired_no_lookup":
        return not caps.get("dedupes") or fx.window_open(walk.first_sent or 0, int(e["ts"]))
    return _reason_contradicts(fx, e)


def _late(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    where, final = f"{line(e)}: effect {fx.short}", walk.final
    if final is None:
        out.add(fx, "K7", "late_before_final", f"{where} records a late answer before any "
                f"final entry.", line(e))
        return
    if e.get("answer") == "ack" and e.get("attempt") not in walk.dispatched:
        out.add(fx, "K7", "ack_of_unsent_attempt", f"{where} records an ack of attempt "
                f"{e.get('attempt')}, which was never dispatched.", line(e))
    if e.get("answer") == "lookup" and not fx.caps().get("queryable"):
        out.add(fx, "K7", "lookup_at_unqueryable_target", f"{where} records a lookup answer "
                f"from a target that cannot be looked up.", line(e))
        return  # no such answer exists: it settles nothing
    confirms = e.get("answer") == "ack" or e.get("found") is True
    if confirms and final["kind"] == "REFUSED" and final.get("executed", "false") == "false":
        out.add(fx, "K7", "refused_but_confirmed", f"{where}: the target confirmed an effect "
                f"REFUSED as never applied at {line(final)}.", line(final), line(e))
    if confirms and final["kind"] == "AMBIGUOUS" and walk.settled is None:
        walk.settled = e
    asked = e.get("asked_at")
    if e.get("found") is False and final["kind"] == "COMMITTED" and type(asked) is int \
            and asked >= walk.claim and fx.lookups_prove_absence():
        out.add(fx, "K7", "committed_but_not_found", f"{where}: a lookup asked after every "
                f"claim did not find an effect COMMITTED at {line(final)}.", line(final), line(e))


def _rejected(fx: Effect, walk: Walk, e: Entry, out: Report) -> None:
    if fx.proposal is not None and e.get("payload_digest") == fx.proposal.get("payload_digest"):
        out.add(fx, "K3", "rejected_own_payload", f"{line(e)}: effect {fx.short} rejects as "
                f"conflicting the very payload it was proposed with.", line(e))


STEPS = {"PROPOSED": _proposed, "DISPATCHED": _dispatched, "COMMITTED": _committed,
         "REFUSED": _refused, "AMBIGUOUS": _ambiguous, "LATE": _late, "REJECTED": _rejected}


def walk_journal(fx: Effect, out: Report, complete: bool) -> Walk:
    walk = Walk()
    if fx.proposal is None:
        out.add(fx, "K3", "no_decision", f"{line(fx.entries[0])}: effect {fx.short} has "
                f"entries but no PROPOSED decision.", line(fx.entries[0]))
        return walk
    for e in fx.entries:
        lookup = e.get("lookup")
        asked = e.get("asked_at") if lookup is None else lookup.get("asked_at")
        if type(asked) is int and asked > int(e["ts"]):
            out.add(fx, "K7", "lookup_from_the_future", f"{line(e)}: effect {fx.short} cites "
                    f"a lookup asked at {asked}, after the entry itself ({e['ts']}).", line(e))
        step = STEPS.get(e["kind"])
        if step is not None:
            step(fx, walk, e, out)
        if e["kind"] in FINALS and walk.final is None:
            walk.final = e
    if complete and walk.final is None:
        _unresolved(fx, walk, out)
    return walk


def _unresolved(fx: Effect, walk: Walk, out: Report) -> None:
    """K9 with ``complete``: recovery ran to the end, so every effect has a final entry; one
    left PROPOSED or AUTHORIZED was never sent, so it is known unresolved, not in doubt."""
    if walk.dispatched:
        last = walk.dispatched[walk.last_attempt] if walk.last_attempt in walk.dispatched \
            else fx.entries[-1]
        out.add(fx, "K9", "unresolved", f"{line(last)}: effect {fx.short} was DISPATCHED and "
                f"never reached a final state.", line(last))
        return
    last = [e for e in fx.entries if e["kind"] in ("PROPOSED", "AUTHORIZED")][-1]
    out.add(fx, "K9", "unresolved_never_sent", f"{line(last)}: effect {fx.short} is left "
            f"{last['kind']} with no final entry although recovery ran to the end (it "
            f"resolves effects that were never sent too).", line(last))


# ---------------------------------------------------------------- the target's record


def check_sends(fx: Effect, walk: Walk, out: Report) -> None:
    """K1 write-ahead, K4 lease at send, K5 premises at send, K6 no self-race, K2 at tier 3."""
    claim, sent = 0, set()
    for i, s in sorted(fx.sends, key=lambda pair: int(pair[1].get("ts", 0))):
        ts, attempt, h = int(s.get("ts", 0)), s.get("attempt"), f"h{i}"
        d = walk.dispatched.get(attempt) if type(attempt) is int else None
        where = f"history record {h}: effect {fx.short} attempt {attempt} sent at {ts}"
        if d is None or int(d["ts"]) > ts:
            out.add(fx, "K1", "send_without_intent", f"{where} has no DISPATCHED entry of "
                    f"that attempt at or before it.", h)
        elif ts < claim:
            out.add(fx, "K6", "self_race", f"{where} may race an earlier send still in flight "
                    f"(claim until {claim}, DISPATCHED at {line(d)}).", line(d), h)
        elif attempt in sent:
            out.add(fx, "K1", "send_repeated", f"{where} repeats a send of that attempt with "
                    f"no DISPATCHED of its own.", line(d), h)
        else:
            checks = d.get("checks") or {}
            if not fx.lease_live(checks, ts):
                out.add(fx, "K4", "send_without_authority", f"{where} left under a lease not "
                        f"live at that moment (lease record at {line(d)}).", line(d), h)
            stale = fx.stale(checks)
            if stale:
                out.add(fx, "K5", "send_on_stale_premise", f"{where} left although premise(s) "
                        f"{', '.join(stale)} were not supported (checks at {line(d)}).",
                        line(d), h)
        sent.add(attempt)
        if d is not None:
            claim = max(claim, fx.claim(ts, int(d.get("deadline", 0)), int(d["ts"])))
    if fx.proposal is not None and fx.tier() == 3 and len(fx.sends) > 1:
        out.add(fx, "K2", "tier3_resent", f"history record h{fx.sends[1][0]}: effect "
                f"{fx.short} at a tier-3 target was sent {len(fx.sends)} times.",
                *(f"h{i}" for i, _ in fx.sends[:2]))


def check_applies(fx: Effect, walk: Walk, out: Report, complete: bool) -> None:
    """K1 (applications), K2 at most once, K3 payload binding, K7 receipts vs the record."""
    if len(fx.applies) > 1:
        out.add(fx, "K2", "applied_twice", f"history record h{fx.applies[1][0]}: effect "
                f"{fx.short} was applied {len(fx.applies)} times.",
                *(f"h{i}" for i, _ in fx.applies))
    bound = (fx.proposal or {}).get("payload_digest")
    for i, a in fx.applies:
        where = f"history record h{i}: effect {fx.short}"
        if not fx.entries:
            if complete:
                out.add(fx, "K1", "applied_unknown_effect", f"{where} was applied, but the "
                        f"journal never names it.", f"h{i}")
            continue
        ts = a.get("ts")  # an untimed application (a list of ids) still needs a DISPATCHED
        if walk.first_sent is None or (type(ts) is int and walk.first_sent > ts):
            out.add(fx, "K1", "applied_without_intent", f"{where} was applied"
                    f"{f' at {ts}' if type(ts) is int else ''} with no earlier durable "
                    f"DISPATCHED of that effect.", f"h{i}")
        digest = a.get("payload_digest")
        if bound is not None and digest is not None and digest != bound:
            out.add(fx, "K3", "payload_not_bound", f"{where} was applied with a payload other "
                    f"than the one first recorded.", f"h{i}")
    _receipts_against_record(fx, walk, out)


def _receipts_against_record(fx: Effect, walk: Walk, out: Report) -> None:
    final, witnesses = walk.final, tuple(f"h{i}" for i, _ in fx.applies)
    if final is None:
        return
    if final["kind"] == "COMMITTED":
        _committed_against_record(fx, final, out)
    if final["kind"] == "REFUSED" and final.get("executed", "false") == "false" \
            and fx.applies:
        out.add(fx, "K7", "refused_but_applied", f"{line(final)}: effect {fx.short} is REFUSED "
                f"with executed=false but the target applied it.", line(final), *witnesses)
    if final["kind"] == "REFUSED" and final.get("executed") == "true" and not fx.applies:
        out.add(fx, "K7", "executed_not_applied", f"{line(final)}: effect {fx.short} is REFUSED "
                f"with executed=true but the target never applied it.", line(final))
    if walk.settled is not None and not fx.applies:
        out.add(fx, "K7", "settled_not_applied", f"{line(walk.settled)}: a late answer settles "
                f"effect {fx.short} as executed, but the target never applied it.",
                line(walk.settled))
    elif walk.settled is not None and _all_after(fx, int(walk.settled["ts"])):
        out.add(fx, "K7", "settled_before_applied", f"{line(walk.settled)}: a late answer "
                f"settles effect {fx.short} as executed at {walk.settled['ts']}, before the "
                f"target first applied it (h{fx.applies[0][0]}).", line(walk.settled),
                f"h{fx.applies[0][0]}")


def _all_after(fx: Effect, ts: int) -> bool:
    """Every application of the effect has a recorded time, and all are later than ts."""
    times = [a.get("ts") for _, a in fx.applies]
    return all(type(t) is int and t > ts for t in times)


def _committed_against_record(fx: Effect, final: Entry, out: Report) -> None:
    where = f"{line(final)}: effect {fx.short}"
    times = [int(a["ts"]) for _, a in fx.applies if type(a.get("ts")) is int]
    attempt = final.get("attempt")
    if not fx.applies:
        out.add(fx, "K7", "committed_not_applied", f"{where} is COMMITTED but the target never "
                f"applied it.", line(final))
    elif times and len(times) == len(fx.applies) and min(times) > int(final["ts"]):
        out.add(fx, "K7", "committed_before_applied", f"{where} is COMMITTED at {final['ts']}, "
                f"before the target first applied it (h{fx.applies[0][0]}).", line(final),
                f"h{fx.applies[0][0]}")
    if final.get("via") == "ack" and fx.sends and all(s.get("attempt") != attempt
                                                      for _, s in fx.sends):
        out.add(fx, "K7", "acked_attempt_never_sent", f"{where} is COMMITTED by an ack of "
                f"attempt {attempt}, which the target's record never shows sent.", line(final))


# ---------------------------------------------------------------- coordinated units (G1-G8)


@dataclass(slots=True)
class Unit:
    """One coordinated unit as this module recomputes it from the journal."""

    fx: Effect
    spec: Mapping[str, Any]
    admitted: Entry | None = None
    until: int = 0  # the recomputed end of its claim: admission time + ttl
    final: Entry | None = None
    sent: Entry | None = None  # its first DISPATCHED
    released: bool = False  # REFUSED executed=false gave its reservation back
    landed: bool = False
    failed: bool = False  # a verification failed
    overlaps: tuple[str, ...] = ()  # units whose live claim covered its reads at admission

    def live(self, now: int) -> bool:
        return self.admitted is not None and self.final is None and now < self.until

    def budget(self) -> str | None:
        b = self.spec.get("budget")
        return b if isinstance(b, str) else None

    def cost(self) -> int:
        return int(self.spec.get("cost") or 0)


@dataclass(slots=True)
class Bus:
    """The journal-wide account: units, smallest caps, highest plan versions seen."""

    units: dict[str, Unit] = field(default_factory=dict)
    caps: dict[str, int] = field(default_factory=dict)
    plans: dict[str, int] = field(default_factory=dict)

    def holders(self, items: Iterable[str], me: str, now: int) -> list[Unit]:
        wanted = set(items)
        return [u for u in self.units.values() if u.fx.eid != me and u.live(now)
                and wanted & set(u.spec.get("writes") or ())]

    def reserved(self, budget: str) -> int:
        return sum(u.cost() for u in self.units.values() if u.budget() == budget
                   and u.admitted is not None and not u.released)


def _observed_plan(bus: Bus, e: Entry) -> None:
    plan = ((e.get("checks") or {}).get("unit") or {}).get("plan") or {}
    if isinstance(plan.get("id"), str):
        seen = [v for v in (plan.get("current"), plan.get("version")) if type(v) is int]
        bus.plans[plan["id"]] = max([bus.plans.get(plan["id"], 0), *seen])


def _unit_proposed(bus: Bus, fx: Effect, e: Entry) -> None:
    c = e["coordination"]
    bus.units[fx.eid] = Unit(fx, c)
    if isinstance(c.get("budget"), str) and type(c.get("cap")) is int:
        bus.caps[c["budget"]] = min(c["cap"], bus.caps.get(c["budget"], c["cap"]))
    if isinstance(c.get("plan"), str) and type(c.get("plan_version")) is int:
        bus.plans[c["plan"]] = max(bus.plans.get(c["plan"], 0), c["plan_version"])


def _superseded(bus: Bus, u: Unit, e: Entry, out: Report) -> None:
    plan, version = u.spec.get("plan"), int(u.spec.get("plan_version") or 0)
    if isinstance(plan, str) and version < bus.plans.get(plan, 0):
        out.add(u.fx, "G8", f"{e['kind'].lower()}_under_superseded_plan", f"{line(e)}: unit "
                f"{u.fx.short} is {e['kind']} under plan {plan} version {version}, superseded "
                f"by version {bus.plans[plan]} before it.", line(e))


def _unit_admitted(bus: Bus, u: Unit, e: Entry, out: Report) -> None:
    ts, where = int(e["ts"]), f"{line(e)}: unit {u.fx.short}"
    token = (e.get("admission") or {}).get("token", e["seq"])
    if token != e["seq"]:
        out.add(u.fx, "G1", "token_not_seq", f"{where} records fencing token {token}, not the "
                f"seq {e['seq']} of its own admission.", line(e))
    held = bus.holders(u.spec.get("writes") or (), u.fx.eid, ts)
    if held:
        h = held[0]
        assert h.admitted is not None
        out.add(u.fx, "G2", "claim_over_live_claim", f"{where} is admitted at {ts} while unit "
                f"{h.fx.short} holds a live claim on its write set ({line(h.admitted)}, until "
                f"{h.until}).", line(e), line(h.admitted))
    _superseded(bus, u, e, out)
    u.admitted, u.until = e, ts + int(u.spec.get("ttl") or 0)
    u.overlaps = tuple(h.fx.eid for h in bus.holders(u.spec.get("reads") or (), u.fx.eid, ts))
    budget = u.budget()
    if budget is not None and bus.reserved(budget) > bus.caps.get(budget, 0):
        out.add(u.fx, "G7", "reserved_over_cap", f"{where} is admitted and brings budget "
                f"{budget} to {bus.reserved(budget)} reserved, above its cap "
                f"{bus.caps.get(budget, 0)}.", line(e))


def _unit_dispatched(bus: Bus, u: Unit, e: Entry, out: Report) -> None:
    ts, where = int(e["ts"]), f"{line(e)}: unit {u.fx.short}"
    if u.admitted is None:
        out.add(u.fx, "G2", "dispatched_without_claim", f"{where} is DISPATCHED without an "
                f"admission claiming its write set.", line(e))
        if u.budget() is not None:
            out.add(u.fx, "G7", "spent_without_reservation", f"{where} is DISPATCHED without a "
                    f"reservation against budget {u.budget()}.", line(e))
    elif u.final is None and ts >= u.until:
        out.add(u.fx, "G2", "dispatched_after_claim_expired", f"{where} is DISPATCHED at {ts}, "
                f"after its claim ({line(u.admitted)}) expired at {u.until}.", line(e),
                line(u.admitted))
    moved = [o for o in u.overlaps if (w := bus.units[o]).sent is not None and not w.released]
    if moved:
        w = bus.units[moved[0]]
        assert w.sent is not None
        out.add(u.fx, "G6", "read_set_moved", f"{where} is DISPATCHED after unit {w.fx.short}, "
                f"whose claim covered what it read at admission, was dispatched "
                f"({line(w.sent)}).", line(e), line(w.sent))
    _superseded(bus, u, e, out)
    if u.sent is None:
        u.sent = e


def _unit_refusal_cause(bus: Bus, u: Unit, e: Entry) -> bool:
    """Whether a unit check really failed when the unit was refused for it (K10)."""
    reason, ts = unit_check(e), int(e["ts"])
    if reason == "claim_expired":
        return u.admitted is not None and ts >= u.until
    if reason == "over_budget":
        b = u.budget()
        return b is not None and bus.reserved(b) + u.cost() > bus.caps.get(b, 0)
    if reason == "read_overlap_moved":  # refused at admission: the overlaps of that instant
        overlaps = u.overlaps if u.admitted is not None else tuple(
            h.fx.eid for h in bus.holders(u.spec.get("reads") or (), u.fx.eid, ts))
        return any(bus.units[o].sent is not None and not bus.units[o].released
                   for o in overlaps)
    plan, version = u.spec.get("plan"), int(u.spec.get("plan_version") or 0)
    return isinstance(plan, str) and version < bus.plans.get(plan, 0)


def _unit_final(u: Unit, e: Entry, out: Report) -> None:
    spec = u.spec
    if e["kind"] == "COMMITTED" and spec.get("verify") is True and not (
            e.get("via") == "verification" and u.landed and not u.failed):
        out.add(u.fx, "G5", "committed_unverified", f"{line(e)}: unit {u.fx.short} requires "
                f"verification but is COMMITTED (via {e.get('via')}) without a journaled pass "
                f"after a LANDED entry.", line(e))
    if e["kind"] == "REFUSED" and e.get("reason") == "verification_failed":
        u.failed = True
    if u.final is None and e["kind"] in FINALS:
        u.final = e
        u.released = e["kind"] == "REFUSED" and e.get("executed", "false") == "false" \
            and u.admitted is not None


def _unit_step(bus: Bus, u: Unit, e: Entry, out: Report) -> None:
    kind = e["kind"]
    if kind == "AUTHORIZED":
        _unit_admitted(bus, u, e, out)
    elif kind == "DISPATCHED":
        _unit_dispatched(bus, u, e, out)
    elif kind == "LANDED":
        u.landed = True
    elif kind == "VERIFIED" and e.get("result") == "failed":
        u.failed = True
    elif kind in ("REFUSED", "AMBIGUOUS") and u.final is None and unit_check(e) \
            and not _unit_refusal_cause(bus, u, e):
        out.add(u.fx, "K10", "unit_refused_without_cause", f"{line(e)}: unit {u.fx.short} is "
                f"{kind} as '{e.get('reason')}', which the journal before it does not "
                f"support.", line(e))
    _unit_final(u, e, out)


def _spent(bus: Bus, history: Sequence[Record] | None, out: Report) -> None:
    """G7 spent <= reserved: whatever spent (committed or applied) holds a reservation."""
    applied = {r["effect_id"]: i for i, r in reversed(list(enumerate(history or ())))
               if r.get("op", "apply") == "apply"}
    for u in bus.units.values():
        if u.budget() is None or not u.cost():
            continue
        committed = u.final is not None and u.final["kind"] == "COMMITTED"
        if (committed or u.fx.eid in applied) and (u.admitted is None or u.released):
            witness = line(u.final) if committed and u.final else f"h{applied[u.fx.eid]}"
            out.add(u.fx, "G7", "spent_without_reservation", f"{witness}: unit {u.fx.short} "
                    f"spent {u.cost()} of budget {u.budget()} without holding a reservation "
                    f"(never admitted, or released as never applied).", witness)


def _fenced_writes(bus: Bus, history: Sequence[Record] | None, out: Report) -> None:
    """G1/G2 at the target: writes recorded with tokens never go below one seen for an item."""
    seen: dict[str, tuple[int, int]] = {}  # item -> (highest token applied, its record)
    for i, r in enumerate(history or ()):
        u, token = bus.units.get(r.get("effect_id", "")), r.get("token")
        if u is None or type(token) is not int:
            continue
        if u.admitted is not None and token != u.admitted["seq"]:
            out.add(u.fx, "G1", "target_token_not_seq", f"history record h{i}: unit "
                    f"{u.fx.short} reached the target with token {token}, not the seq of its "
                    f"admission ({line(u.admitted)}).", f"h{i}", line(u.admitted))
        if r.get("op", "apply") != "apply":
            continue
        items = list(u.spec.get("writes") or ())
        higher = [(seen[x], x) for x in items if x in seen and seen[x][0] > token]
        if higher:
            (top, j), item = higher[0]
            out.add(u.fx, "G2", "stale_token_write", f"history record h{i}: unit {u.fx.short}'s "
                    f"write with token {token} landed on {item} after the target applied token "
                    f"{top} (h{j}).", f"h{i}", f"h{j}")
        for x in items:
            if x not in seen or seen[x][0] < token:
                seen[x] = (token, i)


def check_coordination(entries: Sequence[Entry], history: Sequence[Record] | None,
                       out: Report) -> None:
    """G1, G2, G5, G6 (limited), G7 and G8 over the whole journal and the target's record."""
    if not _has_units(entries):
        return
    bus, first_bad = Bus(), None
    for i, e in enumerate(entries):
        if e.get("seq") != i and first_bad is None:
            first_bad = e
        eid = e["effect_id"]
        if e["kind"] == "PROPOSED" and isinstance(e.get("coordination"), Mapping) \
                and eid not in bus.units:
            _unit_proposed(bus, Effect(eid), e)
        _observed_plan(bus, e)
        if eid in bus.units and e["kind"] != "PROPOSED":
            _unit_step(bus, bus.units[eid], e, out)
    if first_bad is not None and bus.units:
        out.add(Effect(first_bad["effect_id"]), "G1", "seq_out_of_order", f"{line(first_bad)} "
                f"has seq {first_bad.get('seq')}: the journal's seqs are not one order 0, 1, 2.",
                line(first_bad))
    if bus.units:
        _spent(bus, history, out)
        _fenced_writes(bus, history, out)


def _has_units(entries: Iterable[Entry]) -> bool:
    """Whether any entry proposes a coordinated unit (without one, no G judge applies)."""
    for e in entries:
        if e["kind"] == "PROPOSED" and isinstance(e.get("coordination"), Mapping):
            return True
    return False


def check_units(entries: Sequence[Entry],
                history: Sequence[Record] | None = None) -> list[Violation]:
    """The coordination judges alone: G1, G2, G5, G6 (limited), G7, G8 (and K10 for a unit
    refused for a check that held); a journal without coordinated units yields nothing."""
    out = Report()
    check_coordination(entries, history, out)
    return out.violations()


# ---------------------------------------------------------------- leases, journal-wide


def check_leases(entries: Iterable[Entry], out: Report) -> None:
    """K4: a lease never comes back to life. Once any entry observes a lease id dead (revoked,
    or at or past its expiry), no later entry of any effect may observe that id live: a
    renewal is a new lease under a new id, never the old one revived."""
    dead: dict[str, Entry] = {}  # lease id -> the first entry that observed it dead
    for e in entries:
        checks = e.get("checks")
        lease = checks.get("lease") if checks else None
        if lease is None or not (type(lease) is dict or isinstance(lease, Mapping)):
            continue
        lid, expires = lease.get("id"), lease.get("expires_at")
        if type(lid) is not str and not isinstance(lid, str):
            continue
        alive = lease.get("revoked") is False and type(expires) is int \
            and int(e["ts"]) < expires
        if not alive:
            dead.setdefault(lid, e)
        elif lid in dead:
            out.add(Effect(e["effect_id"]), "K4", "lease_revived", f"{line(e)}: lease {lid} is "
                    f"observed live at {e['ts']} after {line(dead[lid])} observed it revoked or "
                    f"expired: a lease does not come back to life (a renewal has a new id).",
                    line(e), line(dead[lid]))


def check(entries: Sequence[Entry], history: Sequence[Record] | None = None,
          complete: bool = False) -> list[Violation]:
    """Every invariant violation of a verified journal and an optional target record."""
    out = Report()
    check_leases(entries, out)
    for fx in group(entries, history).values():
        walk = walk_journal(fx, out, complete) if fx.entries else Walk()
        if history is not None:
            check_sends(fx, walk, out)
            check_applies(fx, walk, out, complete)
    check_coordination(entries, history, out)
    return out.violations()
