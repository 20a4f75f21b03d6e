"""Recovery as a pure decision: what to do with an effect that was sent and never confirmed.

The order is the design (DESIGN.md section 4), and each step has a reason code:

1. ``claim_in_flight``: until the last send's claim expires (its deadline plus the settle
   margin), a send of this effect may still land; wait, never race yourself.
2. A tier-1 effect whose dedup window may have closed before a resend could land
   (first send + window - dedup margin) loses its tier: it is treated as tier 2 if the target
   is queryable, else as tier 3 (``dedup_window_expired``).
3. Queryable: look it up (only an answer asked after the claim expired counts, because a
   landed effect may stay invisible for the lookup lag). Found: COMMITTED ``found_by_lookup``.
4. With neither an open dedup window nor a negative lookup, nothing could make a resend
   safe (tier 3, or tier 1 past its window without lookup): AMBIGUOUS
   (``no_dedup_no_lookup``, ``dedup_window_expired_no_lookup``), never resent.
5. Re-check lease and premises before anything could be sent again. Failing: REFUSED when
   the lookup proved the effect absent (``lease_dead_at_recovery``,
   ``premise_stale_at_recovery``), otherwise AMBIGUOUS (cannot resend, cannot confirm).
6. Resend with the same key (``resend_same_key``) or after a negative lookup
   (``resend_after_absent``).

Steps 4 and 5 both end AMBIGUOUS when they apply; checking 4 first only gives the more
fundamental reason.

The in-flight bound (DESIGN.md section 4): waiting out the claim proves nothing when the
target states neither that it drops late requests nor that delivery is bounded (a
capability ``bounds_in_flight`` that is false). Then a negative lookup is not evidence of
absence and no resend is safe (``no_in_flight_bound``); a positive lookup still commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from kernel.machine import Effect

Action = Literal["wait", "query", "commit", "refuse", "resend", "ambiguous"]


@dataclass(frozen=True, slots=True)
class Lookup:
    """A lookup's answer and when it was asked (the time the query left us)."""

    found: bool
    asked_at: int

    def as_json(self) -> dict[str, Any]:
        return {"found": self.found, "asked_at": self.asked_at}


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    reason: str
    until: int = 0


def dedup_open(effect: Effect, now: int) -> bool:
    """Whether a resend made now would surely still be deduplicated by the target."""
    caps, timing = effect.proposal.capabilities, effect.proposal.timing
    if not caps.dedupes or effect.first_sent_at is None or not in_flight_bounded(effect):
        return False  # without an in-flight bound a late landing may outlive any window
    return now < effect.first_sent_at + caps.dedup_window - timing.dedup_margin


def in_flight_bounded(effect: Effect) -> bool:
    """Whether the target states an in-flight bound (targets that say nothing do)."""
    return effect.proposal.capabilities.bounds_in_flight


def decide(effect: Effect, now: int, lease_live: bool, premises_hold: bool,
           lookup: Lookup | None, failing: str | None = None) -> Decision:
    """The next recovery step for a DISPATCHED effect, given fresh observations.

    ``failing`` names the check that failed when it is not the lease or a premise (a
    coordinated unit's plan, claim or read overlap); it becomes the reason's prefix."""
    if now < effect.claim_until:
        return Decision("wait", "claim_in_flight", effect.claim_until)
    caps = effect.proposal.capabilities
    dedupes = dedup_open(effect, now)
    if caps.queryable and (lookup is None or lookup.asked_at < effect.claim_until):
        return Decision("query", "lookup_needed")
    if caps.queryable and lookup is not None and lookup.found:  # no lookup exists otherwise
        return Decision("commit", "found_by_lookup")
    bounded = in_flight_bounded(effect)
    proven_absent = caps.queryable and lookup is not None and bounded
    if not (dedupes or proven_absent):  # no capability left that could make a resend safe
        if not bounded:
            return Decision("ambiguous", "no_in_flight_bound")
        expired = caps.dedupes
        return Decision("ambiguous", "dedup_window_expired_no_lookup" if expired
                        else "no_dedup_no_lookup")
    if not (lease_live and premises_hold):
        what = failing or ("lease_dead" if not lease_live else "premise_stale")
        if proven_absent:
            return Decision("refuse", f"{what}_at_recovery")
        return Decision("ambiguous", f"{what}_at_recovery_cannot_confirm")
    return Decision("resend", "resend_same_key" if dedupes else "resend_after_absent")
