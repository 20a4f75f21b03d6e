"""Target tiers by capability, and the kernel timing every tier is validated against.

t1 = dedupes AND can be looked up (Stripe-like, the reference table's tier 1); t1d = dedupes
only; t2 = can be looked up only, with a lookup lag; t3 = neither.
"""

from __future__ import annotations

from faults.plans import DEDUP_MARGIN, DEDUP_WINDOW, SEND_TIMEOUT
from kernel import Capabilities, Timing

TIMING = Timing(send_timeout=SEND_TIMEOUT, settle_margin=1_000, dedup_margin=DEDUP_MARGIN)
TIERS: dict[str, Capabilities] = {
    "t1": Capabilities(dedupes=True, queryable=True, dedup_window=DEDUP_WINDOW, lookup_lag=200),
    "t1d": Capabilities(dedupes=True, queryable=False, dedup_window=DEDUP_WINDOW),
    "t2": Capabilities(dedupes=False, queryable=True, lookup_lag=500),
    "t3": Capabilities(dedupes=False, queryable=False),
}
TIER_NAMES = tuple(TIERS)


def capabilities(tier: str, lookup_lag: int | None) -> Capabilities:
    """The tier's capabilities, with the plan's lookup lag if it sets one."""
    caps = TIERS[tier]
    if lookup_lag is None or not caps.queryable:
        return caps
    return Capabilities(caps.dedupes, True, caps.dedup_window, lookup_lag)


for _caps in TIERS.values():
    TIMING.validate(_caps)
