"""Judges of the coordination guarantees (G1, G2, G5, G6 limited, G7, G8) over a journal.

How it works. ``judge(entries)`` walks sealed entries once and keeps its own account,
written apart from ``kernel.machine`` and ``kernel.view`` (it imports neither): per unit the
write set, read set, cost, budget, cap, plan version and verify flag from its PROPOSED
entry; its token and claim expiry from its AUTHORIZED entry; whether it was sent (any
DISPATCHED) and whether it ended proven unapplied (REFUSED ``executed: false``). At each
entry it checks:

- G1: an admission's token is its own entry's seq;
- G2: no admission while another unit's claim on one of its items is live (not expired by
  the entry's time, no final entry yet);
- G5: a unit that requires verification is COMMITTED only ``via: verification``, after a
  LANDED entry;
- G6 (limited): no DISPATCHED of a unit after a unit whose claim covered its reads at its
  admission (recomputed here, not read from the entry) was sent (and not proven unapplied);
- G7: after every entry, the cost reserved against each budget (admitted units not proven
  unapplied) is within the smallest cap declared for it;
- G8: no DISPATCHED of a unit whose plan version is below the highest version any earlier
  entry recorded (a unit's proposal or a check).

Each anomaly names the guarantee, the entry's seq as witness and one line of explanation.
Entries of uncoordinated effects are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_FINAL = ("COMMITTED", "REFUSED", "AMBIGUOUS")


@dataclass(frozen=True, slots=True)
class Breach:
    guarantee: str
    seq: int
    explanation: str


@dataclass(slots=True)
class _Unit:
    spec: Mapping[str, Any]
    token: int | None = None
    until: int = 0
    final: bool = False
    sent: bool = False
    unapplied: bool = False
    landed: bool = False
    overlaps: tuple[str, ...] = ()


@dataclass(slots=True)
class _Account:
    units: dict[str, _Unit] = field(default_factory=dict)
    caps: dict[str, int] = field(default_factory=dict)
    plans: dict[str, int] = field(default_factory=dict)
    breaches: list[Breach] = field(default_factory=list)

    def breach(self, g: str, e: Mapping[str, Any], why: str) -> None:
        self.breaches.append(Breach(g, e["seq"], f"entry {e['seq']}: {why}"))


def judge(entries: Iterable[Mapping[str, Any]]) -> list[Breach]:
    """Every breach of G1, G2, G5, G6 (limited), G7 and G8 in a journal, in order."""
    acc = _Account()
    for e in entries:
        _record_plan(acc, e)
        unit = acc.units.get(e["effect_id"])
        if e["kind"] == "PROPOSED" and "coordination" in e and unit is None:
            _propose(acc, e)
        elif unit is not None:
            _step(acc, unit, e)
            _budgets(acc, e)
    return acc.breaches


def _record_plan(acc: _Account, e: Mapping[str, Any]) -> None:
    plan = e.get("checks", {}).get("unit", {}).get("plan")
    if plan is not None:
        acc.plans[plan["id"]] = max(acc.plans.get(plan["id"], 0), plan["current"])


def _propose(acc: _Account, e: Mapping[str, Any]) -> None:
    c = e["coordination"]
    acc.units[e["effect_id"]] = _Unit(c)
    if c["budget"] is not None:
        acc.caps[c["budget"]] = min(c["cap"], acc.caps.get(c["budget"], c["cap"]))
    if c["plan"] is not None:
        acc.plans[c["plan"]] = max(acc.plans.get(c["plan"], 0), c["plan_version"])


def _step(acc: _Account, unit: _Unit, e: Mapping[str, Any]) -> None:
    kind = e["kind"]
    if kind == "AUTHORIZED":
        _admission(acc, unit, e)
    elif kind == "DISPATCHED":
        _dispatch(acc, unit, e)
    elif kind == "LANDED":
        unit.landed = True
    elif kind == "COMMITTED" and unit.spec["verify"] and not (
            e["via"] == "verification" and unit.landed):
        acc.breach("G5", e, "a unit that requires verification committed without a pass")
    if kind in _FINAL:
        unit.final = True
        unit.unapplied = kind == "REFUSED" and e["executed"] == "false"


def _live_holders(acc: _Account, items: Iterable[str], me: str, now: int) -> list[str]:
    wanted = set(items)
    return [eid for eid, u in acc.units.items()
            if eid != me and u.token is not None and not u.final and now < u.until
            and wanted & set(u.spec["writes"])]


def _admission(acc: _Account, unit: _Unit, e: Mapping[str, Any]) -> None:
    adm = e["admission"]
    if adm["token"] != e["seq"]:
        acc.breach("G1", e, f"token {adm['token']} is not the admission's seq {e['seq']}")
    held = _live_holders(acc, unit.spec["writes"], e["effect_id"], e["ts"])
    if held:
        acc.breach("G2", e, f"admitted while {held[0][:12]} holds a live claim on its items")
    unit.token, unit.until = adm["token"], adm["until"]
    unit.overlaps = tuple(_live_holders(acc, unit.spec["reads"], e["effect_id"], e["ts"]))


def _dispatch(acc: _Account, unit: _Unit, e: Mapping[str, Any]) -> None:
    moved = [o for o in unit.overlaps
             if acc.units[o].sent and not acc.units[o].unapplied]
    if moved:
        acc.breach("G6", e, f"sent after {moved[0][:12]}, which wrote what it read, was sent")
    plan = unit.spec["plan"]
    if plan is not None and unit.spec["plan_version"] < acc.plans.get(plan, 0):
        acc.breach("G8", e, f"sent under plan version {unit.spec['plan_version']}, "
                            f"superseded by {acc.plans[plan]}")
    unit.sent = True


def _budgets(acc: _Account, e: Mapping[str, Any]) -> None:
    reserved: dict[str, int] = {}
    for u in acc.units.values():
        if u.token is not None and not u.unapplied and u.spec["budget"] is not None:
            reserved[u.spec["budget"]] = reserved.get(u.spec["budget"], 0) + u.spec["cost"]
    for budget, total in reserved.items():
        if total > acc.caps[budget]:
            acc.breach("G7", e, f"budget {budget}: {total} reserved, cap {acc.caps[budget]}")
