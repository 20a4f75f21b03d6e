"""Target services by capability, with Stripe-like idempotency semantics.

How it works. ``receive`` is called when a request reaches the target. A target that honours
deadlines drops a request that arrives after its deadline (the kernel's claim depends on it,
or on a bounded delivery: see sim.world). A deduplicating
target stores each key with the digest of its parameters when it first applies it: the same
key and the same parameters get the stored answer again without a second application; the
same key with other parameters is an error; a key is forgotten ``dedup_window`` ms after it
was stored. A queryable target answers ``lookup(effect_id)``: found once an application
carrying that effect id is at least ``lookup_lag`` ms old. Every application is recorded
with the request that caused it: the measurements are made from this record alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernel import Capabilities


@dataclass(slots=True)
class Request:
    """One request as it left a worker."""

    system: str
    generation: int
    key: str | None
    payload: dict[str, Any]
    digest: str
    decision: str  # the scenario's decision key: applications of one decision are compared
    sent_at: int
    lease_live: bool  # was the lease live when it was sent (the measurement's ground truth)
    premises_hold: bool  # did the decision's premises hold then, excluding its own effect
    deadline: int | None = None
    effect_id: str | None = None
    attempt: int = 1
    reply: Any = None  # callable(Response) that carries the answer back, set by the network
    first: bool = False  # the run's first request (the one a slow send delays)
    arrived_at: int | None = None  # when it reached the target (None: still out, or lost)
    accepted: bool = False  # the target took it (applied or answered by key), not dropped
    worker: int = 0  # traces: the number of the worker that sent it (sim.world.Node.number)
    msg: int = 0  # traces: the message's number in the run (pairs send, arrival and answer)


@dataclass(frozen=True, slots=True)
class Response:
    kind: str  # "applied" | "deduplicated" | "conflict"
    ref: int = -1  # the application the answer refers to


@dataclass(slots=True)
class Application:
    request: Request
    at: int
    index: int


@dataclass(slots=True)
class Target:
    caps: Capabilities
    honours_deadline: bool = True  # drops a request that arrives after its deadline
    applications: list[Application] = field(default_factory=list)
    keys: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # key -> digest, at, ref
    by_effect: dict[str, int] = field(default_factory=dict)  # effect id -> first applied at
    deadline_of: dict[str, int] = field(default_factory=dict)  # ... and that request's deadline

    def receive(self, req: Request, now: int) -> Response | None:
        """Handle an arriving request: None when dropped, else the answer to send back."""
        if self.honours_deadline and req.deadline is not None and now > req.deadline:
            return None
        if self.caps.dedupes and req.key is not None:
            stored = self.keys.get(req.key)
            if stored is not None and now - stored[1] >= self.caps.dedup_window:
                del self.keys[req.key]
                stored = None
            if stored is not None:
                kind = "deduplicated" if stored[0] == req.digest else "conflict"
                return Response(kind, stored[2])
        ref = len(self.applications)
        self.applications.append(Application(req, now, ref))
        if req.key is not None and self.caps.dedupes:
            self.keys[req.key] = (req.digest, now, ref)
        if req.effect_id is not None and req.effect_id not in self.by_effect:
            self.by_effect[req.effect_id] = now
            self.deadline_of[req.effect_id] = req.deadline if req.deadline is not None else now
        return Response("applied", ref)

    def lag_matters(self, effect_id: str, now: int) -> bool:
        """The lookup lag bites: the effect is applied but hidden now, or it landed so close
        to its request's deadline that a lookup made at the deadline would have missed it."""
        at = self.by_effect.get(effect_id)
        if at is None or not self.caps.lookup_lag:
            return False
        return now < at + self.caps.lookup_lag or \
            at + self.caps.lookup_lag > self.deadline_of[effect_id]

    def lookup(self, effect_id: str, now: int) -> bool:
        """Whether a lookup arriving now sees the effect (only for queryable targets)."""
        at = self.by_effect.get(effect_id)
        return at is not None and at + self.caps.lookup_lag <= now
