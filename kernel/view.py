"""The journal-wide view (claims, reservations, plan versions) and the status of a journal.

How it works. ``Folder`` reads sealed entries in order and keeps, beside the per-effect
replay (``kernel.machine.apply_entry``), what admission needs from the whole journal: the
last claim on each item (token = the seq of the unit's AUTHORIZED entry, until = its time
plus the unit's ttl; released by the unit's final entry, expired by time), the cost each
admitted unit holds against its budget (released when the unit is REFUSED as provably not
applied, kept otherwise), what committed units spent, the smallest cap declared per budget,
the highest version recorded per plan (by a unit's proposal or a check), and which units
were sent and not proven unapplied.
``view()`` is that state as a ``kernel.model.View`` to pass in Authorize, Dispatch and
Recover events; ``fold(entries)`` is the view after a whole journal. Everything comes from
the entries alone, so a fresh control plane rebuilds it exactly (G3).

``status(entries, now)`` answers, as JSON-ready data, what is open, who holds which item
and until when, why each open unit waits, what each budget holds, the current plan
versions, what a person must reconcile (AMBIGUOUS units) and what could be undone (units
that may have applied, with the premises, i.e. before-images, they replaced) (G4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kernel.machine import Effect, apply_entry
from kernel.model import Claim, Executed, State, View

_RELEASING = frozenset({"COMMITTED", "REFUSED", "AMBIGUOUS"})


class Folder:
    """The journal-wide view, advanced one sealed entry at a time."""

    def __init__(self) -> None:
        self.effects: dict[str, Effect] = {}
        self.claims: dict[str, Claim] = {}
        self.holds: dict[str, tuple[str, int]] = {}  # effect id -> (budget, cost) reserved
        self.reserved: dict[str, int] = {}
        self.spent: dict[str, int] = {}
        self.caps: dict[str, int] = {}
        self.plans: dict[str, int] = {}
        self.moved: set[str] = set()

    def add(self, entry: Mapping[str, Any]) -> None:
        eid = entry["effect_id"]
        before = self.effects.get(eid)
        after = apply_entry(before, entry)
        if after is None:
            return
        self.effects[eid] = after
        c = after.proposal.coordination
        if c is None:
            return
        self._note_plan(entry)
        if entry["kind"] == "PROPOSED" and before is None:
            if c.budget is not None:
                self.caps[c.budget] = min(c.cap, self.caps.get(c.budget, c.cap))
            if c.plan is not None:  # a unit of a newer version says the plan moved on
                self.plans[c.plan] = max(self.plans.get(c.plan, 0), c.plan_version)
        elif entry["kind"] == "AUTHORIZED":
            self._admit(eid, after)
        if after.attempts and after.executed is not Executed.FALSE:
            self.moved.add(eid)
        else:
            self.moved.discard(eid)
        if entry["kind"] in _RELEASING and before is not None and not before.state.final:
            self._release(eid, after)

    def _note_plan(self, entry: Mapping[str, Any]) -> None:
        plan = entry.get("checks", {}).get("unit", {}).get("plan")
        if plan is not None:
            self.plans[plan["id"]] = max(self.plans.get(plan["id"], 0), plan["current"],
                                         plan["version"])

    def _admit(self, eid: str, effect: Effect) -> None:
        c, adm = effect.proposal.coordination, effect.admission
        assert c is not None and adm is not None
        for item in c.writes:
            self.claims[item] = Claim(item, eid, adm["token"], adm["until"])
        if c.budget is not None:
            self.holds[eid] = (c.budget, c.cost)
            self.reserved[c.budget] = self.reserved.get(c.budget, 0) + c.cost

    def _release(self, eid: str, effect: Effect) -> None:
        for item, claim in list(self.claims.items()):
            if claim.effect_id == eid:
                del self.claims[item]
        hold = self.holds.get(eid)
        if hold is None:
            return
        budget, cost = hold
        if effect.state is State.COMMITTED:
            self.spent[budget] = self.spent.get(budget, 0) + cost
        elif effect.state is State.REFUSED and effect.executed is Executed.FALSE:
            del self.holds[eid]
            self.reserved[budget] -= cost

    def view(self) -> View:
        return View(claims=dict(self.claims), reserved=dict(self.reserved),
                    spent=dict(self.spent), caps=dict(self.caps), plans=dict(self.plans),
                    moved=frozenset(self.moved))


def fold(entries: Iterable[Mapping[str, Any]]) -> View:
    """The journal-wide view after every entry of a journal."""
    folder = Folder()
    for entry in entries:
        folder.add(entry)
    return folder.view()


def status(entries: Iterable[Mapping[str, Any]], now: int) -> dict[str, Any]:
    """What a person asks at any instant, answered from the journal alone."""
    folder = Folder()
    for entry in entries:
        folder.add(entry)
    claims = {item: {"effect_id": c.effect_id, "token": c.token, "until": c.until,
                     "live": c.live(now)} for item, c in sorted(folder.claims.items())}
    budgets = {name: {"cap": folder.caps.get(name, 0), "reserved": folder.reserved.get(name, 0),
                      "spent": folder.spent.get(name, 0)}
               for name in sorted(set(folder.caps) | set(folder.reserved))}
    effects = folder.effects.values()
    return {"now": now,
            "open": [_open(e, folder, now) for e in effects if not e.state.final],
            "claims": claims, "budgets": budgets, "plans": dict(sorted(folder.plans.items())),
            "ambiguous": [{"effect_id": e.effect_id, "reason": e.reason}
                          for e in effects if e.state is State.AMBIGUOUS],
            "undo": [{"effect_id": e.effect_id, "state": e.state.value,
                      "executed": e.executed.value, "replaced": dict(e.proposal.premises)}
                     for e in effects if e.attempts and e.executed is not Executed.FALSE]}


def _open(e: Effect, folder: Folder, now: int) -> dict[str, Any]:
    c = e.proposal.coordination
    out: dict[str, Any] = {"effect_id": e.effect_id, "state": e.state.value,
                           "lease": e.proposal.lease, "waits": _waits(e, folder, now)}
    if c is not None:
        out["writes"] = list(c.writes)
        out["token"] = e.token
        out["plan"] = {"id": c.plan, "version": c.plan_version} if c.plan else None
    return out


def _waits(e: Effect, folder: Folder, now: int) -> str:
    """Why an open effect is where it is, in one line."""
    c = e.proposal.coordination
    if e.state is State.PROPOSED and c is not None:
        held = [f"{i} (held by {cl.effect_id[:12]} until {cl.until})" for i in c.writes
                if (cl := folder.claims.get(i)) and cl.live(now) and cl.effect_id != e.effect_id]
        if held:
            return "waits for claimed items: " + ", ".join(held)
    if e.state in (State.PROPOSED, State.AUTHORIZED):
        return "not sent: the next step re-checks authority and premises"
    if e.state is State.LANDED:
        return f"landed: waits for a passing verification (last: {e.verified or 'none'})"
    if now < e.claim_until:
        return f"sent (attempt {e.attempts}): may land until {e.claim_until}"
    return "sent, unanswered: recovery may look it up or resend"
