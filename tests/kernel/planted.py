"""Planted bugs in a copy of the kernel, for the tests that show a judge catches them.

``plant`` copies kernel/ into a folder and replaces one exact snippet (a changed kernel makes
the planting fail loudly); ``drive`` runs a driver script over every copy in one subprocess
(each copy imported in turn from its own folder) and returns the cells each copy wrote, by
bug name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernel import invariants

ROOT = Path(__file__).resolve().parents[2]
Bug = tuple[str, str, str, set[str]]  # file, snippet, replacement, invariants expected


def plant(base: Path, name: str, bug: Bug | None) -> Path:
    copy = base / name.replace(" ", "_").replace("'", "")[:40]
    shutil.copytree(ROOT / "kernel", copy / "kernel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if bug is not None:
        path = copy / "kernel" / bug[0]
        text = path.read_text(encoding="utf-8")
        assert text.count(bug[1]) == 1, f"the kernel changed: cannot plant '{name}'"
        path.write_text(text.replace(bug[1], bug[2]), encoding="utf-8")
    return copy


def drive(base: Path, bugs: dict[str, Bug], driver: str) -> dict[str, list[dict[str, Any]]]:
    """bug name (or "unmodified") -> the cells the driver printed for that kernel copy."""
    copies = {"unmodified": plant(base, "unmodified", None)}
    copies.update({name: plant(base, name, bug) for name, bug in bugs.items()})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", driver, *map(str, copies.values())], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    by_copy = {doc["copy"]: doc["cells"] for doc in map(json.loads, out.stdout.splitlines())}
    return {name: by_copy[str(path)] for name, path in copies.items()}


def flagged(cells: list[dict[str, Any]],
            where: Callable[[dict[str, Any]], str]) -> dict[str, list[str]]:
    """invariant -> "<where the cell is>: <explanation>" for every violation the independent
    layer (the repository's own kernel.invariants, never a planted copy's) finds in the cells."""
    found: dict[str, list[str]] = {}
    for cell in cells:
        for v in invariants.check(cell["entries"], cell["history"], complete=True):
            found.setdefault(v.invariant, []).append(f"{where(cell)}: {v.explanation}")
    return found
