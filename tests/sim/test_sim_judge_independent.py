"""The sweep's judgment imports and calls none of the kernel's decision code.

Two checks. Statically: walking the import statements of the judgment modules, and of every
project module they import in turn, finds no decision module (``kernel.machine``,
``kernel.recovery``, ``kernel.oracle``, ``kernel.receipts``, ``kernel.reexecute``, the
conformance harness) and no decision function taken from ``kernel`` (``step``, ``decide``,
``replay``...); a package's ``__init__`` is not followed (its re-exported data types, such
as the event classes, are allowed; its decision functions are checked by name). At run
time: after seeded kernel runs have finished, those functions are replaced by ones that
raise, and judging the same runs again gives the same verdicts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kernel
import kernel.machine
import kernel.oracle
import kernel.receipts
import kernel.recovery
from faults.plans import plan_from_seed
from faults.systems import SYSTEMS
from sim.measure import measure
from sim.world import simulate

ROOT = Path(__file__).resolve().parents[2]
JUDGMENT = ("sim.judge", "sim.measure", "spec.conformance.trace", "kernel.invariants")
FORBIDDEN_MODULES = {"kernel.machine", "kernel.recovery", "kernel.oracle", "kernel.receipts",
                     "kernel.reexecute", "spec.conformance.harness", "spec.conformance.bisim"}
FORBIDDEN_NAMES = {"step", "decide", "replay", "apply_entry", "proposal_of", "Effects",
                   "TRANSITIONS", "stale_premises", "receipts", "receipt", "dedup_open",
                   "oracle", "machine", "recovery", "reexecute"}
PROJECT = ("kernel", "sim", "spec", "faults")


def module_file(name: str) -> Path | None:
    path = ROOT / Path(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def offences(path: Path) -> tuple[list[str], set[str]]:
    """(what this file takes from decision code, project modules it imports)."""
    bad, deps = [], set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                deps.add(alias.name)
                if alias.name in FORBIDDEN_MODULES:
                    bad.append(f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if node.module in FORBIDDEN_MODULES or full in FORBIDDEN_MODULES or \
                        (node.module == "kernel" and alias.name in FORBIDDEN_NAMES):
                    bad.append(f"from {node.module} import {alias.name}")
                deps.add(full if module_file(full) else node.module)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "kernel" and node.attr in FORBIDDEN_NAMES:
            bad.append(f"kernel.{node.attr}")
    return bad, {d for d in deps if d.split(".")[0] in PROJECT}


def decision_code_reached(roots: tuple[str, ...]) -> list[str]:
    seen, todo, found = set(), list(roots), []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        if path is None or (path.name == "__init__.py" and name not in roots):
            continue  # a package's re-exports: what is taken from it is checked by name
        bad, deps = offences(path)
        found += [f"{name}: {b}" for b in bad]
        todo += sorted(deps - seen)
    return sorted(found)


def test_judgment_modules_import_no_decision_code():
    assert decision_code_reached(JUDGMENT) == []


def test_the_walk_notices_a_decision_import(tmp_path):
    for line in ("from kernel.machine import step", "from kernel import replay",
                 "import kernel.recovery", "from kernel import oracle"):
        (tmp_path / "judgy.py").write_text(f"import kernel\n{line}\n")
        assert offences(tmp_path / "judgy.py")[0], line
    (tmp_path / "judgy.py").write_text("import kernel\nx = kernel.step\n")
    assert offences(tmp_path / "judgy.py")[0] == ["kernel.step"]


def _poison(*_: object, **__: object) -> None:
    raise AssertionError("the judgment called the kernel's decision code")


@pytest.mark.parametrize("tier", ["t1", "t1d", "t2", "t3"])
def test_judging_never_calls_decision_code(tier, monkeypatch):
    runs = [simulate(plan_from_seed(s), SYSTEMS["kernel"], tier, s) for s in range(40)]
    before = [measure(r) for r in runs]
    for module, names in ((kernel.machine, ("step", "replay", "apply_entry", "proposal_of")),
                          (kernel.recovery, ("decide", "dedup_open")),
                          (kernel.oracle, ("check",)), (kernel.receipts, ("receipts",)),
                          (kernel, ("step", "replay", "receipts"))):
        for name in names:
            if hasattr(module, name):
                monkeypatch.setattr(module, name, _poison)
    after = [measure(r) for r in runs]
    strip = [{k: v for k, v in m.items() if k != "kernel"} for m in before]
    assert [{k: v for k, v in m.items() if k != "kernel"} for m in after] == strip
