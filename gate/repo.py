"""The repository target: a real directory that coding agents' changes land in.

How it works. A change is a set of file writes, each with the digest of the before-image it
was planned against and the after-image to write (``None`` deletes). ``plan`` turns an
agent's writes into a change and its premises: the before-image digest of every written
file, the digest of every symbol the change reads or defines (``gate.symbols``: normalised
definitions, blind to formatting, comments, docstrings and unrelated definitions), and the
digest of every verifying test. ``facts`` recomputes the same names on the tree now, leaving
out the change's own writes when the target can identify them.

``Repo.apply`` checks the fencing token first (the highest token seen for each of the
change's items must not exceed it: a stale owner's late write is rejected here, by the
target), then journals an image record (every before- and after-image) atomically, then
writes each file atomically (temp file, fsync, rename, directory fsync), then marks the
record applied. A crash anywhere leaves either no record (nothing written) or a record that
``recover`` completes forward. ``lookup`` says whether the after-images, the before-images,
or a mix are on disk; re-applying an applied change is a no-op. ``verify`` runs the
repository's tests in a subprocess with a timeout; ``restore`` writes the before-images back
when verification fails. A change that writes one of its own verifying tests is refused.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import symbols
from gate.symbols import ABSENT, sha

STATE_DIR = ".gate-repo"  # the target's own records, inside the repository root
IGNORED = (STATE_DIR, "__pycache__", ".git", ".pytest_cache")


class RepoError(Exception):
    """A change the target will not apply (the message says why in one line)."""


class StaleToken(RepoError):
    pass


class BeforeImageMismatch(RepoError):
    pass


@dataclass(frozen=True, slots=True)
class Write:
    path: str
    before: str  # digest of the before-image, or ABSENT for a new file
    after: str | None  # the after-image; None deletes the file


@dataclass(frozen=True, slots=True)
class Change:
    """One unit's change: its writes, verifying tests and claim items (the effect payload)."""

    unit: str
    writes: tuple[Write, ...]
    tests: tuple[str, ...] = ()
    items: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "tests": list(self.tests), "items": list(self.items),
                "writes": [{"path": w.path, "before": w.before, "after": w.after}
                           for w in self.writes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        writes = tuple(Write(w["path"], w["before"], w["after"]) for w in data["writes"])
        return cls(data["unit"], writes, tuple(data["tests"]), tuple(data["items"]))

    @property
    def id(self) -> str:
        return sha(json.dumps(self.as_json(), sort_keys=True))[:16]

    def edits_own_tests(self) -> bool:
        return any(w.path in self.tests for w in self.writes)


def file_digest(text: str | None) -> str:
    return ABSENT if text is None else sha(text)


def plan(tree: Mapping[str, str], unit: str, writes: Mapping[str, str | None],
         tests: Iterable[str] = (), callees: int = 0) -> tuple[Change, dict[str, str]]:
    """A change from an agent's writes on ``tree``, and the premises it relies on."""
    paths = sorted(writes)
    defined = symbols.written(tree, writes)
    read = symbols.reads(tree, writes, callees)
    items = [f"file:{p}" for p in paths] + [f"sym:{n}" for n in sorted(defined)]
    change = Change(unit, tuple(Write(p, file_digest(tree.get(p)), writes[p]) for p in paths),
                    tuple(sorted(tests)), tuple(items))
    premises = facts(tree, premise_names(change, read))
    for w in change.writes:  # a name this change defines anew must be defined nowhere yet
        old = symbols.definitions(tree.get(w.path) or "") or {}
        new = symbols.definitions(w.after or "") or {}
        premises.update({f"new:{n}": ABSENT for n in sorted(new)
                         if len(new[n]) > len(old.get(n, []))})
    return change, premises


def premise_names(change: Change, reads: Iterable[str]) -> list[str]:
    names = [f"file:{w.path}" for w in change.writes]
    names += [f"def:{n[4:]}" for n in change.items if n.startswith("sym:")]
    names += [f"def:{n}" for n in sorted(set(reads))]
    names += [f"test:{t}" for t in change.tests]
    return sorted(set(names))


def facts(tree: Mapping[str, str], names: Iterable[str],
          restore: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The premises' values on ``tree``; ``restore`` (path -> before-image) first puts the
    change's own landed files back, so its own landing is not "the world moved"."""
    if restore:
        tree = {**tree, **{p: t for p, t in restore.items() if t is not None}}
        tree = {p: t for p, t in tree.items() if restore.get(p, "") is not None}
    out = {}
    for name in names:
        kind, _, arg = name.partition(":")
        if kind == "def":
            out[name] = symbols.symbol_digest(tree, arg)
        elif kind == "new":
            out[name] = symbols.symbol_digest(tree, arg)
        else:
            out[name] = file_digest(tree.get(arg))
    return out


def own_landed(tree: Mapping[str, str], change: Change,
               befores: Mapping[str, str | None]) -> dict[str, str | None]:
    """The change's files that are at their after-image now, mapped to their before-images."""
    return {w.path: befores[w.path] for w in change.writes
            if w.path in befores and file_digest(tree.get(w.path)) == file_digest(w.after)
            and w.before != file_digest(w.after)}


def revert(current: str | None, before: str | None, after: str | None) -> str | None:
    """Undo one file's change on its current text: the before-image when nobody touched the
    file since; otherwise put back (or remove) only the definitions the change altered, so
    later edits by others to the rest of the file survive."""
    if file_digest(current) == file_digest(after) or current is None:
        return before
    old, cur = symbols.definitions(before or "") or {}, symbols.definitions(current)
    if cur is None:
        return before
    lines = current.splitlines(keepends=True)
    spans = []
    for name in symbols.changed_names(before, after):
        for node in cur.get(name, []):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            text = "".join(ast.get_source_segment(before or "", d) or "" for d in old.get(name, []))
            spans.append((start - 1, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(spans, reverse=True):
        lines[start:end] = [text + "\n"] if text else []
    return "".join(lines)


# ---------------------------------------------------------------- durable file operations


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, text: str | None) -> None:
    """Replace (or delete) one file so a crash leaves the old or the new version, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        if path.exists():
            path.unlink()
            fsync_dir(path.parent)
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


@dataclass(frozen=True, slots=True)
class Verification:
    outcome: str  # "passed" | "failed" | "could_not_run"
    returncode: int | None
    summary: str
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "returncode": self.returncode, "summary": self.summary,
                "seconds": round(self.seconds, 3)}


class Repo:
    """A real directory as a tier-1 target: dedupes (applied is a no-op) and can be queried."""

    def __init__(self, root: str | os.PathLike[str], timeout: float = 60.0,
                 crash_hook: Callable[[int], None] | None = None) -> None:
        self.root = Path(root)
        self.state = self.root / STATE_DIR
        self.timeout = timeout
        self.crash_hook = crash_hook  # test seam: called after each file is written
        (self.state / "images").mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------ reading

    def read(self, path: str) -> str | None:
        p = self.root / path
        return p.read_text(encoding="utf-8") if p.is_file() else None

    def tree(self) -> dict[str, str]:
        out = {}
        for p in sorted(self.root.rglob("*")):
            rel = p.relative_to(self.root)
            if p.is_file() and not any(part in IGNORED for part in rel.parts) \
                    and not p.name.startswith("."):
                out[rel.as_posix()] = p.read_text(encoding="utf-8")
        return out

    def lookup(self, change: Change) -> str:
        """"after" (landed), "before" (not landed), "mixed" (half: recover forward), or
        "neither" (the files moved on since the change was planned)."""
        rec = self._record(change.id)
        if rec is not None:
            return {"applied": "after", "applying": "mixed", "restored": "before"}[rec["state"]]
        after = before = 0
        for w in change.writes:
            now = file_digest(self.read(w.path))
            after += now == file_digest(w.after)
            before += now == w.before
        n = len(change.writes)
        if after == n:
            return "after"
        if before == n:
            return "before"
        return "mixed" if after + before == n else "neither"

    def befores(self, change: Change) -> dict[str, str | None]:
        """The before-images the target journaled for this change (empty if never applied)."""
        rec = self._record(change.id)
        return {f["path"]: f["before"] for f in rec["files"]} if rec else {}

    # ------------------------------------------------------------ tokens and records

    def _tokens(self) -> dict[str, int]:
        p = self.state / "tokens.json"
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}

    def check_token(self, change: Change, token: int | None) -> None:
        if token is None:
            return
        seen = self._tokens()
        stale = sorted(i for i in change.items if seen.get(i, -1) > token)
        if stale:
            raise StaleToken(f"fencing token {token} is older than one seen for {stale[0]} "
                             f"({seen[stale[0]]}): a stale owner's write is rejected")

    def _record(self, change_id: str) -> dict[str, Any] | None:
        p = self.state / "images" / f"{change_id}.json"
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None

    def _save(self, rec: dict[str, Any]) -> None:
        atomic_write(self.state / "images" / f"{rec['id']}.json",
                     json.dumps(rec, sort_keys=True, indent=1) + "\n")

    # ------------------------------------------------------------ writing

    def apply(self, change: Change, token: int | None) -> str:
        """Land the change: "applied", or "deduplicated" when it already had landed."""
        if change.edits_own_tests():
            raise RepoError("the change writes one of its own verifying tests")
        rec = self._record(change.id)
        if rec is not None and rec["state"] == "applying":
            self._finish(rec)
            return "applied"
        if self.lookup(change) == "after":
            return "deduplicated"
        self.check_token(change, token)
        for w in change.writes:
            if file_digest(self.read(w.path)) != w.before:
                raise BeforeImageMismatch(f"{w.path} is no longer the before-image the change "
                                          f"was planned against")
        rec = {"id": change.id, "unit": change.unit, "token": token, "state": "applying",
               "files": [{"path": w.path, "before": self.read(w.path), "after": w.after}
                         for w in change.writes]}
        self._save(rec)  # images journaled before any file is touched
        if token is not None:
            seen = self._tokens()
            seen.update({i: max(token, seen.get(i, -1)) for i in change.items})
            atomic_write(self.state / "tokens.json", json.dumps(seen, sort_keys=True) + "\n")
        self._finish(rec)
        return "applied"

    def _finish(self, rec: dict[str, Any]) -> None:
        for n, f in enumerate(rec["files"], 1):
            atomic_write(self.root / f["path"], f["after"])
            if self.crash_hook is not None:
                self.crash_hook(n)
        rec["state"] = "applied"
        self._save(rec)

    def recover(self) -> list[str]:
        """Complete every change left half-written by a crash (forward); their ids."""
        done = []
        for p in sorted((self.state / "images").glob("*.json")):
            rec = json.loads(p.read_text(encoding="utf-8"))
            if rec["state"] == "applying":
                self._finish(rec)
                done.append(rec["id"])
        return done

    def restore(self, change: Change) -> None:
        """Put the before-images back (a failed verification): the change is undone."""
        rec = self._record(change.id)
        if rec is None:
            return
        for f in rec["files"]:
            atomic_write(self.root / f["path"], revert(self.read(f["path"]), f["before"],
                                                       f["after"]))
        rec["state"] = "restored"
        self._save(rec)

    def write_blind(self, path: str, text: str | None) -> None:
        """A write with no token, no images and no check: what uncoordinated agents do."""
        atomic_write(self.root / path, text)

    # ------------------------------------------------------------ verification

    def verify(self, tests: Iterable[str] = ()) -> Verification:
        """Run the repository's tests (or the named ones) with pytest, in a subprocess."""
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--rootdir", str(self.root), "-c", os.devnull, *tests]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(self.root)}
        start = time.monotonic()
        try:
            done = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True,
                                  timeout=self.timeout, env=env)
        except subprocess.TimeoutExpired:
            return Verification("could_not_run", None, f"timed out after {self.timeout} s",
                                time.monotonic() - start)
        lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
        summary = lines[-1] if lines else done.stderr.strip()[-200:]
        outcome = {0: "passed", 1: "failed"}.get(done.returncode, "could_not_run")
        return Verification(outcome, done.returncode, summary, time.monotonic() - start)
