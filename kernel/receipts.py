"""Receipts: the four facts and the final state an auditor reads instead of logs.

``executed`` is what the target confirmed, not what was attempted: ``true`` only after an
ack or a positive lookup, ``false`` only when provably not applied (never sent, or a lookup
taken after every send's claim expired found nothing), otherwise ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from kernel.machine import Effect, replay


@dataclass(frozen=True, slots=True)
class Receipt:
    effect_id: str
    proposed: bool
    authorized: dict[str, Any] | None  # the lease and the checks at the moment it fired
    executed: str  # "true" | "false" | "unknown"
    recorded: bool  # the final state is in the durable journal
    final: str | None  # COMMITTED | REFUSED | AMBIGUOUS, or None while still open
    reason: str | None
    verified: str | None = None  # "passed" | "failed" | "could_not_run" where required

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.verified is None:  # a target without verification: the receipt of old
            del out["verified"]
        return out


def receipt(effect: Effect, recorded: bool) -> Receipt:
    return Receipt(effect_id=effect.effect_id, proposed=True, authorized=effect.authorized,
                   executed=effect.executed.value, recorded=recorded and effect.state.final,
                   final=effect.state.value if effect.state.final else None,
                   reason=effect.reason, verified=effect.verified)


def receipts(entries: Iterable[Mapping[str, Any]]) -> list[Receipt]:
    """One receipt per effect in a durable journal, in order of proposal."""
    return [receipt(e, recorded=True) for e in replay(entries).values()]
