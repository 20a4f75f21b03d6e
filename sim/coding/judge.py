"""The independent judge of a coding run: harm read from the repository and the world.

How it works. Nothing here asks a system what it did. From the final tree: do the reference
tests pass (the tests as the planner and the world wrote them, run by this module's own
runner, so an agent that edits a test cannot make it pass), is any name defined twice, was a
reference test edited. From the target's landing record and the world's timelines: did a
write leave while its agent's lease was revoked or over, or after its plan was superseded;
did a write land after a later-assigned owner of the same work had landed and not been
undone (a stale owner);
did the landings spend more than the shared budget. Availability: a unit that did not land
although its agent kept its authority, its plan stayed current, the budget had room, nobody
else implemented its work, and its patch applied to the final tree passes the reference
tests, was refused for no reason. "Its patch applied" is this module's own reading of a
patch (``expected``, written from DESIGN.md section 8, not the systems' merge), so a bug in
the systems' merge that breaks every change cannot also excuse refusing it. For
kernel-driven systems, what the journal claims (a final COMMITTED, or REFUSED with
``executed: false``, read off the entries here, not through the kernel's replay) is compared
with the landing record (``dishonest``), units left open are counted (``unresolved``) and the
journal is given to ``kernel.invariants.check_units`` (G1, G2, G5, G6 limited, G7, G8).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from kernel import invariants
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
            undone = any(u == other.name and at <= landing.at for u, at in story.restored)
            if other.work == unit.work and other.name != unit.name and not undone and \
                    arrivals.get(other.name, 0) > arrivals.get(unit.name, 0):
                found["stale_owner_write"].append(unit.name)
    if story.plan.cap is not None and story.spent() > story.plan.cap:
        found["over_budget"].append(f"spent {story.spent()} of {story.plan.cap}")
    if any(e.get("kind") == "PROPOSED" for e in run.disk.entries if e):
        found["dishonest"] += _dishonest(run)
        found["unresolved"] += [j.unit.name for j in run.jobs if not j.done]
        found["journal_breach"] += [f"{v.invariant}: {v.explanation}" for v in
                                    invariants.check_units([e for e in run.disk.entries if e])]
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


def claims(entries: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Effect id -> (final kind, executed) as the journal states it: its first final entry."""
    out: dict[str, tuple[str, str]] = {}
    for e in entries:
        if e["kind"] in ("COMMITTED", "REFUSED", "AMBIGUOUS") and e["effect_id"] not in out:
            out[e["effect_id"]] = (e["kind"], str(e.get("executed", "")))
    return out


def _dishonest(run: Any) -> list[str]:
    story = run.story
    landed = {landing.effect_id for landing in story.landings}
    undone = {u for u, _ in story.restored}
    out = []
    for eid, (final, executed) in claims([e for e in run.disk.entries if e]).items():
        change = story.changes.get(eid)
        if change is None:
            continue
        if final == "REFUSED" and executed == "false" and eid in landed:
            out.append(f"{change.unit}: receipt says never applied, the target applied it")
        if final == "COMMITTED" and (eid not in landed or change.unit in undone):
            out.append(f"{change.unit}: COMMITTED but not in the repository")
    return out


def expected(tree: dict[str, str], ops: Any) -> dict[str, str]:
    """The tree after a unit's patch, read the plain way: ``put`` writes a whole file,
    ``add`` appends a definition after the file's text, ``replace`` swaps the top-level
    definition of ``name`` (from its ``def``/``class`` line to the last line before the next
    unindented one), appending it when there is none, ``rename`` replaces the whole word
    ``old``, ``sub`` replaces the text ``old``."""
    out = dict(tree)
    for op in ops:
        path, kind = op["path"], op["op"]
        text = out.get(path, "")
        if kind == "put":
            text = op["text"]
        elif kind == "rename":
            text = re.sub(r"\b" + re.escape(op["old"]) + r"\b", op["new"], text)
        elif kind == "sub":
            text = text.replace(op["old"], op["new"])
        elif kind == "replace" and (block := _block(text, op["name"])):
            lines = text.split("\n")
            first, last = block
            text = "\n".join(lines[:first] + op["code"].rstrip("\n").split("\n") + lines[last:])
        elif kind in ("add", "replace"):
            text = (text.rstrip("\n") + "\n\n\n" if text.strip() else "") + op["code"]
        else:
            raise ValueError(f"the judge does not know the patch op {kind!r}")
        out[path] = text
    return out


def _block(text: str, name: str) -> tuple[int, int] | None:
    """Lines [first, last) of the top-level definition of ``name`` in ``text``."""
    lines = text.split("\n")
    head = re.compile(r"(?:async\s+def|def|class)\s+" + re.escape(name) + r"\b")
    for first, line in enumerate(lines):
        if head.match(line):
            last = first + 1
            for n in range(first + 1, len(lines)):
                if lines[n].strip() and not lines[n][0].isspace():
                    break
                if lines[n].strip():
                    last = n + 1
            return first, last
    return None


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
        after = expected(tree, unit.ops)
        if passes({**code_of(after), **story.reference}) and not defined_twice(after):
            lost.append(name)
    return lost
