"""The repository target: a real directory that coding agents' changes land in.

How it works. The change itself (writes with before-image digests and after-images, its
premises, ``revert``) is pure and lives in ``kernel.changes``; this module is the target
that lands it on disk. ``Repo.apply`` checks the fencing token first (the highest token seen
for each of the change's items must not exceed it: a stale owner's late write is rejected
here, by the target), then journals an image record (every before- and after-image)
atomically, then writes each file atomically (temp file, fsync, rename, directory fsync),
then marks the record applied. A crash anywhere leaves either no record (nothing written)
or a record that ``recover`` completes forward. ``lookup`` answers from that record (a
change without one never landed here, even where another change wrote the same lines), and
for a change with none from the files: its before-images, or neither; re-applying an
applied change is a no-op.
``verify`` runs the repository's tests in a subprocess with a timeout; ``restore`` writes
the before-images back when verification fails. A change that writes one of its own
verifying tests is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel.changes import BeforeImageMismatch, Change, RepoError, StaleToken, file_digest, revert

STATE_DIR = ".gate-repo"  # the target's own records, inside the repository root
IGNORED = (STATE_DIR, "__pycache__", ".git", ".pytest_cache")


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

    def lookup(self, change: Change, journaled: bool = True) -> str:
        """"after" (landed), "before" (not landed), "mixed" (half: recover forward), or
        "neither" (the files moved on since the change was planned).

        A change this target applies journals its images first, so without a record it never
        landed here, whatever the files hold: another change may have written the very same
        after-images, which is not this one applied (its receipt would claim a write that
        never happened). Only ``journaled=False`` (a target keeping no images) judges by the
        files alone."""
        rec = self._record(change.id)
        if rec is not None:
            return {"applied": "after", "applying": "mixed", "restored": "before"}[rec["state"]]
        after = before = 0
        for w in change.writes:
            now = file_digest(self.read(w.path))
            after += now == file_digest(w.after)
            before += now == w.before
        n = len(change.writes)
        if before == n:
            return "before"
        if journaled:
            return "neither"
        if after == n:
            return "after"
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
