"""Invariants K1-K10 as predicates over a history, each returning anomalies with witnesses.

A history is the verified journal entries plus, when known, what happened at the target:
``{"op": "send", "effect_id", "attempt", "ts"}`` for each request that left a worker and
``{"op": "apply", "effect_id", "ts", "payload_digest"}`` for each application (a request
deduplicated or dropped by the target is not an apply). Witnesses are journal line numbers
(``seq + 1``) and history indexes (``h0``, ``h1``, ...).

Some invariants need the target's record (K1-K7 about sends and applications); without it
only what the journal itself can show is checked. K8 is ``journal.verify``. K9 (every
DISPATCHED effect reaches a final state) is judged only for a ``complete`` history, one where
recovery ran to the end. K10 (a valid proposal with a live lease and holding premises
commits) is judged from the journal: a refusal must carry the evidence that justified it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.machine import proposal_of
from kernel.model import Proposal

Entry = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str  # "K1" ... "K10"
    type: str
    explanation: str
    witnesses: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "type": self.type,
                "explanation": self.explanation, "witnesses": list(self.witnesses)}


@dataclass(slots=True)
class EffectHistory:
    """Everything recorded about one effect, in order."""

    proposal: Proposal | None = None
    entries: list[Entry] = field(default_factory=list)
    sends: list[tuple[int, Mapping[str, Any]]] = field(default_factory=list)
    applies: list[tuple[int, Mapping[str, Any]]] = field(default_factory=list)

    def kinds(self, *kinds: str) -> list[Entry]:
        return [e for e in self.entries if e["kind"] in kinds]

    @property
    def final(self) -> Entry | None:
        finals = self.kinds("COMMITTED", "REFUSED", "AMBIGUOUS")
        return finals[0] if finals else None


def _line(entry: Entry) -> str:
    return f"line {entry['seq'] + 1}"


def group(entries: Iterable[Entry], history: Sequence[Mapping[str, Any]] | None
          ) -> dict[str, EffectHistory]:
    effects: dict[str, EffectHistory] = defaultdict(EffectHistory)
    for entry in entries:
        fx = effects[entry["effect_id"]]
        if entry["kind"] == "PROPOSED" and fx.proposal is None:
            fx.proposal = proposal_of(entry)
        fx.entries.append(entry)
    for i, record in enumerate(history or ()):
        fx = effects[record["effect_id"]]
        (fx.sends if record["op"] == "send" else fx.applies).append((i, record))
    return dict(effects)


def _dispatch_for(fx: EffectHistory, attempt: int) -> Entry | None:
    for entry in fx.kinds("DISPATCHED"):
        if entry["attempt"] == attempt:
            return entry
    return None


def check_sends(eid: str, fx: EffectHistory) -> list[Violation]:
    """K1 write-ahead, K4 lease at send, K5 premises at send, K6 no self-race."""
    out: list[Violation] = []
    previous_claim: int | None = None
    for i, send in fx.sends:
        d = _dispatch_for(fx, send["attempt"])
        if d is None or d["ts"] > send["ts"]:
            out.append(Violation("K1", "send_without_intent",
                                 f"effect {eid[:12]} attempt {send['attempt']} was sent with no "
                                 f"earlier durable DISPATCHED entry", (f"h{i}",)))
            continue
        lease = d["checks"]["lease"]
        if not lease["live"] or lease["revoked"] or lease["expires_at"] <= send["ts"]:
            out.append(Violation("K4", "send_without_authority",
                                 f"effect {eid[:12]} attempt {send['attempt']} was sent under "
                                 f"a lease that was not live", (_line(d), f"h{i}")))
        if d["checks"]["stale"]:
            out.append(Violation("K5", "send_on_stale_premise",
                                 f"effect {eid[:12]} attempt {send['attempt']} was sent although "
                                 f"premises {d['checks']['stale']} were stale",
                                 (_line(d), f"h{i}")))
        if previous_claim is not None and send["ts"] < previous_claim:
            out.append(Violation("K6", "self_race",
                                 f"effect {eid[:12]} attempt {send['attempt']} was sent at "
                                 f"{send['ts']} while the previous send could still land (claim "
                                 f"until {previous_claim})", (_line(d), f"h{i}")))
        previous_claim = d["claim_until"]
    return out


def check_applies(eid: str, fx: EffectHistory) -> list[Violation]:
    """K2 at most once, K3 payload binding, K7 honest outcomes against the target."""
    out: list[Violation] = []
    tier = fx.proposal.capabilities.tier if fx.proposal else 0
    witnesses = tuple(f"h{i}" for i, _ in fx.applies)
    if len(fx.applies) > 1:
        out.append(Violation("K2", "applied_twice",
                             f"effect {eid[:12]} was applied {len(fx.applies)} times",
                             witnesses))
    if tier == 3 and len(fx.sends) > 1:
        out.append(Violation("K2", "tier3_resent",
                             f"effect {eid[:12]} at a tier-3 target was sent {len(fx.sends)} "
                             f"times", tuple(f"h{i}" for i, _ in fx.sends)))
    if fx.proposal is not None:
        for i, a in fx.applies:
            if a.get("payload_digest") not in (None, fx.proposal.payload_digest):
                out.append(Violation("K3", "payload_not_bound",
                                     f"effect {eid[:12]} was applied with a payload other than "
                                     f"the one first recorded", (f"h{i}",)))
    final = fx.final
    if final is not None and final["kind"] == "COMMITTED" and not fx.applies:
        out.append(Violation("K7", "committed_not_applied",
                             f"effect {eid[:12]} is COMMITTED but the target never applied it",
                             (_line(final),)))
    if final is not None and final["kind"] == "REFUSED" and fx.applies:
        out.append(Violation("K7", "refused_but_applied",
                             f"effect {eid[:12]} is REFUSED with executed=false but the target "
                             f"applied it", (_line(final), *witnesses)))
    return out


def check_journal(eid: str, fx: EffectHistory, complete: bool) -> list[Violation]:
    """What the journal alone must show: K3, K7 (AMBIGUOUS only where nothing could help),
    K9 when the history is complete, K10 refusals with evidence, and tier-3 resends (K2)."""
    out: list[Violation] = []
    if fx.proposal is None:
        return [Violation("K3", "no_decision", f"effect {eid[:12]} has entries but no PROPOSED",
                          (_line(fx.entries[0]),))]
    caps = fx.proposal.capabilities
    dispatches = fx.kinds("DISPATCHED")
    if caps.tier == 3 and len(dispatches) > 1:
        out.append(Violation("K2", "tier3_resent", f"effect {eid[:12]} at a tier-3 target was "
                             f"dispatched again at recovery", (_line(dispatches[1]),)))
    for d in dispatches:
        if not d["checks"]["lease"]["live"] or d["checks"]["stale"]:
            out.append(Violation("K4" if not d["checks"]["lease"]["live"] else "K5",
                                 "dispatch_failed_checks",
                                 f"effect {eid[:12]} was dispatched although its checks failed",
                                 (_line(d),)))
    final = fx.final
    if final is not None and final["kind"] == "AMBIGUOUS" and caps.queryable:
        out.append(Violation("K7", "needless_ambiguity",
                             f"effect {eid[:12]} ended AMBIGUOUS although its target can be "
                             f"looked up", (_line(final),)))
    if final is not None and final["kind"] == "REFUSED":
        checks = final.get("checks") or {}
        lease_live = checks.get("lease", {}).get("live", True)
        if lease_live and not checks.get("stale"):
            out.append(Violation("K10", "refused_without_cause",
                                 f"effect {eid[:12]} was REFUSED though its lease was live and "
                                 f"its premises held", (_line(final),)))
        proof = (final.get("lookup") or {}).get("found")
        if final["reason"].endswith("_at_recovery") and proof is not False:
            out.append(Violation("K7", "refused_without_proof",
                                 f"effect {eid[:12]} was REFUSED at recovery without a lookup "
                                 f"proving it absent", (_line(final),)))
    claim_until = dispatches[-1]["claim_until"] if dispatches else 0
    for late in fx.kinds("LATE"):
        confirms = late["answer"] == "ack" or late.get("found") is True
        denies = late.get("found") is False and late.get("asked_at", -1) >= claim_until
        if final is not None and final["kind"] == "REFUSED" and confirms:
            out.append(Violation("K7", "refused_but_confirmed",
                                 f"effect {eid[:12]} was REFUSED as never applied, but the "
                                 f"target later confirmed it", (_line(final), _line(late))))
        if final is not None and final["kind"] == "COMMITTED" and denies:
            out.append(Violation("K7", "committed_but_not_found",
                                 f"effect {eid[:12]} was COMMITTED, but a later lookup did "
                                 f"not find it", (_line(final), _line(late))))
    if complete and dispatches and final is None:
        out.append(Violation("K9", "unresolved", f"effect {eid[:12]} was DISPATCHED and never "
                             f"reached a final state", (_line(dispatches[-1]),)))
    return out


def check(entries: Sequence[Entry], history: Sequence[Mapping[str, Any]] | None = None,
          complete: bool = False) -> list[Violation]:
    """All invariant violations of a verified journal and an optional target history."""
    out: list[Violation] = []
    for eid, fx in group(entries, history).items():
        if fx.entries:
            out.extend(check_journal(eid, fx, complete))
        if history is not None:
            out.extend(check_sends(eid, fx))
            out.extend(check_applies(eid, fx))
    return out
