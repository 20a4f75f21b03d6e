"""Receipts: the four facts and the final state an auditor reads instead of logs.

``executed`` is what the target confirmed, not what was attempted: ``true`` only after an
ack or a positive lookup, ``false`` only when provably not applied (never sent, or a lookup
taken after every send's claim expired found nothing), otherwise ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
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
        """The receipt as a JSON object: ``dataclasses.asdict`` spelled out (the same members
        in the same order, values copied deeply), which costs a sweep less."""
        try:
            out = {name: _copy(getattr(self, name)) for name in _FIELDS}
        except _NotJSON:
            out = asdict(self)
        if self.verified is None:  # a target without verification: the receipt of old
            del out["verified"]
        return out


_FIELDS = tuple(f.name for f in fields(Receipt))


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value, as ``asdict`` makes it (containers rebuilt)."""
    kind = type(value)
    if kind is dict:
        return {_copy(k): _copy(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return kind(_copy(v) for v in value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    raise _NotJSON  # anything else: asdict itself copies it


class _NotJSON(Exception):
    pass


def receipt(effect: Effect, recorded: bool) -> Receipt:
    return Receipt(effect_id=effect.effect_id, proposed=True, authorized=effect.authorized,
                   executed=effect.executed.value, recorded=recorded and effect.state.final,
                   final=effect.state.value if effect.state.final else None,
                   reason=effect.reason, verified=effect.verified)


def receipts(entries: Iterable[Mapping[str, Any]]) -> list[Receipt]:
    """One receipt per effect in a durable journal, in order of proposal."""
    return [receipt(e, recorded=True) for e in replay(entries).values()]
