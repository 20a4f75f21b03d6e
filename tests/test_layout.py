"""Project rules that code review would otherwise have to remember.

- kernel/ is pure: it imports only the standard library's pure modules and rfc8785 (the
  __main__ command line may read files). Checked by walking every import statement.
- The layout of DESIGN.md section 3 is visible in the tree.
- ruff is clean everywhere; mypy --strict is clean on kernel/.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {"__future__", "collections", "dataclasses", "enum", "hashlib", "json", "re",
           "typing", "rfc8785", "kernel"}
CLI_ONLY = {"argparse", "sys", "pathlib", "time"}
FORBIDDEN_CALLS = {"open", "print", "input"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


@pytest.mark.parametrize("path", sorted((ROOT / "kernel").glob("*.py")), ids=lambda p: p.name)
def test_kernel_module_is_pure(path):
    allowed = ALLOWED | (CLI_ONLY if path.name == "__main__.py" else set())
    assert _imports(path) <= allowed, f"{path.name} imports {_imports(path) - allowed}"
    if path.name != "__main__.py":
        assert not _calls(path) & FORBIDDEN_CALLS, f"{path.name} does I/O"


def test_the_import_walk_would_notice_a_clock(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom random import random\n")
    assert _imports(bad) - ALLOWED == {"time", "random"}


def test_design_layout_is_visible():
    for name in ("kernel", "spec", "sim", "faults", "results", "viewer", "tests",
                 "run_all.py", "README.md"):
        assert (ROOT / name).exists(), f"{name} is missing from the tree"


def _tool(name: str) -> list[str]:
    if shutil.which(name) is None:
        pytest.fail(f"{name} is not installed: run bash .ci/setup")
    return [sys.executable, "-m", name]


def test_ruff_is_clean():
    result = subprocess.run([*_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_kernel_is_mypy_strict_clean():
    result = subprocess.run([*_tool("mypy"), "--strict", "kernel"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
