"""The refund story: the first scenario plugged into the world.

How it works. A customer paid $100 on order 881; support case 4471 approves one $20 partial
refund; an agent (the model) decides the amount and the system under test carries it out.
The scenario supplies what is specific to it: the jobs submitted, the agent's decision (it
may re-decide on a re-run), the facts a decision relies on, what an application does to the
world, the world events (support refunds by hand, the approval is withdrawn) and what counts
as harm. Another scenario (parallel coding agents on one repository) plugs in the same way.

Which facts the decision relies on is a knob (``plan.premises``): "touched" includes the
order's refunded total, which the refund itself moves (so a target that cannot attribute our
own refund leaks whether it landed); "untouched" relies only on facts the refund never moves
(the approval, the order's payment, a customer hold), so no premise reveals the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from faults.plans import FaultPlan

ORDER, CASE, PAID, APPROVED = 881, 4471, 100, 20
DECISION = f"order-{ORDER}/case-{CASE}"


@dataclass(slots=True)
class Job:
    """One submission of a request to the system under test."""

    id: int
    at: int
    amount: int
    kind: str  # "original" | "duplicate" | "conflicting"
    arrived: bool = False
    done: bool = False
    outcome: str = ""
    done_at: int | None = None
    payload: dict[str, Any] | None = None  # what the agent last decided for it


class RefundStory:
    name = "refund"
    approved = APPROVED

    def __init__(self) -> None:
        self.hand = 0  # refunded by support, by hand
        self.approval = APPROVED  # what case 4471 approves now
        self.system_total = 0
        self.own: dict[str, int] = {}  # decision or effect id -> amount applied for it
        self.first_payload: dict[str, dict[str, Any]] = {}
        self.first_premises: dict[str, dict[str, Any]] = {}
        self.touched = True  # the premises include the refunded total
        self.hold = False  # the customer's account is on hold (a premise the refund never moves)
        self.hold_reported = "bool"  # how the fact source reports it: "bool", "int", "none"

    def configure(self, plan: FaultPlan) -> None:
        self.touched = plan.premises == "touched"

    # ---------------------------------------------------------------- jobs and decisions

    @staticmethod
    def jobs(plan: FaultPlan) -> list[Job]:
        jobs = [Job(0, 0, APPROVED, "original")]
        for _ in range(plan.duplicate_submits):
            jobs.append(Job(len(jobs), plan.duplicate_at, APPROVED, "duplicate"))
        if plan.conflicting_amount is not None:
            jobs.append(Job(len(jobs), plan.duplicate_at, plan.conflicting_amount, "conflicting"))
        return jobs

    @staticmethod
    def decision(job: Job) -> str:
        return DECISION

    @staticmethod
    def decision_of(payload: dict[str, Any]) -> str:
        return f"order-{payload['order']}/case-{payload['case']}"

    @staticmethod
    def key(job: Job) -> dict[str, int]:
        """The decision key the kernel names the effect by."""
        return {"case": CASE, "order": ORDER}

    @staticmethod
    def payload(job: Job, amount: int) -> dict[str, int]:
        return {"amount": amount, "case": CASE, "order": ORDER}

    def decide(self, job: Job, rerun: bool, plan: FaultPlan) -> dict[str, Any]:
        """The model's decision as a payload: the job's amount, unless it re-decides."""
        amount = job.amount
        if rerun and plan.redecide_amount is not None and job.kind == "original":
            amount = plan.redecide_amount
        payload = self.payload(job, amount)
        decision = self.decision(job)
        if decision not in self.first_payload:
            self.first_payload[decision] = payload
            self.first_premises[decision] = self.facts()
        return payload

    @staticmethod
    def describe(payload: dict[str, Any]) -> str:
        return f"refund ${payload['amount']}"

    # ---------------------------------------------------------------- facts

    def facts(self, exclude: str | None = None) -> dict[str, Any]:
        """The world now; ``exclude`` removes one decision's (or effect's) own refunds."""
        facts: dict[str, Any] = {"case_4471.approves": self.approval, "order_881.paid": PAID}
        if self.hold_reported != "none":
            facts["customer.hold"] = self.hold if self.hold_reported == "bool" else int(self.hold)
        if self.touched:
            own = self.own.get(exclude, 0) if exclude is not None else 0
            facts["order_881.refunded"] = self.hand + self.system_total - own
        return facts

    def premises_hold(self, decision: str) -> bool:
        """Ground truth: the first decision's premises hold, its own refunds excluded, by
        JSON equality (a fact of another JSON type, 0 for false, is another fact)."""
        first = self.first_premises.get(decision)
        return first is None or _json(self.facts(decision)) == _json(first)

    # ---------------------------------------------------------------- world changes

    def on_apply(self, payload: dict[str, Any], decision: str, effect_id: str | None) -> None:
        amount = payload["amount"]
        self.system_total += amount
        self.own[decision] = self.own.get(decision, 0) + amount
        if effect_id is not None:
            self.own[effect_id] = self.own.get(effect_id, 0) + amount

    def world_event(self, name: str) -> str | None:
        """Apply a world event; returns its label, or None if nothing changed."""
        if name == "manual_refund":
            if self.hand + self.system_total:
                return None  # support looks first: a refund is already on the order
            self.hand += APPROVED
            return f"support refunds ${APPROVED} on order {ORDER} by hand"
        if name == "withdraw_approval":
            self.approval = 0
            return f"case {CASE} approval withdrawn"
        if name == "hold_customer":
            self.hold = True
            return "the customer's account is put on hold"
        if name == "hide_fact":
            self.hold_reported = "none"
            return "the fact source stops reporting customer.hold"
        if name == "retype_fact":
            self.hold_reported = "int"
            return "the fact source reports customer.hold as an integer (0 or 1)"
        return None

    @property
    def refunded(self) -> int:
        return self.hand + self.system_total

    # ---------------------------------------------------------------- harm

    def conflicts(self, payload: dict[str, Any], decision: str) -> bool:
        """Whether an applied payload differs from the decision's first one."""
        return payload != self.first_payload.get(decision)

    def metrics(self) -> dict[str, int]:
        return {"approved": self.approved, "refunded": self.refunded,
                "by_system": self.system_total, "by_hand": self.hand}

    def overreached(self) -> bool:
        """More refunded than approved (by whoever)."""
        return self.refunded > self.approved


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
