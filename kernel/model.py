"""Values the kernel reasons about: states, target capabilities, timing, leases, proposals,
and the coordination of several units (claims, shared budgets, plan versions, verification).

Everything here is immutable. Time is an integer (milliseconds in the simulator); the kernel
never reads a clock, it is told the time inside each event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kernel.errors import ConfigError, KernelError
from kernel.identity import JSON, effect_id, payload_digest, recordable


class State(StrEnum):
    PROPOSED = "PROPOSED"
    AUTHORIZED = "AUTHORIZED"
    DISPATCHED = "DISPATCHED"
    LANDED = "LANDED"  # applied at a target that requires verification; not yet verified
    COMMITTED = "COMMITTED"
    REFUSED = "REFUSED"
    AMBIGUOUS = "AMBIGUOUS"

    @property
    def final(self) -> bool:
        return self in FINAL_STATES


FINAL_STATES = frozenset({State.COMMITTED, State.REFUSED, State.AMBIGUOUS})


class Executed(StrEnum):
    """What the target is known to have done: confirmed, provably not, or nobody can say."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a target can do for recovery.

    ``dedupes``: it deduplicates requests by idempotency key for ``dedup_window`` ms after
    the first application. ``queryable``: it can be asked whether an effect id landed, and a
    landed effect becomes visible to that lookup within ``lookup_lag`` ms.
    ``bounds_in_flight``: a request cannot land after some known time (the target drops it
    past its deadline, or delivery is bounded); false when the target states neither, and
    then waiting out a claim proves nothing (DESIGN.md §4, the in-flight bound). Journaled
    only when false, so journals of bounded targets read as before.
    """

    dedupes: bool
    queryable: bool
    dedup_window: int = 0
    lookup_lag: int = 0
    bounds_in_flight: bool = True

    def __post_init__(self) -> None:
        if self.dedupes and self.dedup_window <= 0:
            raise ConfigError("a deduplicating target must declare a positive dedup_window")
        if self.dedup_window < 0 or self.lookup_lag < 0:
            raise ConfigError("dedup_window and lookup_lag cannot be negative")

    @property
    def tier(self) -> int:
        """1 dedupes (maybe also queryable), 2 queryable only, 3 neither."""
        return 1 if self.dedupes else 2 if self.queryable else 3

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dedupes": self.dedupes, "queryable": self.queryable,
                               "dedup_window": self.dedup_window, "lookup_lag": self.lookup_lag}
        if not self.bounds_in_flight:
            out["bounds_in_flight"] = False
        return out


@dataclass(frozen=True, slots=True)
class Timing:
    """The kernel's own timing knobs, validated against a target's capabilities.

    ``send_timeout``: a send carries deadline = sent_at + send_timeout, after which the
    target must drop it. ``settle_margin``: after the deadline we also wait this long before
    trusting a lookup, so it must exceed the target's lookup lag. ``dedup_margin``: a
    tier-1 resend is only made while its key is surely still remembered, so it must exceed
    send_timeout + settle_margin.
    """

    send_timeout: int = 2_000
    settle_margin: int = 1_000
    dedup_margin: int = 5_000

    def validate(self, caps: Capabilities) -> None:
        if self.send_timeout <= 0 or self.settle_margin <= 0:
            raise ConfigError("send_timeout and settle_margin must be positive")
        if max(self.send_timeout, self.settle_margin, self.dedup_margin) > 2**40:
            raise ConfigError("send_timeout, settle_margin and dedup_margin must be times a "
                              "journal can add to a clock (at most 2^40 ms)")
        if caps.queryable and self.settle_margin <= caps.lookup_lag:
            raise ConfigError(
                f"settle_margin {self.settle_margin} must exceed the target's lookup lag "
                f"{caps.lookup_lag}, or a 'not found' is not evidence")
        if caps.dedupes and self.dedup_margin <= self.send_timeout + self.settle_margin:
            raise ConfigError(
                f"dedup_margin {self.dedup_margin} must exceed send_timeout + settle_margin "
                f"= {self.send_timeout + self.settle_margin}")
        if caps.dedupes and caps.dedup_window <= self.dedup_margin:
            raise ConfigError(f"dedup_window {caps.dedup_window} must exceed dedup_margin "
                              f"{self.dedup_margin}")

    def as_json(self) -> dict[str, Any]:
        return {"send_timeout": self.send_timeout, "settle_margin": self.settle_margin,
                "dedup_margin": self.dedup_margin}


@dataclass(frozen=True, slots=True)
class Lease:
    """Authority as observed at some moment: the lease id, when it ends, whether revoked."""

    id: str
    expires_at: int
    revoked: bool = False

    def __post_init__(self) -> None:
        """Refuse what no journal can record, before anything is journaled (a lease that
        never ends is a far time, not sys.maxsize: times are integers within +-(2^53-1))."""
        if type(self.expires_at) is not int or abs(self.expires_at) > _MAX_TIME \
                or type(self.id) is not str or type(self.revoked) is not bool:
            raise ConfigError(f"a lease needs a string id, an integer expires_at within "
                              f"+-(2^53-1) ms and a boolean revoked, not {self.id!r}, "
                              f"{self.expires_at!r}, {self.revoked!r}")

    def live(self, now: int) -> bool:
        return not self.revoked and now < self.expires_at


@dataclass(frozen=True, slots=True)
class Proposal:
    """An agent's approved decision, with the facts it relied on and the authority it uses."""

    payload: JSON
    premises: Mapping[str, JSON]
    lease: str
    capabilities: Capabilities
    timing: Timing = field(default_factory=Timing)
    key: JSON = None
    target: str = "target"
    coordination: Coordination | None = None
    effect_id: str = field(init=False)
    payload_digest: str = field(init=False)
    premise_names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    # The capabilities and timing as journaled, computed once (copied into each entry).
    recorded_setup: tuple[dict[str, Any], dict[str, Any]] = field(init=False, repr=False,
                                                                   compare=False)

    def __post_init__(self) -> None:
        if type(self.premises) is not dict and not isinstance(self.premises, Mapping):
            raise KernelError("premises must be a mapping of fact name to expected value")
        self.timing.validate(self.capabilities)
        memo = _memo_key(self)
        ids = _CHECKED.get(memo) if memo is not None else None
        if ids is None:
            recordable(dict(self.premises), self.lease, self.target)  # accepted = read back
            ids = effect_id(self.payload, self.key), payload_digest(self.payload)
            if memo is not None:
                if len(_CHECKED) >= _CHECKED_MAX:
                    _CHECKED.clear()  # bounded
                _CHECKED[memo] = ids
        object.__setattr__(self, "effect_id", ids[0])
        object.__setattr__(self, "payload_digest", ids[1])
        object.__setattr__(self, "premise_names", tuple(sorted(self.premises)))
        object.__setattr__(self, "recorded_setup",
                           (self.capabilities.as_json(), self.timing.as_json()))


# Proposals of flat values already checked and named: (payload, key, premises, lease,
# target) spelled member by member with each value's type -> (effect id, payload digest).
# A sweep proposes the same few decisions over and over; hashing them again is the cost.
_CHECKED: dict[tuple[Any, ...], tuple[str, str]] = {}
_CHECKED_MAX = 4_096


def _memo_key(p: Proposal) -> tuple[Any, ...] | None:
    """The memo key of a proposal's checked values: the members of its payload, premises and
    key (dicts of strings, ints, bools and None) beside the exact types of their values, its
    lease and target; None when they are not all that flat."""
    payload, premises, key = p.payload, p.premises, p.key
    if type(payload) is not dict or type(premises) is not dict or type(p.lease) is not str \
            or type(p.target) is not str or (key is not None and type(key) is not dict):
        return None
    kinds = (*map(type, payload.values()), *map(type, premises.values()),
             *(map(type, key.values()) if key is not None else ()))
    if not _FLAT.issuperset(kinds):
        return None
    return (tuple(payload.items()), tuple(premises.items()),
            None if key is None else tuple(key.items()), kinds, p.lease, p.target)


_FLAT = frozenset({str, int, bool, type(None)})


@dataclass(frozen=True, slots=True)
class Coordination:
    """What a unit of work takes part in beside its effect (DESIGN.md section 8).

    ``writes``: the items it claims (files, symbols, any key a target names) for ``ttl`` ms
    of journal time from its admission; ``reads``: items it relies on without claiming;
    ``cost`` reserved against the shared budget ``budget`` whose cap is ``cap`` (the
    smallest cap any unit declared for that budget holds); ``plan``/``plan_version``: the
    plan it belongs to (a newer version revokes its authority); ``verify``: the target
    requires a journaled passing verification before the effect commits.
    """

    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    ttl: int = 60_000
    budget: str | None = None
    cost: int = 0
    cap: int = 0
    plan: str | None = None
    plan_version: int = 0
    verify: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "writes", tuple(sorted(set(self.writes))))
        object.__setattr__(self, "reads", tuple(sorted(set(self.reads) - set(self.writes))))
        numbers = (self.ttl, self.cost, self.cap, self.plan_version)
        if any(type(n) is not int for n in numbers) or max(numbers) > 2**40:
            raise ConfigError("ttl, cost, cap and plan_version must be integers (at most 2^40: "
                              "a journal adds ttl to a clock)")
        if any(n is not None and type(n) is not str for n in (self.budget, self.plan)):
            raise ConfigError("a budget and a plan are named by strings (or None)")
        if self.ttl <= 0 or self.cost < 0 or self.cap < 0 or self.plan_version < 0:
            raise ConfigError("ttl must be positive; cost, cap and plan_version not negative")
        if self.budget is None and self.cost:
            raise ConfigError("a cost needs the name of the budget it is reserved against")

    def as_json(self) -> dict[str, Any]:
        return {"writes": list(self.writes), "reads": list(self.reads), "ttl": self.ttl,
                "budget": self.budget, "cost": self.cost, "cap": self.cap,
                "plan": self.plan, "plan_version": self.plan_version, "verify": self.verify}

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Coordination:
        """The record ``as_json`` writes; KernelError if a member is missing or unusable."""
        missing = [k for k in _COORDINATION_FIELDS if k not in v]
        if missing:
            raise KernelError(f"the coordination record lacks {', '.join(missing)}")
        try:
            return cls(writes=tuple(v["writes"]), reads=tuple(v["reads"]), ttl=v["ttl"],
                       budget=v["budget"], cost=v["cost"], cap=v["cap"], plan=v["plan"],
                       plan_version=v["plan_version"], verify=v["verify"])
        except TypeError as exc:
            raise KernelError(f"the coordination record is unusable: {exc}") from None


_COORDINATION_FIELDS = ("writes", "reads", "ttl", "budget", "cost", "cap", "plan",
                        "plan_version", "verify")


@dataclass(frozen=True, slots=True)
class Plan:
    """A plan's current version as the control plane reports it at a decision point."""

    id: str
    version: int


@dataclass(frozen=True, slots=True)
class Claim:
    """A unit's hold on one item: its fencing token is the seq of its admission entry."""

    item: str
    effect_id: str
    token: int
    until: int

    def live(self, now: int) -> bool:
        return now < self.until


@dataclass(frozen=True, slots=True)
class View:
    """The journal-wide state admission needs, folded from the journal by ``kernel.view``.

    ``claims``: item -> the last claim on it (live or expired: ask ``Claim.live``);
    ``reserved``/``spent``: budget -> total cost reserved (admitted and not released) and
    committed; ``caps``: budget -> the cap; ``plans``: plan -> the highest version any entry
    recorded; ``moved``: units that were sent and not proven unapplied (their landing may
    change what a reader relied on). Treat as read-only.
    """

    claims: Mapping[str, Claim] = field(default_factory=dict)
    reserved: Mapping[str, int] = field(default_factory=dict)
    spent: Mapping[str, int] = field(default_factory=dict)
    caps: Mapping[str, int] = field(default_factory=dict)
    plans: Mapping[str, int] = field(default_factory=dict)
    moved: frozenset[str] = frozenset()


_MISSING = object()  # a fact nobody observed: unequal to every JSON value
_MAX_TIME = 2**53 - 1  # the largest integer a journal records exactly


def _json_equal(a: object, b: object) -> bool:
    """JSON equality: Python's ``==`` (needed: equal JSON values compare equal) without its
    one mistake for JSON, true == 1 and false == 0, at any depth; 1 and 1.0 stay equal."""
    if a != b:
        return False
    ta, tb = type(a), type(b)
    if ta is tb and ta is not list and ta is not dict:
        return True
    if ta is bool or tb is bool:
        return False
    if isinstance(a, list) and isinstance(b, list):
        return all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_json_equal(v, b[k]) for k, v in a.items())
    return True  # an int and a float of the same value


def observed(p: Proposal, facts: Mapping[str, JSON]) -> tuple[dict[str, JSON], list[str]]:
    """The facts observed for each of ``p``'s premises (None where none was) and, as
    ``stale_premises`` names them, the stale premises: one pass over the sorted names."""
    premises, stale = p.premises, []
    seen: dict[str, JSON] = {}
    for name in p.premise_names:
        fact, want = facts.get(name, _MISSING), premises[name]
        if fact is _MISSING:
            seen[name] = None
            stale.append(name)
            continue
        seen[name] = fact
        kind = type(fact)  # two scalars of one type: == is JSON equality
        if not (fact == want if kind is type(want) and kind in _SCALARS
                else _json_equal(fact, want)):
            stale.append(name)
    return seen, stale


_SCALARS = frozenset((str, int, bool, float, type(None)))


def stale_premises(premises: Mapping[str, JSON], facts: Mapping[str, JSON]) -> list[str]:
    """Names of the premises that the observed facts no longer support (sorted), judged by
    JSON equality: a premise 1 is not supported by a fact true."""
    stale = [k for k, v in premises.items() if not _json_equal(facts.get(k, _MISSING), v)]
    if len(stale) > 1:
        stale.sort()
    return stale
