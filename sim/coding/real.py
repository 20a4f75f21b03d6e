"""The fixed coding table on real repositories: real files, real crashes' effects, real pytest.

How it works. ``RealRepo`` gives ``sim.coding.story`` the same backend interface as the
in-memory model, but over a temporary directory through the real repository target,
``gate.repo.Repo``, which the caller hands in as ``open_repo(root, timeout)`` (sim/ may not
import gate/, DESIGN.md section 3; ``run_all.py`` and the tests do the handing): a change's
images are journaled in the directory, files are replaced atomically, the fencing tokens and
before-images are checked by ``Repo.apply``, a crash after the first file is a real stop of
the writer half way (the hook raises), recovery completes it from the image records, and the
control plane's verification is ``Repo.verify``: pytest in a subprocess with a timeout. The
judge runs the reference tests with pytest too, in a directory of its own. ``compare`` runs
every cell this way and lists each cell whose verdict, harms, availability or unit outcomes
differ from the simulated table.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from kernel.changes import BeforeImageMismatch, Change, RepoError, StaleToken, file_digest
from sim.coding import table
from sim.coding.judge import judge
from sim.coding.model import FIXTURE, Op, merge
from sim.coding.registry import SYSTEMS
from sim.coding.story import simulate

COMPARED = ("verdict", "harms", "lost", "outcomes", "landed")


class _Stop(Exception):
    """The writer died (a simulated crash) after some files."""


class _Outcome(Protocol):
    @property
    def outcome(self) -> str: ...  # "passed" | "failed" | "could_not_run"


class Target(Protocol):
    """What this module uses of the real repository target (``gate.repo.Repo``)."""

    timeout: float
    crash_hook: Callable[[int], None] | None

    def tree(self) -> dict[str, str]: ...
    def read(self, path: str) -> str | None: ...
    def write_blind(self, path: str, text: str | None) -> None: ...
    def lookup(self, change: Change, journaled: bool = True) -> str: ...
    def befores(self, change: Change) -> dict[str, str | None]: ...
    def recover(self) -> list[str]: ...
    def restore(self, change: Change) -> None: ...
    def apply(self, change: Change, token: int | None) -> str: ...
    def verify(self) -> _Outcome: ...


OpenRepo = Callable[[Path, float], Target]  # (root, timeout) -> the target, e.g. gate.repo.Repo


class RealRepo:
    def __init__(self, root: Path, open_repo: OpenRepo, timeout: float = 60.0) -> None:
        for path, text in FIXTURE.items():
            (root / path).write_text(text, encoding="utf-8")
        self.open_repo = open_repo
        self.repo = open_repo(root, timeout)

    def tree(self) -> dict[str, str]:
        return self.repo.tree()

    def write(self, path: str, text: str | None) -> None:
        self.repo.write_blind(path, text)

    def lookup(self, change: Change, journaled: bool = True) -> str:
        return self.repo.lookup(change, journaled)

    def befores(self, change: Change) -> dict[str, str | None]:
        return self.repo.befores(change)

    def recover(self) -> list[str]:
        return self.repo.recover()

    def restore(self, change: Change) -> None:
        self.repo.restore(change)

    def _hook(self, total: int, on_file: Callable[[int], bool]) -> Callable[[int], None]:
        def hook(n: int) -> None:
            if n < total and on_file(n):
                raise _Stop
        return hook

    def apply(self, change: Change, token: int | None, journaled: bool,
              on_file: Callable[[int], bool]) -> str:
        if not journaled:
            return self._apply_unjournaled(change, on_file)
        self.repo.crash_hook = self._hook(len(change.writes), on_file)
        try:
            return self.repo.apply(change, token)
        except StaleToken:
            return "stale_token"
        except BeforeImageMismatch:
            return "before_mismatch"
        except RepoError:
            return "own_tests"
        except _Stop:
            return "crashed"
        finally:
            self.repo.crash_hook = None

    def _apply_unjournaled(self, change: Change, on_file: Callable[[int], bool]) -> str:
        """The original's target: checks before-images, keeps no images, no tokens."""
        if self.repo.lookup(change, journaled=False) == "after":
            return "deduplicated"
        if any(file_digest(self.repo.read(w.path)) != w.before for w in change.writes):
            return "before_mismatch"
        for n, w in enumerate(change.writes, 1):
            self.repo.write_blind(w.path, w.after)
            if n < len(change.writes) and on_file(n):
                return "crashed"
        return "applied"

    def patch(self, ops: list[Op], on_file: Callable[[int], bool]) -> str:
        writes = merge(self.repo.tree(), ops)
        for n, (path, text) in enumerate(sorted(writes.items()), 1):
            self.repo.write_blind(path, text)
            if n < len(writes) and on_file(n):
                return "crashed"
        return "applied"

    def verify(self, tree: Mapping[str, str] | None = None) -> str:
        if tree is None:
            return self.repo.verify().outcome
        with tempfile.TemporaryDirectory(prefix="coding-verify-") as d:
            for path, text in tree.items():
                (Path(d) / path).write_text(text, encoding="utf-8")
            return self.open_repo(Path(d), self.repo.timeout).verify().outcome


_JUDGED: dict[frozenset[tuple[str, str]], bool] = {}


def pytest_passes(files: dict[str, str]) -> bool:
    """The judge's own pytest run of the reference tests, in a directory of its own."""
    key = frozenset(files.items())
    if key not in _JUDGED:
        with tempfile.TemporaryDirectory(prefix="coding-judge-") as d:
            for path, text in files.items():
                (Path(d) / path).write_text(text, encoding="utf-8")
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": d}
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                   "no:cacheprovider", "-c", os.devnull, "--rootdir", d, d],
                                  cwd=d, env=env, capture_output=True, timeout=120)
            _JUDGED[key] = done.returncode == 0
    return _JUDGED[key]


def run_cell(cell: tuple[str, str], open_repo: OpenRepo) -> dict[str, Any]:
    row, system = cell
    guarantee, plan = table.ROWS[row]
    with tempfile.TemporaryDirectory(prefix="coding-repo-") as d:
        run = simulate(plan, SYSTEMS[system], table.FIXED_SEED,
                       repo=RealRepo(Path(d), open_repo))
        v = judge(run, pytest_passes)
    return {"id": f"{row}/{system}", "row": row, "guarantee": guarantee, "system": system,
            "verdict": "ok" if v["ok"] else "FAIL", "harms": v["harms"], "lost": v["lost"],
            "details": v["details"], "spent": v["spent"], "landed": v["landed"],
            "outcomes": {f"{j.id}:{j.unit.name}": j.outcome for j in run.jobs}}


def compare(sim_rows: list[dict[str, Any]], open_repo: OpenRepo,
            cells: list[tuple[str, str]] | None = None) -> tuple[list[dict[str, Any]],
                                                                  list[str]]:
    """The real table (for ``cells``, default all) and the cells that differ from the sim,
    on repositories opened with ``open_repo``."""
    by = {r["id"]: r for r in sim_rows}
    rows, diffs = [], []
    for cell in cells or table.cells():
        r = run_cell(cell, open_repo)
        if r["system"] in ("filehash", "symbol") and r["guarantee"] == "original":
            r["matches_reference"] = (r["row"] in table.REFERENCE[r["system"]]) == \
                (r["verdict"] == "FAIL")
        rows.append(r)
        s = by.get(r["id"])
        bad = [k for k in COMPARED if s is not None and s[k] != r[k]]
        if s is not None and bad:
            diffs.append(f"{r['id']}: " + ", ".join(f"{k} sim={s[k]} real={r[k]}"
                                                    for k in bad))
    return rows, diffs
