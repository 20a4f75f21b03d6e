"""Semantic mutation operators: valid-looking journals the reference kernel cannot write.

How it works. An operator takes the entries of a journal the kernel wrote (and the target's
record of sends and applications, when there is one) and yields every mutant it can make of
them, one per site (an entry or a record). A mutant changes meaning, not syntax: its entries
are re-sealed into a fresh hash chain (``kernel.journal.Chain``), times never run backwards,
and every field keeps its type, so integrity checks pass and only a judge of behaviour can
tell. Each operator's docstring says why no run of the reference kernel, under any
observations, writes the result: the corpus (``sim.corpus``) then asks the oracle to flag
every mutant. Operators are deterministic; nothing here is random. ``OPERATORS`` mutate
any journal; ``COORDINATION`` mutate the entries of coordinated units (claims, tokens,
reservations, plan versions, verification: DESIGN.md section 8) and yield nothing on a
journal without them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernel.errors import KernelError
from kernel.identity import payload_digest
from kernel.journal import Chain

Body = dict[str, Any]
Records = list[dict[str, Any]] | None
Site = tuple[str, list[Body], Records]  # where, the mutated bodies, the mutated records
_FINALS = ("COMMITTED", "REFUSED", "AMBIGUOUS")


@dataclass(frozen=True, slots=True)
class Mutant:
    operator: str
    site: str  # "line N" or "hI"
    entries: list[dict[str, Any]]  # re-sealed
    history: list[dict[str, Any]] | None


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def bodies_of(entries: Sequence[Mapping[str, Any]]) -> list[Body]:
    """Deep copies of the entries without their chain fields."""
    out = []
    for e in entries:
        body = _copy(dict(e))
        for name in ("seq", "prev", "hash"):
            body.pop(name, None)
        out.append(body)
    return out


def reseal(bodies: Sequence[Body]) -> list[dict[str, Any]]:
    chain = Chain()
    return [chain.seal(b)[0] for b in bodies]


def _line(i: int) -> str:
    return f"line {i + 1}"


def _proposal(bodies: Sequence[Body], eid: str) -> Body:
    for b in bodies:
        if b["kind"] == "PROPOSED" and b["effect_id"] == eid:
            return b
    return {}


def _timing(bodies: Sequence[Body], eid: str) -> dict[str, int]:
    return dict(_proposal(bodies, eid).get("timing") or {})


def _sites(bodies: Sequence[Body], *kinds: str) -> Iterator[int]:
    return (i for i, b in enumerate(bodies) if b["kind"] in kinds)


def _earlier_ts(bodies: Sequence[Body], i: int) -> int:
    return int(bodies[i - 1]["ts"]) if i else 0


def _dispatches(bodies: Sequence[Body], eid: str, before: int) -> list[Body]:
    return [b for b in bodies[:before] if b["kind"] == "DISPATCHED" and b["effect_id"] == eid]


def _edit(bodies: Sequence[Body], history: Records, i: int,
          change: Callable[[Body], None]) -> Site:
    out = _copy(list(bodies))
    change(out[i])
    return _line(i), out, _copy(history)


def _update(*path: str, **fields: Any) -> Callable[[Body], None]:
    """A change that sets ``fields`` in the member of a body reached by ``path``."""
    def change(body: Body) -> None:
        target = body
        for name in path:
            target = target[name]
        target.update(_copy(fields))
    return change


# ---------------------------------------------------------------- derived flags


def flip_live(bodies: list[Body], history: Records) -> Iterator[Site]:
    """Negate a check's recorded lease liveness. The kernel writes ``live`` as a function of
    the recorded lease record (id, expiry, revocation), the entry's time and the proposal's
    lease id, so the negation contradicts the entry's own primary fields."""
    for i in _sites(bodies, "AUTHORIZED", "DISPATCHED", "REFUSED", "AMBIGUOUS"):
        if "checks" in bodies[i]:
            live = not bodies[i]["checks"]["lease"]["live"]
            yield _edit(bodies, history, i, _update("checks", "lease", live=live))


def flip_stale(bodies: list[Body], history: Records) -> Iterator[Site]:
    """Empty a non-empty stale list, or name a holding premise as stale. The kernel writes
    ``stale`` as exactly the premises the recorded facts contradict."""
    for i in _sites(bodies, "AUTHORIZED", "DISPATCHED", "REFUSED", "AMBIGUOUS"):
        checks = bodies[i].get("checks")
        names = sorted(_proposal(bodies, bodies[i]["effect_id"]).get("premises") or {})
        if checks is None or (not checks["stale"] and not names):
            continue
        value = [] if checks["stale"] else names[:1]
        yield _edit(bodies, history, i, _update("checks", stale=value))


def _lease_edit(field: str) -> Callable[[Body], None]:
    def change(b: Body) -> None:
        lease = b["checks"]["lease"]
        if field == "revoked":
            lease["revoked"] = True
        elif field == "expires_at":
            lease["expires_at"] = int(b["ts"])
        else:
            lease["id"] = f"{lease['id']}-other"
    return change


def dead_lease_recorded_live(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A dispatch whose lease record is revoked, expired at the entry's time, or another
    lease, still recorded ``live: true``. The kernel never dispatches under a lease that is
    not live, and never records a dead lease as live."""
    for i in _sites(bodies, "DISPATCHED"):
        for field in ("revoked", "expires_at", "id"):
            where, out, records = _edit(bodies, history, i, _lease_edit(field))
            yield f"{where} ({field})", out, records


def hidden_stale_facts(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A dispatch whose recorded facts contradict a premise while ``stale`` stays empty.
    The kernel computes ``stale`` from these very facts, and never dispatches on a stale
    premise."""
    for i in _sites(bodies, "DISPATCHED"):
        premises = _proposal(bodies, bodies[i]["effect_id"]).get("premises") or {}
        if not premises or bodies[i]["checks"]["stale"]:
            continue
        name = sorted(premises)[0]
        changed = {name: {"changed": premises[name]}}
        yield _edit(bodies, history, i, _update("checks", "facts", **changed))


def short_claim(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A claim shorter than deadline plus settle margin. The kernel writes
    ``claim_until = deadline + settle_margin`` on every DISPATCHED."""
    for i in _sites(bodies, "DISPATCHED"):
        settle = _timing(bodies, bodies[i]["effect_id"]).get("settle_margin", 1)
        claim = int(bodies[i]["deadline"]) + settle - 1
        yield _edit(bodies, history, i, _update(claim_until=claim))


def early_deadline(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A deadline one millisecond short of the send timeout. The kernel writes
    ``deadline = ts + send_timeout``."""
    for i in _sites(bodies, "DISPATCHED"):
        if int(bodies[i]["deadline"]) > 0:
            yield _edit(bodies, history, i, _update(
                deadline=int(bodies[i]["deadline"]) - 1))


def rewritten_first_send(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A ``first_sent_at`` other than the first DISPATCHED's time: a resend claims to be its
    own first send (reopening the dedup window), a first send claims a later one. The kernel
    copies the first send's time into every later DISPATCHED."""
    for i in _sites(bodies, "DISPATCHED"):
        ts = int(bodies[i]["ts"])
        first = ts + 1 if int(bodies[i]["attempt"]) == 1 else ts
        yield _edit(bodies, history, i, _update(first_sent_at=first))


def renumbered_attempt(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A DISPATCHED whose attempt number skips one. The kernel numbers the attempts of an
    effect 1, 2, 3, ... in the order it journals them."""
    for i in _sites(bodies, "DISPATCHED"):
        yield _edit(bodies, history, i, _update(attempt=int(bodies[i]["attempt"]) + 1))


# ---------------------------------------------------------------- times across boundaries


def _claim_of(bodies: Sequence[Body], d: Body) -> int:
    return int(d["deadline"]) + _timing(bodies, d["effect_id"]).get("settle_margin", 0)


def resend_inside_claim(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A resend moved to one millisecond before the previous send's claim expires (its
    deadline and claim moved with it, its send record too). The kernel waits out the claim
    before any resend; a lookup it acts on is asked after the claim."""
    for i in _sites(bodies, "DISPATCHED"):
        b, earlier = bodies[i], _dispatches(bodies, bodies[i]["effect_id"], i)
        if not earlier:
            continue
        at = _claim_of(bodies, earlier[-1]) - 1
        if at < _earlier_ts(bodies, i) or at >= int(b["ts"]):
            continue
        yield _moved_resend(bodies, history, i, at)


def _moved_resend(bodies: list[Body], history: Records, i: int, at: int) -> Site:
    out, records = _copy(bodies), _copy(history)
    b, timing = out[i], _timing(bodies, bodies[i]["effect_id"])
    old = int(b["ts"])
    b.update(ts=at, deadline=at + timing.get("send_timeout", 0))
    b["claim_until"] = b["deadline"] + timing.get("settle_margin", 0)
    if "lookup" in b:
        b["lookup"]["asked_at"] = min(int(b["lookup"]["asked_at"]), at)
    for r in records or ():
        if r.get("op") == "send" and r.get("effect_id") == b["effect_id"] \
                and r.get("attempt") == b["attempt"] and r.get("ts") == old:
            r["ts"] = at
    return _line(i), out, records


def _window_edge(bodies: Sequence[Body], eid: str, before: int) -> int | None:
    caps = _proposal(bodies, eid).get("capabilities") or {}
    first = _dispatches(bodies, eid, before)
    if not caps.get("dedupes") or not first:
        return None
    margin = _timing(bodies, eid).get("dedup_margin", 0)
    return int(first[0]["ts"]) + int(caps["dedup_window"]) - int(margin)


def ambiguous_inside_window(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An AMBIGUOUS 'dedup_window_expired_no_lookup' moved to just inside the dedup window
    (and after the claim). Inside the window the kernel resends with the same key, or, if a
    check fails, gives the check's reason; it never says the window expired."""
    for i in _sites(bodies, "AMBIGUOUS"):
        b = bodies[i]
        edge = _window_edge(bodies, b["effect_id"], i)
        if b["reason"] != "dedup_window_expired_no_lookup" or edge is None:
            continue
        at = edge - 1
        claim = max(_claim_of(bodies, d) for d in _dispatches(bodies, b["effect_id"], i))
        if at >= max(_earlier_ts(bodies, i), claim):
            yield _edit(bodies, history, i, _update(ts=at))


def resend_where_unsafe(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An AMBIGUOUS that ended a target with no open dedup window and no lookup (tier 3, or
    tier 1 past its window) replaced by a resend, its derived fields written as the kernel
    would. With nothing that could make a resend safe, the kernel never resends."""
    for i in _sites(bodies, "AMBIGUOUS"):
        b = bodies[i]
        earlier = _dispatches(bodies, b["effect_id"], i)
        if b["reason"] not in ("no_dedup_no_lookup", "dedup_window_expired_no_lookup") \
                or not earlier or "checks" not in b:
            continue
        timing, ts = _timing(bodies, b["effect_id"]), int(b["ts"])
        deadline = ts + timing.get("send_timeout", 0)
        resend = {"kind": "DISPATCHED", "effect_id": b["effect_id"], "ts": ts,
                  "attempt": int(earlier[-1]["attempt"]) + 1, "phase": "recovery",
                  "deadline": deadline, "claim_until": deadline + timing.get("settle_margin", 0),
                  "first_sent_at": int(earlier[0]["ts"]), "checks": _copy(b["checks"])}
        out = _copy(bodies[:i]) + [resend] + _copy(bodies[i + 1:])
        records = _copy(history)
        if records is not None:
            records.append({"op": "send", "effect_id": b["effect_id"],
                            "attempt": resend["attempt"], "ts": ts})
        yield _line(i), out, records


def _claims_before(bodies: Sequence[Body], i: int) -> int:
    earlier = _dispatches(bodies, bodies[i]["effect_id"], i)
    return max((_claim_of(bodies, d) for d in earlier), default=0)


def lookup_inside_claim(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A "not found" the decision rests on, moved to one millisecond before the claim of the
    sends before it expired. The kernel only counts a lookup asked after that claim; an
    earlier one makes it ask again."""
    for i in _sites(bodies, "DISPATCHED", "REFUSED"):
        lookup = bodies[i].get("lookup")
        at = _claims_before(bodies, i) - 1
        if lookup is None or lookup["found"] or at < 0:
            continue
        yield _edit(bodies, history, i, _update("lookup", asked_at=at))


def lookup_after_entry(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A lookup recorded as asked after the entry that journals its answer. A lookup is
    asked, then answered, then journaled: the kernel never cites a later one."""
    for i, b in enumerate(bodies):
        if "lookup" in b:
            yield _edit(bodies, history, i, _update("lookup", asked_at=int(b["ts"]) + 1))
        elif b["kind"] == "LATE" and "asked_at" in b:
            yield _edit(bodies, history, i, _update(asked_at=int(b["ts"]) + 1))


# ---------------------------------------------------------------- entries and reasons


def _later(bodies: Sequence[Body], i: int) -> list[Body]:
    return [b for b in bodies[i + 1:] if b["effect_id"] == bodies[i]["effect_id"]]


def _needed_later(bodies: Sequence[Body], i: int) -> bool:
    """Whether a later entry of the same effect cannot exist without entry ``i``."""
    b, later = bodies[i], _later(bodies, i)
    kinds = {e["kind"] for e in later}
    if b["kind"] == "PROPOSED":
        return bool(later)
    if b["kind"] == "AUTHORIZED":
        return "DISPATCHED" in kinds
    if b["kind"] == "DISPATCHED":
        only = len(_dispatches(bodies, b["effect_id"], len(bodies))) == 1
        acked = any(e.get("attempt") == b["attempt"] and e["kind"] in ("COMMITTED", "LATE")
                    for e in later)
        needs_sent = bool(kinds & {"COMMITTED", "AMBIGUOUS", "LATE"}) or any(
            str(e.get("reason", "")).endswith("_at_recovery") for e in later)
        return "DISPATCHED" in kinds or acked or (only and needs_sent)
    return b["kind"] in ("COMMITTED", "REFUSED", "AMBIGUOUS") and "LATE" in kinds


def dropped_entry(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An entry removed from the middle of an effect's story: a PROPOSED, AUTHORIZED or
    DISPATCHED that a later entry of the effect depends on, or a final entry a LATE follows.
    In the kernel's transition table each of those later entries requires the dropped one."""
    for i in range(len(bodies)):
        if _needed_later(bodies, i):
            yield _line(i), _copy(bodies[:i] + bodies[i + 1:]), _copy(history)


def duplicated_entry(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A PROPOSED, AUTHORIZED, DISPATCHED or final entry written twice in a row. The kernel
    never writes a second PROPOSED for an id (a resubmission is answered or REJECTED), a
    state is entered once, and every DISPATCHED carries a new attempt number."""
    for i in _sites(bodies, "PROPOSED", "AUTHORIZED", "DISPATCHED", "COMMITTED", "REFUSED",
                    "AMBIGUOUS"):
        yield _line(i), _copy(bodies[:i + 1] + bodies[i:]), _copy(history)


REASON_SWAPS = {
    "lease_dead": "premise_stale", "premise_stale": "lease_dead",
    "lease_dead_at_recovery": "premise_stale_at_recovery",
    "premise_stale_at_recovery": "lease_dead_at_recovery",
    "no_dedup_no_lookup": "dedup_window_expired_no_lookup",
    "dedup_window_expired_no_lookup": "no_dedup_no_lookup",
    "lease_dead_at_recovery_cannot_confirm": "premise_stale_at_recovery_cannot_confirm",
    "premise_stale_at_recovery_cannot_confirm": "lease_dead_at_recovery_cannot_confirm",
}


def changed_reason(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A REFUSED or AMBIGUOUS with another reason code, or a COMMITTED by ack said to be by
    lookup. The kernel's reason is a function of the recorded observations (lease first,
    then premises; the target's capabilities), and a COMMITTED via lookup always carries the
    lookup that found it."""
    for i in _sites(bodies, "REFUSED", "AMBIGUOUS"):
        other = REASON_SWAPS.get(bodies[i]["reason"])
        if other is not None:
            yield _edit(bodies, history, i, _update(reason=other))
    for i in _sites(bodies, "COMMITTED"):
        if bodies[i]["via"] == "ack":
            yield _edit(bodies, history, i, _via_lookup)


def _via_lookup(b: Body) -> None:
    b.pop("attempt", None)
    b["via"] = "lookup"


def _other_payload(payload: Any) -> Any:
    if isinstance(payload, dict) and isinstance(payload.get("amount"), int):
        return {**payload, "amount": payload["amount"] + 10}
    return {"swapped": payload}


def swapped_payload(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A PROPOSED whose payload is changed while its digest (and id) stay. The kernel
    records the digest of the very payload it records."""
    for i in _sites(bodies, "PROPOSED"):
        yield _edit(bodies, history, i, _update(payload=_other_payload(bodies[i]["payload"])))


def rebound_payload(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A PROPOSED whose payload and digest are both changed (the id comes from the key),
    while the target applied the original. The kernel only ever sends the payload it first
    recorded, so no application can carry another digest."""
    for i in _sites(bodies, "PROPOSED"):
        b = bodies[i]
        applied = any(r.get("op", "apply") == "apply" and r.get("effect_id") == b["effect_id"]
                      for r in history or ())
        if b.get("key") is None or not applied:
            continue
        try:
            new = _other_payload(b["payload"])
            digest = payload_digest(new)
        except KernelError:
            continue
        yield _edit(bodies, history, i, _update(payload=new, payload_digest=digest))


def rejected_own_payload(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A REJECTED conflicting_payload carrying the effect's own payload digest. The kernel
    rejects a resubmission only when its digest differs from the recorded one."""
    for i in _sites(bodies, "REJECTED"):
        own = _proposal(bodies, bodies[i]["effect_id"]).get("payload_digest")
        if own is not None:
            yield _edit(bodies, history, i, _update(payload_digest=own))


def ack_of_unsent_attempt(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A COMMITTED or LATE ack citing an attempt after the last one dispatched. The kernel
    refuses an ack of an attempt it never sent (an illegal event, nothing journaled)."""
    for i, b in enumerate(bodies):
        if b.get("attempt") is None or b["kind"] not in ("COMMITTED", "LATE"):
            continue
        sent = _dispatches(bodies, b["effect_id"], i)
        top = max((int(d["attempt"]) for d in sent), default=0)
        yield _edit(bodies, history, i, _update(attempt=top + 1))


# ---------------------------------------------------------------- the target's record


def _applies(history: Records, eid: str) -> list[int]:
    return [k for k, r in enumerate(history or ())
            if r.get("op", "apply") == "apply" and r.get("effect_id") == eid]


def apply_before_dispatch(bodies: list[Body], history: Records) -> Iterator[Site]:
    """The effect's first send and application moved to just before its first DISPATCHED.
    The kernel sends only after DISPATCHED is durable, and nothing is applied unsent."""
    for i in _sites(bodies, "DISPATCHED"):
        b = bodies[i]
        applies = _applies(history, b["effect_id"])
        if int(b["attempt"]) != 1 or not applies or int(b["ts"]) < 1 or history is None:
            continue
        records = _copy(history)
        at = int(b["ts"]) - 1
        records[applies[0]]["ts"] = at
        for r in records:
            if r.get("op") == "send" and r.get("effect_id") == b["effect_id"]:
                r["ts"] = at
                break
        yield f"h{applies[0]}", _copy(bodies), records


def settled_without_application(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An AMBIGUOUS effect settled by a late ack while the complete record holds no
    application of it. The kernel journals a late ack only when the target sent one, and a
    target acks only what it applied (or deduplicated after applying)."""
    if history is None:
        return
    for i in _sites(bodies, "AMBIGUOUS"):
        b = bodies[i]
        sent = _dispatches(bodies, b["effect_id"], i)
        if not sent:
            continue
        late = {"kind": "LATE", "effect_id": b["effect_id"], "ts": int(bodies[-1]["ts"]),
                "answer": "ack", "attempt": int(sent[-1]["attempt"])}
        drop = set(_applies(history, b["effect_id"]))
        records = [_copy(r) for k, r in enumerate(history) if k not in drop]
        yield _line(i), _copy(bodies) + [late], records


def committed_without_application(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A COMMITTED effect whose applications are removed from the complete record. The
    kernel commits only on an ack or a positive lookup, and both need an application."""
    if history is None:
        return
    for i in _sites(bodies, "COMMITTED"):
        drop = set(_applies(history, bodies[i]["effect_id"]))
        if drop:
            records = [_copy(r) for k, r in enumerate(history) if k not in drop]
            yield _line(i), _copy(bodies), records


def applied_after_commit(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A COMMITTED effect whose applications are moved to after its COMMITTED entry. The
    kernel commits on an ack or a positive lookup, and the target answers either only after
    it applied the effect."""
    if history is None:
        return
    for i in _sites(bodies, "COMMITTED"):
        applies = _applies(history, bodies[i]["effect_id"])
        if not applies:
            continue
        records = _copy(history)
        for k in applies:
            records[k]["ts"] = int(bodies[i]["ts"]) + 1
        yield _line(i), _copy(bodies), records


Operator = Callable[[list[Body], Records], Iterator[Site]]
OPERATORS: dict[str, Operator] = {op.__name__: op for op in (
    flip_live, flip_stale, dead_lease_recorded_live, hidden_stale_facts, short_claim,
    early_deadline, rewritten_first_send, renumbered_attempt, resend_inside_claim,
    ambiguous_inside_window, resend_where_unsafe, lookup_inside_claim, lookup_after_entry,
    dropped_entry, duplicated_entry, changed_reason, swapped_payload, rebound_payload,
    rejected_own_payload, ack_of_unsent_attempt, apply_before_dispatch,
    settled_without_application, committed_without_application, applied_after_commit)}


# ---------------------------------------------------------------- coordinated units


def _unit(bodies: Sequence[Body], eid: str) -> dict[str, Any]:
    return dict(_proposal(bodies, eid).get("coordination") or {})


def _admissions(bodies: Sequence[Body]) -> list[int]:
    return [i for i in _sites(bodies, "AUTHORIZED") if _unit(bodies, bodies[i]["effect_id"])]


def _final_before(bodies: Sequence[Body], eid: str, i: int) -> bool:
    return any(b["kind"] in _FINALS and b["effect_id"] == eid for b in bodies[:i])


def _live_at(bodies: Sequence[Body], j: int, i: int) -> bool:
    """The claim made by the admission at ``j`` is live at entry ``i``."""
    eid = bodies[j]["effect_id"]
    until = int(bodies[j]["ts"]) + int(_unit(bodies, eid)["ttl"])
    return j < i and int(bodies[i]["ts"]) < until and not _final_before(bodies, eid, i)


def _edit_unit(bodies: Sequence[Body], history: Records, eid: str, at: int,
               **fields: Any) -> Site:
    out = _copy(list(bodies))
    _proposal(out, eid)["coordination"].update(_copy(fields))
    return _line(at), out, _copy(history)


def claim_outlives_admission(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An admission of an item another unit claimed, made live then: either the earlier
    claim's ttl is stretched to one millisecond past the later admission, or the later
    unit's write set gains an item under a live claim. The kernel's admission never writes
    an entry for a unit whose write item is under another unit's live claim (Blocked)."""
    adm = _admissions(bodies)
    for i in adm:
        me = bodies[i]["effect_id"]
        mine = set(_unit(bodies, me)["writes"])
        for j in (j for j in adm if j < i and bodies[j]["effect_id"] != me):
            other = bodies[j]["effect_id"]
            c = _unit(bodies, other)
            if _live_at(bodies, j, i):
                item = c["writes"][0] if c["writes"] else None
                if item is not None and item not in mine:
                    yield _edit_unit(bodies, history, me, i, writes=sorted(mine | {item}),
                                     reads=[r for r in _unit(bodies, me)["reads"] if r != item])
            elif mine & set(c["writes"]) and not _final_before(bodies, other, i):
                ttl = int(bodies[i]["ts"]) - int(bodies[j]["ts"]) + 1
                yield _edit_unit(bodies, history, other, i, ttl=ttl)


def _reserved_before(bodies: Sequence[Body], budget: str, i: int) -> int:
    total = 0
    for j in _admissions(bodies[:i]):
        eid = bodies[j]["effect_id"]
        c = _unit(bodies, eid)
        released = any(b["kind"] == "REFUSED" and b["effect_id"] == eid
                       and b.get("executed") == "false" for b in bodies[:i])
        if c.get("budget") == budget and not released:
            total += int(c["cost"])
    return total


def reservation_above_cap(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An admission whose unit declares a cap one below what it brings the budget to. The
    kernel admits only when the reserved cost plus the unit's cost is within the smallest cap
    any unit declared for the budget, its own included; else it refuses 'over_budget'."""
    for i in _admissions(bodies):
        eid = bodies[i]["effect_id"]
        c = _unit(bodies, eid)
        if c.get("budget") is None:
            continue
        cap = _reserved_before(bodies, c["budget"], i) + int(c["cost"]) - 1
        if cap >= 0:
            yield _edit_unit(bodies, history, eid, i, cap=cap)


def committed_unverified(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A unit that requires verification COMMITTED on the target's word: its LANDED entry
    becomes a COMMITTED by ack (or lookup) and the verification after it is dropped, or the
    LANDED entry is dropped before a COMMITTED 'via: verification'. The kernel journals LANDED
    on an ack or positive lookup of such a unit and commits only on a journaled pass."""
    for i in _sites(bodies, "LANDED"):
        eid = bodies[i]["effect_id"]
        out = _copy([b for k, b in enumerate(bodies) if k <= i or b["effect_id"] != eid])
        out[i]["kind"] = "COMMITTED"
        yield _line(i), out, _copy(history)
        if any(b["kind"] == "COMMITTED" and b["effect_id"] == eid for b in bodies[i:]):
            yield _line(i), _copy(bodies[:i] + bodies[i + 1:]), _copy(history)


def dispatch_under_newer_plan(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A dispatch whose recorded check saw a newer plan version than the unit's, or before
    which another unit of the plan is proposed under a newer version; ``ok`` is left true.
    The kernel refuses 'plan_superseded' whenever the plan's current version (the one
    observed, or the highest any entry recorded) is above the unit's."""
    for i in _sites(bodies, "DISPATCHED"):
        eid = bodies[i]["effect_id"]
        c = _unit(bodies, eid)
        plan = ((bodies[i].get("checks") or {}).get("unit") or {}).get("plan")
        if not c or plan is None:
            continue
        yield _edit(bodies, history, i, _update("checks", "unit", "plan",
                                                current=int(c["plan_version"]) + 1))
        for b in bodies[:i]:
            if b["kind"] == "PROPOSED" and b["effect_id"] != eid \
                    and _unit(bodies, b["effect_id"]).get("plan") == c["plan"]:
                yield _edit_unit(bodies, history, b["effect_id"], i,
                                 plan_version=int(c["plan_version"]) + 1)
                break


def token_not_seq(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An admission recording the next seq as its fencing token (and the target seeing that
    token). The kernel's token is the seq of the admission entry itself."""
    for i in _admissions(bodies):
        eid = bodies[i]["effect_id"]
        records = _copy(history)
        for r in records or ():
            if r.get("effect_id") == eid and "token" in r:
                r["token"] = i + 1
        out = _copy(list(bodies))
        out[i]["admission"]["token"] = i + 1
        yield _line(i), out, records


def claim_expired_at_dispatch(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A unit whose ttl ends exactly at its first dispatch. The kernel re-checks the claim at
    dispatch (live while the time is below admission + ttl) and refuses 'claim_expired'."""
    adm = {bodies[j]["effect_id"]: j for j in _admissions(bodies)}
    for i in _sites(bodies, "DISPATCHED"):
        eid = bodies[i]["effect_id"]
        j = adm.get(eid)
        if j is None or _dispatches(bodies, eid, i):
            continue
        ttl = int(bodies[i]["ts"]) - int(bodies[j]["ts"])
        if ttl > 0:
            yield _edit_unit(bodies, history, eid, i, ttl=ttl)


def read_of_moved_item(bodies: list[Body], history: Records) -> Iterator[Site]:
    """A dispatched unit whose read set gains an item written by a unit that held a live
    claim on it at this unit's admission and was dispatched before this unit. The kernel
    records the overlap at admission and refuses 'read_overlap_moved' at dispatch."""
    adm = _admissions(bodies)
    for i in _sites(bodies, "DISPATCHED"):
        eid = bodies[i]["effect_id"]
        mine = next((j for j in adm if bodies[j]["effect_id"] == eid), None)
        if mine is None or _dispatches(bodies, eid, i):
            continue
        c = _unit(bodies, eid)
        for j in (j for j in adm if j < mine and bodies[j]["effect_id"] != eid):
            other = bodies[j]["effect_id"]
            items = [x for x in _unit(bodies, other)["writes"] if x not in c["writes"]]
            if items and _live_at(bodies, j, mine) and _dispatches(bodies, other, i):
                yield _edit_unit(bodies, history, eid, i, reads=sorted({*c["reads"], items[0]}))
                break


def stale_token_write(bodies: list[Body], history: Records) -> Iterator[Site]:
    """An application with a lower fencing token moved to just after one with a higher token
    on the same item. A target that records tokens rejects a write whose token is below one
    it has seen for those items, so its record never holds that order."""
    if history is None:
        return
    applies = [k for k, r in enumerate(history) if r.get("op", "apply") == "apply"
               and type(r.get("token")) is int]
    for a in applies:
        mine = set(_unit(bodies, history[a]["effect_id"]).get("writes") or ())
        for b in (b for b in applies if b > a and history[b]["token"] > history[a]["token"]):
            if mine & set(_unit(bodies, history[b]["effect_id"]).get("writes") or ()):
                records = _copy(history)
                moved = records.pop(a)
                moved["ts"] = int(history[b]["ts"])
                records.insert(b, moved)
                yield f"h{a}", _copy(bodies), records
                break


COORDINATION: dict[str, Operator] = {op.__name__: op for op in (
    claim_outlives_admission, reservation_above_cap, committed_unverified,
    dispatch_under_newer_plan, token_not_seq, claim_expired_at_dispatch, read_of_moved_item,
    stale_token_write)}
ALL = {**OPERATORS, **COORDINATION}


def mutants(entries: Sequence[Mapping[str, Any]], history: Records = None,
            operators: Sequence[str] | None = None) -> Iterator[Mutant]:
    """Every mutant of a journal (and its target record) by each operator, re-sealed;
    ``operators`` may name refund operators (``OPERATORS``, the default) and coordination
    operators (``COORDINATION``)."""
    bodies = bodies_of(entries)
    for name in operators or OPERATORS:
        for site, out, records in ALL[name](bodies, history):
            yield Mutant(name, site, reseal(out), records)
