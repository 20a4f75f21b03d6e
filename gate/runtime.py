"""The gate: drives the pure kernel with real time, real targets and a shared journal.

How it works. Every kernel step is an atomic read-decide-append: refresh the view (read the
entries other workers appended and fold them in), build the event from fresh observations
(clock, lease, the target's facts), let the kernel step, and append its entry only if the
journal's head is still the one the step saw; if another worker appended first, do it all
again. Then carry out the step's other commands: send (and step an Ack when the target
answers), wait (a claim in flight), query, surface an AMBIGUOUS effect.

``settle(eid)`` drives one effect until it is final: PROPOSED goes through Authorize,
AUTHORIZED through Dispatch (fresh lease and premise checks; a failing check ends REFUSED),
DISPATCHED through Recover (wait out the send's claim, look up, resend or say AMBIGUOUS).
``recover()`` settles every effect of the journal, so none is left open; an effect another
worker is still sending is only waited for, never raced, because its DISPATCHED entry's
``claim_until`` is in the journal for everyone.

``effect(...)`` is the decorator a user touches: it wraps a plain function that calls a
service into a gated effect whose payload is the function's arguments.
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import kernel
from gate.journal import Journal, open_journal
from kernel.machine import Effect, apply_entry


class GateError(kernel.KernelError):
    """A misuse of the gate (an effect whose function is not registered, ...)."""


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


def _no_probe(point: str) -> None:
    return None


class Gate:
    """One worker: a view of a shared journal, the targets it can reach, a lease source."""

    def __init__(self, journal: Journal | str | os.PathLike[str],
                 target: Target | Mapping[str, Target],
                 lease_of: Callable[[str], kernel.Lease],
                 clock: Callable[[], int] = wall_clock_ms,
                 sleep: Callable[[float], None] = time.sleep,
                 probe: Callable[[str], None] = _no_probe) -> None:
        self.journal = journal if isinstance(journal, Journal) else open_journal(journal)
        self.targets: dict[str, Target] = (dict(target) if isinstance(target, Mapping)
                                           else {"*": target})
        self.lease_of, self.clock, self.sleep, self.probe = lease_of, clock, sleep, probe
        self.effects: dict[str, Effect] = kernel.replay(self.journal.entries)
        self.surfaced: dict[str, str] = {}
        self.alerts: list[str] = []

    # ------------------------------------------------------------ the view

    def refresh(self) -> None:
        for entry in self.journal.refresh():
            self._fold(entry)

    def _fold(self, entry: Mapping[str, Any]) -> None:
        eid = entry["effect_id"]
        folded = apply_entry(self.effects.get(eid), entry)
        if folded is not None:
            self.effects[eid] = folded

    def now(self) -> int:
        return max(self.clock(), self.journal.last_ts)  # journal time never runs backwards

    def target_of(self, effect: Effect) -> Target:
        name = effect.proposal.target
        found = self.targets.get(name) or self.targets.get("*")
        if found is None:
            raise GateError(f"effect {effect.effect_id[:12]} is for target '{name}', which "
                            f"this process has not registered")
        return found

    # ------------------------------------------------------------ one atomic step

    def _step(self, eid: str, event_of: Callable[[Effect | None], kernel.Event | None]
              ) -> tuple[kernel.Command, ...]:
        """Refresh, decide, append if the head is unchanged; else all again."""
        while True:
            self.refresh()
            effect, head = self.effects.get(eid), self.journal.head
            event = event_of(effect)
            if event is None:
                return ()
            result = kernel.step(effect, event)
            appends = [c for c in result.commands if isinstance(c, kernel.Append)]
            if appends:
                kind = appends[0].entry["kind"]
                self.probe(f"before:{kind}")
                entry = self.journal.append(appends[0].entry, head, appends[0].fsync)
                if entry is None:
                    continue  # another worker appended first: re-read, replay, decide again
                self._fold(entry)
                self.probe(f"after:{kind}")
            return tuple(c for c in result.commands if not isinstance(c, kernel.Append))

    def _event(self, effect: Effect | None, lookup: kernel.Lookup | None
               ) -> kernel.Event | None:
        if effect is None or effect.state.final:
            return None
        p, now = effect.proposal, self.now()
        lease, facts = self.lease_of(p.lease), self.target_of(effect).facts(p.effect_id)
        if effect.state is kernel.State.PROPOSED:
            return kernel.Authorize(now, lease, facts)
        if effect.state is kernel.State.AUTHORIZED:
            return kernel.Dispatch(now, lease, facts)
        return kernel.Recover(now, lease, facts, lookup)

    # ------------------------------------------------------------ driving effects

    def submit(self, proposal: kernel.Proposal) -> kernel.Receipt:
        """Propose an effect and drive it to a final state."""
        eid = proposal.effect_id
        replies = self._step(eid, lambda e: kernel.Propose(self.now(), proposal))
        if any(isinstance(c, kernel.Reply) and c.outcome == "conflicting_payload"
               for c in replies):
            return self.receipt(eid)
        self.settle(eid)
        return self.receipt(eid)

    def settle(self, eid: str) -> None:
        """Drive one effect (ours or another worker's) until it is final."""
        lookup: list[kernel.Lookup | None] = [None]

        def event_of(effect: Effect | None) -> kernel.Event | None:
            return self._event(effect, lookup[0])
        while not self.effects[eid].state.final:
            commands = self._step(eid, event_of)
            lookup[0] = self._carry_out(eid, commands) or lookup[0]

    def recover(self) -> list[kernel.Receipt]:
        """After a restart: settle every effect the journal leaves open; all receipts."""
        for _ in range(3):  # effects other live workers propose meanwhile get a second look
            self.refresh()
            still_open = [eid for eid, e in self.effects.items() if not e.state.final]
            if not still_open:
                break
            for eid in still_open:
                self.settle(eid)
        return [self.receipt(eid) for eid in self.effects]

    def receipt(self, effect_id: str) -> kernel.Receipt:
        return kernel.receipt(self.effects[effect_id], self.journal.recorded(effect_id))

    def _carry_out(self, eid: str, commands: tuple[kernel.Command, ...]
                   ) -> kernel.Lookup | None:
        answer = None
        for command in commands:
            if isinstance(command, kernel.Send):
                self._send(eid, command)
            elif isinstance(command, kernel.WaitUntil):
                self.sleep(max(0, command.time - self.now() + 1) / 1000)
            elif isinstance(command, kernel.Query):
                asked_at = self.now()
                found = self.target_of(self.effects[eid]).lookup(command.effect_id)
                answer = kernel.Lookup(found, asked_at)
            elif isinstance(command, kernel.Surface):
                self.surfaced[command.effect_id] = command.reason
            elif isinstance(command, kernel.Alert):
                self.alerts.append(f"{command.invariant}: {command.message}")
        return answer

    def _send(self, eid: str, send: kernel.Send) -> None:
        self.probe("before:send")
        target = self.target_of(self.effects[eid])
        acked = target.apply(send.idempotency_key, send.payload, send.deadline)
        self.probe("after:send")
        if acked:
            self._step(eid, lambda e: kernel.Ack(self.now(), send.attempt))


# ---------------------------------------------------------------- the decorator


class Service(Protocol):
    """What the decorator needs besides the function: how recovery can ask the service."""

    capabilities: kernel.Capabilities

    def lookup(self, effect_id: str) -> bool: ...

    def facts(self, effect_id: str) -> dict[str, Any]: ...


class _FunctionTarget:
    """A service adapter whose apply is a plain function called with the recorded payload."""

    def __init__(self, fn: Callable[..., Any], service: Service) -> None:
        self.fn, self.service = fn, service
        self.capabilities = service.capabilities
        params = inspect.signature(fn).parameters
        self.passes = {n for n in ("idempotency_key", "deadline") if n in params}

    def apply(self, key: str, payload: Any, deadline: int) -> bool:
        extra = {"idempotency_key": key, "deadline": deadline}
        try:
            self.fn(**payload, **{n: v for n, v in extra.items() if n in self.passes})
        except Exception:  # no answer: recovery finds out what happened
            return False
        return True

    def lookup(self, effect_id: str) -> bool:
        return self.service.lookup(effect_id)

    def facts(self, effect_id: str) -> dict[str, Any]:
        return self.service.facts(effect_id)


class _Registry:
    """One gate per journal path in this process, with the functions registered on it."""

    def __init__(self) -> None:
        self.gates: dict[Path, Gate] = {}
        self.leases: dict[str, Callable[[], kernel.Lease]] = {}

    def gate(self, journal: str | os.PathLike[str]) -> Gate:
        path = Path(journal).resolve()
        if path not in self.gates:
            self.gates[path] = Gate(open_journal(path), {}, self.lease_of)
        return self.gates[path]

    def lease_of(self, lease_id: str) -> kernel.Lease:
        if lease_id not in self.leases:
            return kernel.Lease(lease_id, expires_at=0, revoked=True)  # unknown: no authority
        return self.leases[lease_id]()


REGISTRY = _Registry()


def effect(*, journal: str | os.PathLike[str], target: Service,
           lease: kernel.Lease | Callable[[], kernel.Lease],
           key: Callable[..., Any] | None = None,
           premises: Callable[..., Mapping[str, Any]] | None = None,
           timing: kernel.Timing | None = None,
           name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a plain function that calls a service into a gated effect.

    Calling the wrapped function proposes the effect (payload: its arguments by name; id:
    from ``key(**args)`` if given), checks ``premises(**args)`` against the service's facts
    and the lease, journals DISPATCHED, calls the function (with ``idempotency_key`` and
    ``deadline`` if it takes them), and returns the receipt. Returning normally is the
    acknowledgement; raising means no answer, which recovery resolves."""
    lease_now = lease if callable(lease) else (lambda: lease)

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        target_name = name or f"{fn.__module__}.{fn.__qualname__}"
        gate = REGISTRY.gate(journal)
        gate.targets[target_name] = _FunctionTarget(fn, target)
        lease_id = lease_now().id
        REGISTRY.leases[lease_id] = lease_now
        signature = inspect.signature(fn)

        def gated(*args: Any, **kwargs: Any) -> kernel.Receipt:
            bound = signature.bind_partial(*args, **kwargs)
            bound.apply_defaults()
            payload = {k: v for k, v in bound.arguments.items()
                       if k not in ("idempotency_key", "deadline")}
            proposal = kernel.Proposal(
                payload=payload, premises=dict(premises(**payload)) if premises else {},
                lease=lease_id, capabilities=target.capabilities,
                timing=timing or kernel.Timing(), key=key(**payload) if key else None,
                target=target_name)
            return gate.submit(proposal)

        gated.__wrapped__ = fn  # type: ignore[attr-defined]
        gated.__doc__, gated.__name__ = fn.__doc__, fn.__name__
        return gated
    return wrap


def recover(journal: str | os.PathLike[str]) -> list[kernel.Receipt]:
    """After a restart (with the decorated functions imported): settle every open effect."""
    return REGISTRY.gate(journal).recover()
