"""Hypothesis finds a small failing story for each baseline, and none for the kernel."""

from __future__ import annotations

import pytest

from faults.plans import FaultPlan
from sim import shrink


@pytest.mark.parametrize("system", ["naive", "idempotency", "durable"])
def test_each_baseline_has_a_shrunk_story(system):
    story = shrink.search(system)
    assert story["found"], system
    assert story["failing_tiers"] and story["reasons"]
    assert len(story["plan"]) <= 2, f"not shrunk: {story['summary']}"
    plan = FaultPlan.from_json(story["plan"])
    assert shrink.failing_tiers(system, plan) == story["failing_tiers"]
    assert story == shrink.search(system), "the search is not deterministic"


def test_the_kernel_has_no_failing_story():
    assert shrink.search("kernel") == {"system": "kernel", "found": False,
                                       "examples": shrink.MAX_EXAMPLES}
