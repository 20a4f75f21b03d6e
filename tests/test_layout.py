"""Project rules that code review would otherwise have to remember.

- kernel/ is pure: it imports only the standard library's pure modules, rfc8785, orjson and
  msgspec (three JSON codecs: no I/O, no clock, no randomness; the __main__ command line may
  read files), and gc (verify and the oracle pause the collector while they build entries).
  Checked by walking every import statement.
- The dependency direction of DESIGN.md section 3: each folder imports only the project
  folders its row allows (kernel nothing, gate kernel, spec kernel, sim kernel and faults,
  faults kernel, viewer kernel); run_all.py, examples/ and tests/ may import everything.
  ``EXCEPTIONS`` names, file by file, the few crossings the table does not allow that are
  still in the tree, so a new one fails here.
- The layout of DESIGN.md section 3 is visible in the tree.
- ruff is clean everywhere; mypy --strict is clean on kernel/ and sim/coding/.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {"__future__", "ast", "collections", "contextlib", "copy", "dataclasses", "enum", "gc",
           "hashlib", "itertools", "json", "re", "typing", "rfc8785", "orjson", "msgspec",
           "kernel"}
CLI_ONLY = {"argparse", "sys", "pathlib", "time", "os"}
# kernel/forked.py starts the helper process the command line lends the oracle;
# only the command line imports it (the pure modules take it as an argument).
PROCESS_ONLY = {"os", "pickle", "signal"}
FORBIDDEN_CALLS = {"open", "print", "input"}


def _imports(path: Path, whole: bool = False) -> set[str]:
    """The modules ``path`` imports: their top-level names, or (``whole``) full names, a
    ``from M import n`` counting as both M and M.n."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name if whole else alias.name.split(".")[0]
                         for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module if whole else node.module.split(".")[0])
            if whole:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


@pytest.mark.parametrize("path", sorted((ROOT / "kernel").glob("*.py")), ids=lambda p: p.name)
def test_kernel_module_is_pure(path):
    allowed = ALLOWED | {"__main__.py": CLI_ONLY, "forked.py": PROCESS_ONLY}.get(path.name, set())
    assert _imports(path) <= allowed, f"{path.name} imports {_imports(path) - allowed}"
    if path.name not in ("__main__.py", "forked.py"):
        assert "kernel.forked" not in _imports(path, whole=True), f"{path.name} forks"
    if path.name != "__main__.py":
        assert not _calls(path) & FORBIDDEN_CALLS, f"{path.name} does I/O"


def test_the_import_walk_would_notice_a_clock(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom random import random\n")
    assert _imports(bad) - ALLOWED == {"time", "random"}


PROJECT = ("kernel", "gate", "spec", "sim", "faults", "viewer", "tests", "examples", "run_all")
MAY_IMPORT = {"kernel": set(), "gate": {"kernel"}, "spec": {"kernel"},
              "sim": {"kernel", "faults"}, "faults": {"kernel"}, "viewer": {"kernel"}}
# file -> project folders it imports against the table: crossings outside the coding issue,
# left for their owners (the sweep's spec judge, the viewer data the default run writes, the
# viewer's replays re-run from seeds)
EXCEPTIONS = {"sim/judge.py": {"spec"}, "sim/cli.py": {"viewer"},
              "viewer/replays.py": {"sim", "faults"}}


def crossings(root: Path = ROOT) -> dict[str, set[str]]:
    """file -> the project folders it imports that its folder's row does not allow."""
    out = {}
    for folder, allowed in MAY_IMPORT.items():
        for path in sorted((root / folder).rglob("*.py")):
            bad = (_imports(path) & set(PROJECT)) - allowed - {folder}
            if bad:
                out[path.relative_to(root).as_posix()] = bad
    return out


def test_folders_import_only_what_design_section_3_allows():
    found = crossings()
    new = {f: sorted(b - EXCEPTIONS.get(f, set())) for f, b in found.items()
           if b - EXCEPTIONS.get(f, set())}
    assert not new, f"imports against DESIGN.md section 3: {new}"
    gone = sorted(set(EXCEPTIONS) - set(found))
    assert not gone, f"no longer crossing, drop from EXCEPTIONS: {gone}"


def test_the_dependency_check_would_notice_sim_importing_gate(tmp_path):
    (tmp_path / "sim" / "coding").mkdir(parents=True)
    (tmp_path / "sim" / "coding" / "x.py").write_text("from gate import repo\nimport kernel\n")
    (tmp_path / "gate").mkdir()
    (tmp_path / "gate" / "y.py").write_text("from kernel import changes\n")
    assert crossings(tmp_path) == {"sim/coding/x.py": {"gate"}}


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


def test_coding_target_is_mypy_strict_clean():
    """sim/coding on its own: the rest of sim/ is typed loosely, so imports are followed
    silently (their types are used, their own errors not reported here)."""
    result = subprocess.run([*_tool("mypy"), "--strict", "--follow-imports=silent",
                             "sim/coding"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
