"""The shrinker: the smallest fault plan that makes each system fail, found by Hypothesis.

How it works. ``plans()`` is a Hypothesis strategy over fault plans whose simplest values are
the happy path (no crash, no world event, no extra submission, default network), so
shrinking walks towards the shortest story. ``search(system)`` asks ``hypothesis.find`` for a
plan under which the system violates something at any tier (derandomized, no example
database, bounded examples, world seed fixed), and returns the shrunk plan with its traced
failing run. For the kernel the same search must find nothing. Results are written to
``shrunk.json`` and ``shrunk.md`` with the command that replays each story.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from faults.plans import CRASH_POINTS, WORLD_EVENTS, FaultPlan
from faults.systems import SYSTEM_NAMES, SYSTEMS
from sim import report, trace
from sim.measure import measure
from sim.tiers import TIER_NAMES
from sim.world import simulate

SEED = 0  # the world's seed for every plan the search tries
MAX_EXAMPLES = 400
SETTINGS = settings(max_examples=MAX_EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck),
                    phases=(Phase.generate, Phase.shrink))


def _events() -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(WORLD_EVENTS), unique=True, max_size=2).map(
        lambda xs: tuple(sorted(xs, key=WORLD_EVENTS.index)))


def plans() -> st.SearchStrategy[FaultPlan]:
    return st.builds(
        FaultPlan,
        name=st.just("shrunk"),
        crash=st.sampled_from((None, *CRASH_POINTS)),
        crash_delay=st.integers(0, 3_000),
        torn=st.booleans(),
        outage=st.sampled_from((1_000, 200, 10_000, 70_000)),
        recoverers=st.integers(1, 2),
        recrash=st.sampled_from((None, *CRASH_POINTS)),
        before_dispatch=_events(),
        during_outage=_events(),
        duplicate_submits=st.integers(0, 2),
        duplicate_at=st.sampled_from((20, 0, 3_000)),
        conflicting_amount=st.sampled_from((None, 25)),
        redecide_amount=st.sampled_from((None, 30)),
        slow_send=st.sampled_from((0, 1_800, 2_600, 6_000)),
        ack_lost=st.booleans(),
        late_ack=st.sampled_from((0, 3_000)),
        lookup_lag=st.sampled_from((None, 900)),
        net_latency=st.sampled_from((40, 1, 200)),
        net_jitter=st.sampled_from((0, 150)),
    )


def failing_tiers(system: str, plan: FaultPlan) -> list[str]:
    return [t for t in TIER_NAMES if not measure(simulate(plan, SYSTEMS[system], t, SEED))["ok"]]


def search(system: str) -> dict[str, Any]:
    """The smallest failing story of one system, or ``found: False``."""
    try:
        plan = find(plans(), lambda p: bool(failing_tiers(system, p)), settings=SETTINGS)
    except NoSuchExample:
        return {"system": system, "found": False, "examples": MAX_EXAMPLES}
    tiers = failing_tiers(system, plan)
    run = simulate(plan, SYSTEMS[system], tiers[0], SEED, trace=True)
    doc = trace.build(run, measure(run), "shrunk", None, None)
    fields = {k: v for k, v in plan.as_json().items()
              if k != "name" and v != FaultPlan().as_json()[k]}
    return {"system": system, "found": True, "plan": fields, "summary": plan.summary(),
            "failing_tiers": tiers, "reasons": doc["reasons"], "refunded": doc["refunded"],
            "command": command(fields, system, tiers[0]), "timeline": trace.timeline(doc)}


def command(fields: dict[str, Any], system: str, tier: str) -> str:
    plan = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return f"python run_all.py --plan '{plan}' --system {system} --tier {tier}"


def run(pool: Any, out: Path, say: Any) -> dict[str, Any]:
    from sim.parallel import map_ordered

    stories = map_ordered(pool, search, list(SYSTEM_NAMES), chunksize=1)
    for s in stories:
        if s["found"]:
            say(f"      {s['system']:<12} fails ({', '.join(s['reasons'])}) at "
                f"{', '.join(s['failing_tiers'])} with: {s['summary']}")
            say(f"      {'':<12} {s['command']}")
        else:
            say(f"      {s['system']:<12} no failing plan in {s['examples']} examples")
    report.write_json(out / "shrunk.json", {"seed": SEED, "max_examples": MAX_EXAMPLES,
                                            "stories": stories})
    report.write_text(out / "shrunk.md", markdown(stories))
    kernel = [s for s in stories if s["system"] == "kernel" and s["found"]]
    return {"kernel_found": len(kernel), "stories": stories}


def markdown(stories: list[dict[str, Any]]) -> str:
    out = ["# Smallest failing story per system", "",
           f"Hypothesis (derandomized, {MAX_EXAMPLES} examples, world seed {SEED}) searched "
           "fault plans for one under which the system violates something at any tier, and "
           "shrank it towards the happy path. The kernel must have none.", ""]
    for s in stories:
        out.append(f"## {s['system']}")
        out.append("")
        if not s["found"]:
            out += [f"No failing plan found in {s['examples']} examples.", ""]
            continue
        out += [f"- plan: {s['summary']}", f"- fails at: {', '.join(s['failing_tiers'])} "
                f"({', '.join(s['reasons'])}); refunded ${s['refunded']} at "
                f"{s['failing_tiers'][0]}", f"- replay: `{s['command']}`", "", "```",
                s["timeline"], "```", ""]
    return "\n".join(out)
