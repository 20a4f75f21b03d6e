"""Target services by capability, with Stripe-like idempotency semantics.

How it works. ``receive`` is called when a request reaches the target. A request with a
deadline that arrives after it is dropped (the kernel's claim depends on it). A deduplicating
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
    applications: list[Application] = field(default_factory=list)
    keys: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # key -> digest, at, ref
    by_effect: dict[str, int] = field(default_factory=dict)  # effect id -> first applied at

    def receive(self, req: Request, now: int) -> Response | None:
        """Handle an arriving request: None when dropped, else the answer to send back."""
        if req.deadline is not None and now > req.deadline:
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
        if req.effect_id is not None:
            self.by_effect.setdefault(req.effect_id, now)
        return Response("applied", ref)

    def lookup(self, effect_id: str, now: int) -> bool:
        """Whether a lookup arriving now sees the effect (only for queryable targets)."""
        at = self.by_effect.get(effect_id)
        return at is not None and at + self.caps.lookup_lag <= now
