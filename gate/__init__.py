"""A thin real runtime around the pure kernel: a file journal and a gate for plain functions.

How it works. ``FileJournal`` appends sealed lines to a JSON-lines file, flushing and
fsync'ing when the kernel asks (DISPATCHED and final entries), and on open it verifies the
file, cuts off a torn last line left by a crash, and refuses to touch a corrupted journal.
``Gate`` feeds the kernel events built from the real clock, a lease source and a target
adapter, and carries out the commands the kernel returns: append, send, query, wait. After a
crash, ``Gate.recover()`` replays the durable journal and drives every open effect to a final
state. This package does I/O; the kernel package does none.

One writer per journal file: two processes appending to the same file could each decide on a
stale view (see spec/broken/StaleView.tla). Sharing a journal needs a conditional append
(append only if the chain head is unchanged, else re-read and replay), as the simulator does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import kernel
from kernel import JournalError, Receipt

FINAL = frozenset(state.value for state in kernel.FINAL_STATES)


class FileJournal:
    """An append-only, hash-chained journal file with fsync and torn-tail recovery."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        verdict = kernel.verify(text)
        if verdict.anomalies:
            first = verdict.anomalies[0]
            raise JournalError(first.line, f"{self.path}: {first.explanation}")
        self.entries = verdict.entries
        self.finals = {e["effect_id"]: e["kind"] for e in self.entries if e["kind"] in FINAL}
        if not text.endswith("\n") and text:  # a torn last line: keep the verified prefix
            self._truncate_to(len(text[:text.rfind("\n") + 1].encode("utf-8")))
        head = self.entries[-1]["hash"] if self.entries else kernel.GENESIS
        self.chain = kernel.Chain(seq=len(self.entries), head=head)
        self.last_ts = self.entries[-1]["ts"] if self.entries else 0
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open

    def _truncate_to(self, size: int) -> None:
        with open(self.path, "r+b") as f:
            f.truncate(size)
            f.flush()
            os.fsync(f.fileno())

    def append(self, body: Mapping[str, Any], fsync: bool) -> dict[str, Any]:
        entry, line = self.chain.seal(body)
        self._file.write(line)
        self._file.flush()
        if fsync:
            os.fsync(self._file.fileno())
        self.entries.append(entry)
        if fsync and entry["kind"] in FINAL:
            self.finals[entry["effect_id"]] = entry["kind"]
        self.last_ts = entry["ts"]
        return entry

    def close(self) -> None:
        self._file.close()


class Target(Protocol):
    """What a service adapter offers the gate."""

    capabilities: kernel.Capabilities

    def apply(self, key: str, payload: Any, deadline: int) -> bool:
        """Carry out the effect (deduplicating by key if it can); True when acknowledged."""

    def lookup(self, effect_id: str) -> bool:
        """Whether the effect landed (only for queryable targets)."""

    def facts(self, effect_id: str) -> dict[str, Any]:
        """The facts premises are judged on, excluding this effect's own contribution."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Gate:
    """Drives the kernel for one target, with a real journal file and the real clock."""

    def __init__(self, journal: FileJournal, target: Target,
                 lease_of: Callable[[str], kernel.Lease],
                 clock: Callable[[], int] = wall_clock_ms,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.journal, self.target, self.lease_of = journal, target, lease_of
        self.clock, self.sleep = clock, sleep
        self.effects = kernel.Effects(kernel.replay(journal.entries))

    def now(self) -> int:
        return max(self.clock(), self.journal.last_ts)  # journal time never runs backwards

    def submit(self, proposal: kernel.Proposal) -> Receipt:
        eid = proposal.effect_id
        self._run(self.effects.apply(kernel.Propose(self.now(), proposal)), eid)
        if self.effects.by_id[eid].state is kernel.State.PROPOSED:
            self._step(eid, kernel.Authorize)
        if self.effects.by_id[eid].state is kernel.State.AUTHORIZED:
            self._step(eid, kernel.Dispatch)
        if self.effects.by_id[eid].state is kernel.State.DISPATCHED:
            self._resolve(eid)
        return self.receipt(eid)

    def recover(self) -> list[Receipt]:
        """Resolve every effect that was sent and never confirmed (after a restart)."""
        for effect in self.effects.open():
            self._resolve(effect.effect_id)
        return [self.receipt(eid) for eid in self.effects.by_id]

    def receipt(self, effect_id: str) -> Receipt:
        effect = self.effects.by_id[effect_id]
        recorded = self.journal.finals.get(effect_id) == effect.state.value
        return kernel.receipt(effect, recorded)

    def _step(self, eid: str, event_type: type) -> None:
        proposal = self.effects.by_id[eid].proposal
        event = event_type(self.now(), self.lease_of(proposal.lease), self.target.facts(eid))
        self._run(self.effects.apply(event, eid), eid)

    def _resolve(self, eid: str, lookup: kernel.Lookup | None = None) -> None:
        while self.effects.by_id[eid].state is kernel.State.DISPATCHED:
            proposal = self.effects.by_id[eid].proposal
            event = kernel.Recover(self.now(), self.lease_of(proposal.lease),
                                   self.target.facts(eid), lookup)
            lookup = self._run(self.effects.apply(event, eid), eid) or lookup

    def _run(self, commands: tuple[kernel.Command, ...], eid: str) -> kernel.Lookup | None:
        """Carry out commands in order; returns a lookup answer if one was asked for."""
        answer = None
        for command in commands:
            if isinstance(command, kernel.Append):
                self.journal.append(command.entry, command.fsync)
            elif isinstance(command, kernel.Send):
                if self.target.apply(command.idempotency_key, command.payload, command.deadline):
                    self._run(self.effects.apply(kernel.Ack(self.now(), command.attempt), eid),
                              eid)
            elif isinstance(command, kernel.WaitUntil):
                self.sleep(max(0, command.time - self.now()) / 1000)
            elif isinstance(command, kernel.Query):
                asked_at = self.now()
                answer = kernel.Lookup(self.target.lookup(command.effect_id), asked_at)
        return answer
