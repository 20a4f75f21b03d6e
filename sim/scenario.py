"""What a scenario plugs into the world: the target's meaning, the agent, world events, harm.

How it works. The world (sim.world) is generic: clock, network, disk, target semantics by
tier, crashes, leases. A scenario says what the requests mean. The refund story
(sim.refund) is the first; a second one (parallel coding agents changing one repository,
with file-hash premises and claims) implements the same protocol: jobs to submit, the
agent's decision as a payload (possibly re-decided on a re-run), the decision key that
names an effect, the facts a decision relies on (optionally excluding one decision's or
effect's own contribution), what an application does, world events, and the harm metrics.
"""

from __future__ import annotations

from typing import Any, Protocol

from faults.plans import FaultPlan


class Scenario(Protocol):
    name: str

    def jobs(self, plan: FaultPlan) -> list[Any]: ...

    def decision(self, job: Any) -> str: ...

    def decision_of(self, payload: dict[str, Any]) -> str: ...

    def key(self, job: Any) -> Any: ...

    def decide(self, job: Any, rerun: bool, plan: FaultPlan) -> dict[str, Any]: ...

    def describe(self, payload: dict[str, Any]) -> str: ...

    def facts(self, exclude: str | None = None) -> dict[str, Any]: ...

    def premises_hold(self, decision: str) -> bool: ...

    def on_apply(self, payload: dict[str, Any], decision: str, effect_id: str | None) -> None: ...

    def world_event(self, name: str) -> str | None: ...

    def conflicts(self, payload: dict[str, Any], decision: str) -> bool: ...

    def metrics(self) -> dict[str, int]: ...

    def overreached(self) -> bool: ...
