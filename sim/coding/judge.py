"""The independent judge of a coding run: harm read from the repository and the world.

How it works. Nothing here asks a system what it did. From the final tree: do the reference
tests pass (the tests as the planner and the world wrote them, run by this module's own
runner, so an agent that edits a test cannot make it pass), is any name defined twice, was a
reference test edited. From the target's landing record and the world's timelines: did a
write leave while its agent's lease was revoked or over, or after its plan was superseded;
did a write land after a later-assigned owner of the same work had landed (a stale owner);
did the landings spend more than the shared budget. Availability: a unit that did not land
although its agent kept its authority, its plan stayed current, the budget had room, nobody
else implemented its work, and its patch merged onto the final tree passes the reference
tests, was refused for no reason. For kernel-driven systems, receipts are compared with the
landing record (``dishonest``), units left open are counted (``unresolved``) and the journal
is given to ``kernel.guarantees.judge`` (G1, G2, G5, G6 limited, G7, G8 over the entries).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import kernel
from kernel import guarantees
from sim.coding.model import merge
from sim.coding.story import UNITS

HARMS = ("broken_tree", "implemented_twice", "test_edited", "revoked_lease_write",
         "superseded_plan_write", "stale_owner_write", "over_budget", "dishonest",
         "unresolved", "journal_breach", "driver_error")
_DEF = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.M)
_PASSES: dict[frozenset[tuple[str, str]], bool] = {}


def tests_pass(files: dict[str, str]) -> bool:
    """The reference tests against the code: True when every test function returns."""
    key = frozenset(files.items())
    if key not in _PASSES:
        _PASSES[key] = _execute(files)
    return _PASSES[key]


def _execute(files: dict[str, str]) -> bool:
    import builtins
    import types

    loaded: dict[str, types.ModuleType] = {}
    real_import = builtins.__import__

    def importer(name: str, *args: Any, **kwargs: Any) -> Any:
        source = files.get(name + ".py")
        if source is None:
            return real_import(name, *args, **kwargs)
        if name not in loaded:
            module = types.ModuleType(name)
            loaded[name] = module
            module.__dict__["__builtins__"] = scope
            exec(compile(source, name + ".py", "exec"), module.__dict__)  # noqa: S102
        return loaded[name]

    scope = dict(vars(builtins), __import__=importer)
    try:
        for path in sorted(files):
            if re.fullmatch(r"test_\w+\.py", path):
                module = importer(path[:-3])
                for name in sorted(vars(module)):
                    if name.startswith("test_"):
                        getattr(module, name)()
    except BaseException:  # noqa: BLE001 - a failing test, whatever it raises
        return False
    return True


def code_of(tree: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in tree.items() if not p.startswith("test_")}


def defined_twice(tree: dict[str, str]) -> list[str]:
    names = Counter(n for p, t in sorted(code_of(tree).items()) if p.endswith(".py")
                    for n in _DEF.findall(t))
    return sorted(n for n, k in names.items() if k > 1)


def judge(run: Any, passes: Any = None) -> dict[str, Any]:
    """The run's harms and availability; ``passes(files)`` runs the reference tests
    (default: this module's runner; the real table passes one that runs pytest)."""
    passes = passes or tests_pass
    story = run.story
    tree = story.repo.tree()
    ref = story.reference
    found: dict[str, list[str]] = {h: [] for h in HARMS}
    if not passes({**code_of(tree), **ref}):
        found["broken_tree"].append("the reference tests fail on the final tree")
    found["implemented_twice"] += defined_twice(tree)
    found["test_edited"] += [p for p in sorted(ref) if tree.get(p) != ref[p]]
    arrivals = _arrivals(run)
    for n, landing in enumerate(story.landings):
        unit = UNITS[landing.unit]
        if not story.lease_live(unit.agent, landing.sent_at):
            found["revoked_lease_write"].append(unit.name)
        if story.plan_version(unit.plan, landing.sent_at) > \
                story.plan_version(unit.plan, arrivals.get(unit.name, 0)):
            found["superseded_plan_write"].append(unit.name)
        for earlier in story.landings[:n]:
            other = UNITS[earlier.unit]
            if other.work == unit.work and other.name != unit.name and \
                    arrivals.get(other.name, 0) > arrivals.get(unit.name, 0):
                found["stale_owner_write"].append(unit.name)
    if story.plan.cap is not None and story.spent() > story.plan.cap:
        found["over_budget"].append(f"spent {story.spent()} of {story.plan.cap}")
    if any(e.get("kind") == "PROPOSED" for e in run.disk.entries if e):
        found["dishonest"] += _dishonest(run)
        found["unresolved"] += [j.unit.name for j in run.jobs if not j.done]
        found["journal_breach"] += [f"{b.guarantee} at seq {b.seq}: {b.explanation}" for b in
                                    guarantees.judge([e for e in run.disk.entries if e])]
    found["driver_error"] += list(run.errors) + list(run.alerts)
    harms = [h for h in HARMS if found[h]]
    lost = refused_for_no_reason(run, arrivals, passes)
    return {"harms": harms, "details": {h: found[h] for h in harms}, "lost": lost,
            "ok": not harms and not lost, "spent": story.spent(),
            "landed": sorted(_landed(story)), "tree_passes": not found["broken_tree"]}


def _arrivals(run: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for job in run.jobs:
        out.setdefault(job.unit.name, job.at)
    return out


def _landed(story: Any) -> set[str]:
    undone = {u for u, _ in story.restored}
    return {landing.unit for landing in story.landings} - undone


def _dishonest(run: Any) -> list[str]:
    story = run.story
    landed = {landing.effect_id for landing in story.landings}
    undone = {u for u, _ in story.restored}
    out = []
    for r in kernel.receipts([e for e in run.disk.entries if e]):
        change = story.changes.get(r.effect_id)
        if change is None:
            continue
        if r.executed == "false" and r.effect_id in landed:
            out.append(f"{change.unit}: receipt says never applied, the target applied it")
        if r.final == "COMMITTED" and (r.effect_id not in landed or change.unit in undone):
            out.append(f"{change.unit}: COMMITTED but not in the repository")
    return out


def refused_for_no_reason(run: Any, arrivals: dict[str, int], passes: Any) -> list[str]:
    story = run.story
    tree = story.repo.tree()
    landed = _landed(story)
    lost = []
    for name, at in sorted(arrivals.items(), key=lambda kv: kv[1]):
        unit = UNITS[name]
        if name in landed or any(UNITS[u].work == unit.work for u in landed):
            continue
        if unit.agent in story.revoked or unit.agent in story.expires:
            continue
        if story.plan_version(unit.plan, 10**12) > story.plan_version(unit.plan, at):
            continue
        if story.plan.cap is not None and story.spent() + unit.cost > story.plan.cap:
            continue
        if any(op["op"] == "put" and op["path"] in story.reference for op in unit.ops):
            continue
        after = {**tree, **{p: t for p, t in merge(tree, list(unit.ops)).items()
                            if t is not None}}
        if passes({**code_of(after), **story.reference}) and not defined_twice(after):
            lost.append(name)
    return lost
