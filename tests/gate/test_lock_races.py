"""Real processes racing for one JSON-lines journal: hard links, and a removed lock file.

How it works. Workers are forked processes driven over pipes. The hard-link tests open one
journal file through two names at once and append concurrently: at most one may write, and
when the link check is switched off the lock (the journal file's own flock) must still keep
one chain. The stress test removes the lock file of a journal with a damaged tail, then
releases two openers with seeded delays of a few milliseconds: both must be refused and the
file left as it was (before the fix, whichever opener found the lock file the other had just
created read "no marker" as "nothing durable" and cut the damage). Clean rounds in between
check that both openers then write one chain. Reproduce: the failure message prints
``LOCK_RACE_SEED=N python3 -m pytest tests/gate/test_lock_races.py``.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import kernel
from gate.journal import JsonlJournal, Refused
from tests.gate.test_journal import body

CTX = multiprocessing.get_context("fork")
SEED = int(os.environ.get("LOCK_RACE_SEED", "2026"))
REPRO = "LOCK_RACE_SEED={} python3 -m pytest tests/gate/test_lock_races.py -q"


def append_n(journal: JsonlJournal, n: int, tag: int, fsync: bool = True) -> list[str]:
    """Append n entries by conditional append (re-read and retry when the head moved)."""
    out = []
    for i in range(n):
        while True:
            journal.refresh()
            entry = journal.append(body(journal.last_ts, tag * 1000 + i), journal.head, fsync)
            if entry:
                out.append(entry["hash"])
                break
    return out


def writer(path: str, n: int, tag: int, check_links: bool, log: str, go: Any) -> None:
    """Open the journal by this name and, once both are open, append n entries (not synced,
    to keep the two writers' appends tightly interleaved), logging each hash appended."""
    cls = JsonlJournal if check_links else _NoLinkCheck
    with open(log, "w") as out:
        try:
            journal = cls(path)
        except Refused as exc:
            out.write(f"refused {exc}\n")
            go.abort()
            return
        try:
            go.wait(30)
            for h in append_n(journal, n, tag, fsync=False):
                out.write(h + "\n")
                out.flush()
        except (Refused, threading.BrokenBarrierError) as exc:
            out.write(f"refused {exc!r}\n")
        journal.close()


class _NoLinkCheck(JsonlJournal):
    def _one_name(self) -> None:  # the hard-link refusal off: only the lock protects
        return


def _run_writers(names: list[Path], n: int, check_links: bool, tmp: Path) -> list[list[str]]:
    logs, go = [tmp / f"log{w}" for w in range(len(names))], CTX.Barrier(len(names))
    procs = [CTX.Process(target=writer, args=(str(p), n, w, check_links, str(logs[w]), go))
             for w, p in enumerate(names)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    return [log.read_text().splitlines() for log in logs]


def _hard_linked(tmp: Path) -> list[Path]:
    a, b = tmp / "a.jsonl", tmp / "b.jsonl"
    journal = JsonlJournal(a)
    journal.append(body(0, 999), journal.head, True)
    journal.close()
    os.link(a, b)
    return [a, b]


def test_two_workers_through_two_hard_links_cannot_both_write(tmp_path: Path) -> None:
    names = _hard_linked(tmp_path)
    logs = _run_writers(names, 15, True, tmp_path)
    wrote = [any(not line.startswith("refused") for line in log) for log in logs]
    assert not all(wrote), "two workers wrote one journal through two hard links"
    assert all(log and log[0].startswith("refused") and "hard links" in log[0]
               for log in logs), logs
    assert kernel.verify(names[0].read_text()).valid is True


def test_the_lock_is_the_journal_files_own_so_hard_links_share_it(tmp_path: Path) -> None:
    """With the hard-link refusal switched off, the two names still lock one lock (before
    the fix: a.jsonl.lock and b.jsonl.lock, no exclusion, a forked chain)."""
    names = _hard_linked(tmp_path)
    logs = _run_writers(names, 300, False, tmp_path)
    appended = [h for log in logs for h in log]
    assert len(appended) == 600 and not any(h.startswith("refused") for h in appended), logs
    verdict = kernel.verify(names[0].read_text())
    assert verdict.valid is True, verdict.anomalies[:1]
    assert {e["hash"] for e in verdict.entries} >= set(appended)
    assert len(verdict.entries) == 601


# ---------------------------------------------------------------- openers after the lock is gone


def opener(conn: Any, path: str) -> None:
    """Wait for (delay, appends); sleep the delay; open; append; answer what happened."""
    while True:
        order = conn.recv()
        if order is None:
            return
        delay, n = order
        time.sleep(delay)
        try:
            journal = JsonlJournal(path)
        except Refused:
            conn.send(("refused", []))
            continue
        try:
            conn.send(("opened", append_n(journal, n, os.getpid() % 1000)))
        except Refused:
            conn.send(("refused later", []))
        finally:
            journal.close()


GARBAGE = b"this line was never an entry\n"


def _damaged(path: Path, entries: int) -> bytes:
    """The bytes of a journal of entries and a garbage last line (not a torn entry)."""
    journal = JsonlJournal(path)
    for i in range(entries):
        journal.append(body(i, i), journal.head, False)
    journal.close()
    return path.read_bytes() + GARBAGE


def test_openers_racing_right_after_the_lock_file_was_removed() -> None:
    import tempfile
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    with tempfile.TemporaryDirectory() as tmp:
        path, lock = Path(tmp) / "j.jsonl", Path(tmp) / "j.jsonl.lock"
        damaged = _damaged(path, 30)
        pipes = [CTX.Pipe() for _ in range(2)]
        procs = [CTX.Process(target=opener, args=(child, str(path))) for _, child in pipes]
        for p in procs:
            p.start()
        try:
            start = time.monotonic()
            for round_no in range(200):
                if time.monotonic() - start > 6:
                    break
                clean = round_no % 4 == 3  # no damage: both must open and write one chain
                before = damaged[:-len(GARBAGE)] if clean else damaged
                path.write_bytes(before)
                lock.unlink(missing_ok=True)
                for parent, _ in pipes:
                    parent.send((rng.uniform(0, 0.004), 3 if clean else 0))
                answers = [parent.recv() for parent, _ in pipes]
                where = f"round {round_no}: {answers} -- {REPRO.format(SEED)}"
                if clean:
                    verdict = kernel.verify(path.read_text())
                    assert [a[0] for a in answers] == ["opened", "opened"], where
                    assert verdict.valid is True and len(verdict.entries) == 36, where
                else:
                    assert [a[0] for a in answers] == ["refused", "refused"], where
                    assert path.read_bytes() == before, f"the damaged tail was cut: {where}"
        finally:
            for parent, _ in pipes:
                parent.send(None)
            for p in procs:
                p.join(10)
