"""The reference oracle: does a journal (and a target history) conform to the kernel?

``check(journal, history=None, complete=False)`` answers in three layers and stops at the
first divergence, which it explains in one sentence with its witness:

1. integrity (K8): the journal's syntax, canonical form, schema and hash chain (``verify``);
2. re-execution (``kernel.reexecute``): the reference kernel, driven by the observations
   each entry records (time, lease record, facts, lookup answers, acks), must write exactly
   that entry; derived members (liveness, stale premises, deadlines, claims, attempts,
   reasons) are recomputed, never believed;
3. invariants K1-K10 over the journal and, if given, the target's history.

The verdict is ``valid``: True, False, or "unknown" when nothing is wrong but an effect is
still DISPATCHED with no final entry and no target history says what happened to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from kernel import invariants
from kernel.errors import KernelError
from kernel.journal import Anomaly, collector_paused, render, verify
from kernel.machine import Effect
from kernel.model import State
from kernel.reexecute import Divergence, reexecute

Entry = Mapping[str, Any]

@dataclass(slots=True)
class OracleVerdict:
    valid: bool | str
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    entries: int = 0

    @property
    def first(self) -> str:
        """The first divergence in one sentence (or a one-line summary when valid)."""
        if self.anomalies:
            return str(self.anomalies[0]["explanation"])
        if self.valid == "unknown":
            return self.notes[-1]
        count = f"{self.entries} entr{'y' if self.entries == 1 else 'ies'}"
        return (f"{count}: chain intact, every decision is the reference kernel's, "
                f"no invariant broken")

    def as_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "entries": self.entries, "anomalies": self.anomalies,
                "notes": self.notes}


def _anomaly(kind: str, line: int, explanation: str, invariant: str | None = None
             ) -> dict[str, Any]:
    return {"type": kind, "invariant": invariant, "explanation": explanation,
            "witnesses": [f"line {line}"]}


def conformance(entries: Sequence[Entry]) -> tuple[dict[str, Effect], dict[str, Any] | None]:
    """Re-execute the journal on the reference kernel: its effects, and the first entry the
    kernel does not write as an anomaly (or None)."""
    try:
        return reexecute(entries), None
    except Divergence as d:
        anomaly = _anomaly(d.kind, d.line, d.explanation, "re-execution")
        anomaly["field"] = d.field
        return {}, anomaly


def _share(entries: Sequence[Entry], digits: str | None = None
           ) -> tuple[list[str], dict[str, Any] | None]:
    """``conformance`` of the effects whose id starts with one of these hex digits (all of
    them if None): the ids left DISPATCHED, and the first divergence among them (or None)."""
    if digits is not None:
        entries = [e for e in entries if e["effect_id"][0] in digits]
    effects, divergence = conformance(entries)
    return [eid for eid, e in effects.items() if e.state is State.DISPATCHED], divergence


T = TypeVar("T", covariant=True)


class Helper(Protocol[T]):
    """What ``spawn(fn, *args)`` returns: ``fn(*args)`` computed elsewhere meanwhile."""

    def result(self) -> T: ...
    def __enter__(self) -> Helper[T]: ...
    def __exit__(self, *exc: object) -> None: ...


Spawn = Callable[..., Helper[Any]]  # spawn(fn, *args) starts fn(*args) elsewhere

# ``check(spawn=...)`` re-executes the effects whose id begins with one of CHILD_DIGITS in a
# helper, the rest here; this process also judges the invariants meanwhile, so it takes the
# smaller share (200,000 entries of the benchmark, one core: re-executing every effect took
# 2.41 s, the invariants 0.82 s; with 11 digits of 16 the helper's share took 1.75 s, ours
# 0.87 s and the invariants 0.90 s).
CHILD_DIGITS, OWN_DIGITS = "0123456789a", "bcdef"
FORK_ENTRIES = 10_000  # below, a fork costs more than it saves


def _independent(entries: Sequence[Entry]) -> bool:
    """Whether every effect's re-execution depends on its own entries alone: no proposal is
    a coordinated unit (whose admission reads the view of every entry before it)."""
    return not any(e["kind"] == "PROPOSED" and "coordination" in e for e in entries)


History = Sequence[Mapping[str, Any]] | Sequence[str] | Mapping[str, int]


def target_records(history: History | None) -> list[dict[str, Any]] | None:
    """The target's record in the form the invariants read, from any of the accepted forms:
    records ``{"op": "send"|"apply", "effect_id", "ts", "attempt", "payload_digest"}`` (op
    defaults to "apply"; a send needs ts and attempt), a list of applied effect ids, or a
    mapping of effect id to how many times it was applied. Raises KernelError if malformed."""
    if history is None:
        return None
    if isinstance(history, Mapping):
        return [{"op": "apply", "effect_id": eid} for eid, n in history.items()
                for _ in range(_count(eid, n))]
    records = []
    for i, item in enumerate(history):
        record = {"op": "apply", "effect_id": item} if isinstance(item, str) else item
        if not isinstance(record, Mapping) or not isinstance(record.get("effect_id"), str):
            raise KernelError(f"history record {i + 1}: expected an effect id or an object "
                              f"with an effect_id")
        record = {"op": "apply", **record}
        if record["op"] not in ("send", "apply"):
            raise KernelError(f"history record {i + 1}: op must be send or apply")
        if record["op"] == "send" and not (type(record.get("attempt")) is int
                                           and record["attempt"] >= 1
                                           and type(record.get("ts")) is int):
            raise KernelError(f"history record {i + 1}: a send needs an integer ts and its "
                              f"attempt number (an integer from 1)")
        records.append(record)
    return records


def _line(anomaly: Mapping[str, Any]) -> int:
    return int(anomaly["witnesses"][0].removeprefix("line "))


def _first_named(entries: Sequence[Entry], ids: list[str]) -> str:
    """The one of ``ids`` whose first entry comes first in the journal."""
    wanted = set(ids)
    return str(next(e["effect_id"] for e in entries if e["effect_id"] in wanted))


def _count(eid: str, n: object) -> int:
    if type(n) is not int or n < 0:
        raise KernelError(f"applied[{eid!r}] must be a count (an integer, 0 or more)")
    return n


def check(journal: str | Sequence[Entry], history: History | None = None,
          complete: bool = False, now: int | None = None, *,
          applied: History | None = None, spawn: Spawn | None = None) -> OracleVerdict:
    """Judge a journal (its text, or its entries as dicts) and an optional target history.

    ``applied`` is another name for ``history`` (records from both are used). ``spawn``
    lends the check a second core: it starts a function elsewhere (the command line's is
    kernel.forked.Forked, a forked process; this module stays pure). The effects are then
    re-executed in two shares (when they are independent: no coordinated unit) while this
    process also judges the invariants; ``verify`` always keeps to this process (README,
    Benchmarks, says what was measured). The verdict is the same (the first divergence is
    the earlier of the two shares' first ones), only the time differs. The garbage
    collector is paused meanwhile (collector_paused)."""
    with collector_paused():
        return _check(journal, history, complete, now, applied, spawn)


def _check(journal: str | Sequence[Entry], history: History | None, complete: bool,
           now: int | None, applied: History | None, spawn: Spawn | None) -> OracleVerdict:
    records = target_records(history)
    more = target_records(applied)
    if more is not None:
        records = (records or []) + more
    text = journal if isinstance(journal, str) else render(journal)
    verdict = verify(text, now=now)
    result = OracleVerdict(valid=True, notes=list(verdict.notes), entries=len(verdict.entries))
    if verdict.anomalies:
        first: Anomaly = verdict.anomalies[0]
        result.valid = False
        result.anomalies.append({**_anomaly(first.type, first.line, first.explanation, "K8")})
        return result
    entries = verdict.entries
    if spawn is not None and len(entries) >= FORK_ENTRIES and _independent(entries):
        with spawn(_share, entries, CHILD_DIGITS) as helper:
            open_ids, divergence = _share(entries, OWN_DIGITS)
            violations = invariants.check(entries, records, complete)
            theirs, their_divergence = helper.result()
        open_ids += theirs
        if their_divergence and (not divergence or _line(their_divergence) < _line(divergence)):
            divergence = their_divergence
    else:
        open_ids, divergence = _share(entries)
        violations = [] if divergence else invariants.check(entries, records, complete)
    if divergence:
        result.valid = False
        result.anomalies.append(divergence)
        return result
    for v in violations:
        result.anomalies.append({"type": v.type, "invariant": v.invariant,
                                 "explanation": f"{v.invariant}: {v.explanation}",
                                 "witnesses": list(v.witnesses)})
    if result.anomalies:
        result.valid = False
    elif records is None and not complete:
        if open_ids:
            first_open = _first_named(entries, open_ids)
            result.valid = "unknown"
            result.notes.append(f"effect {first_open[:12]} was DISPATCHED and has no final "
                                f"entry: whether the target applied it cannot be told from the "
                                f"journal alone")
    return result
