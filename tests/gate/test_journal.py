"""Journal backends: the conditional append, several writers at once, SQLite export."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

import kernel
from gate import JsonlJournal, Refused, SqliteJournal, open_journal

ROOT = Path(__file__).resolve().parents[2]
EID = "ab" * 32


def body(ts: int, i: int) -> dict:
    """A well-formed PROPOSED body (any effect id will do for the chain)."""
    caps = {"dedupes": False, "queryable": True, "dedup_window": 0, "lookup_lag": 0}
    timing = {"send_timeout": 50, "settle_margin": 20, "dedup_margin": 0}
    return {"kind": "PROPOSED", "effect_id": f"{i:064x}", "ts": ts, "payload": {"i": i},
            "payload_digest": "cd" * 32, "key": None, "premises": {}, "lease": "L",
            "target": "t", "capabilities": caps, "timing": timing}


def hammer(path: str, worker: int, n: int) -> None:
    """Append n entries, each decided on the head this writer last saw; retry on conflict."""
    journal = open_journal(path)
    for i in range(n):
        while True:
            journal.refresh()
            ts = journal.last_ts
            if journal.append(body(ts, worker * 1000 + i), journal.head, fsync=i % 3 == 0):
                break
    journal.close()


@pytest.mark.parametrize("name", ["j.jsonl", "j.db"])
def test_a_stale_head_is_refused_and_the_writer_must_reread(tmp_path, name):
    a, b = open_journal(tmp_path / name), open_journal(tmp_path / name)
    assert a.append(body(1, 1), a.head, fsync=True) is not None
    assert b.append(body(1, 2), b.head, fsync=True) is None  # b decided on the empty journal
    b.refresh()
    assert b.seq == 1 and b.append(body(1, 2), b.head, fsync=True)["seq"] == 1


@pytest.mark.parametrize("name", ["j.jsonl", "j.db"])
def test_three_processes_never_fork_the_chain(tmp_path, name):
    path = str(tmp_path / name)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=hammer, args=(path, w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    text = (Path(path).read_text() if name.endswith("jsonl")
            else SqliteJournal(path).export())
    verdict = kernel.verify(text)
    assert verdict.valid is True and len(verdict.entries) == 120


def test_the_lock_holds_a_second_writer_until_the_first_is_done(tmp_path):
    """While one process holds the journal lock, another's append waits for it."""
    import fcntl
    import threading
    import time
    path = tmp_path / "j.jsonl"
    JsonlJournal(path).close()
    fd = open(str(path) + ".lock", "r+b")
    fcntl.flock(fd, fcntl.LOCK_EX)
    done: list[float] = []
    writer = JsonlJournal.__new__(JsonlJournal)
    thread = threading.Thread(target=lambda: (JsonlJournal.__init__(writer, path),
                                              done.append(time.monotonic())))
    thread.start()
    time.sleep(0.3)
    assert not done  # still waiting for the lock
    released = time.monotonic()
    fcntl.flock(fd, fcntl.LOCK_UN)
    thread.join(5)
    assert done and done[0] >= released


def test_export_lets_kernel_check_read_a_sqlite_journal(tmp_path):
    db = tmp_path / "j.db"
    hammer(str(db), 0, 5)
    out = subprocess.run([sys.executable, "-m", "gate", "export", str(db)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "j.jsonl").write_text(out)
    assert kernel.verify(out).valid is True and len(kernel.verify(out).entries) == 5


@pytest.mark.parametrize("name", ["j.jsonl", "j.db"])
def test_entries_a_refused_append_read_reach_the_next_refresh(tmp_path, name):
    """A failed conditional append reads the new tail; the caller must still be handed it,
    or it decides again on a view that skips an entry (found by the crash harness: two
    recovery workers each journaled attempt 2)."""
    a, b = open_journal(tmp_path / name), open_journal(tmp_path / name)
    a.append(body(1, 1), a.head, fsync=True)
    assert b.append(body(1, 2), kernel.GENESIS, fsync=True) is None
    assert [e["seq"] for e in b.refresh()] == [0]
    assert b.refresh() == []


def test_a_writer_that_cannot_take_the_lock_is_refused(tmp_path, monkeypatch):
    import errno
    import fcntl

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(fcntl, "flock", no_locks)
    with pytest.raises(Refused, match="cannot take the journal lock is refused"):
        JsonlJournal(tmp_path / "j.jsonl")


def _durable_journal(path: Path, n: int) -> None:
    journal = JsonlJournal(path)
    for i in range(n):
        assert journal.append(body(i, i), journal.head, fsync=True)
    journal.close()


def test_a_damaged_journal_whose_lock_file_was_removed_is_refused_not_cut(tmp_path):
    """The lock file holds the durable-head marker: without it a damaged line 2 of 4 durable
    entries used to read as an unsynced tail, and opening the journal cut lines 2-4."""
    path = tmp_path / "j.jsonl"
    _durable_journal(path, 4)
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"ts":1', b'"ts":9')
    path.write_bytes(b"\n".join(lines))
    (tmp_path / "j.jsonl.lock").unlink()  # a user removes a "stale" lock file
    before = path.read_bytes()
    with pytest.raises(Refused, match="lock file, which holds the durable-head marker, is "
                                      "missing"):
        JsonlJournal(path)
    assert path.read_bytes() == before
    assert "may have been durable" in subprocess.run(
        [sys.executable, "-m", "gate", "repair", str(path)], capture_output=True, text=True,
        cwd=ROOT).stdout


def test_a_torn_last_line_is_still_cut_when_the_lock_file_is_missing(tmp_path):
    path = tmp_path / "j.jsonl"
    _durable_journal(path, 2)
    path.write_bytes(path.read_bytes() + b'{"effect_id":"ab')
    (tmp_path / "j.jsonl.lock").unlink()
    assert JsonlJournal(path).seq == 2


def test_a_lock_file_removed_under_a_writer_stops_that_writer(tmp_path):
    """A writer opening after the lock file was removed locks a new file: the old writer
    must stop, or both would be inside "the lock" at once and fork the chain."""
    path = tmp_path / "j.jsonl"
    old = JsonlJournal(path)
    old.append(body(0, 0), old.head, fsync=True)
    (tmp_path / "j.jsonl.lock").unlink()
    new = JsonlJournal(path)  # both now share the journal file's own flock
    assert new.append(body(1, 2), new.head, fsync=True)["seq"] == 1
    with pytest.raises(Refused, match="removed or replaced"):
        old.append(body(1, 1), old.head, fsync=True)
    assert kernel.verify(path.read_text()).valid is True


def hammer_logged(path: str, worker: int, n: int, log: str) -> None:
    """hammer, logging the hash of every entry an append returned; stops when refused."""
    journal = open_journal(path)
    with open(log, "w") as out:
        for i in range(n):
            while True:
                try:
                    journal.refresh()
                    entry = journal.append(body(journal.last_ts, worker * 1000 + i),
                                           journal.head, fsync=True)
                except Refused:
                    return
                if entry:
                    out.write(entry["hash"] + "\n")
                    out.flush()
                    break


def test_removing_the_lock_file_mid_run_loses_no_appended_entry(tmp_path):
    path, lock = str(tmp_path / "j.jsonl"), tmp_path / "j.jsonl.lock"
    ctx = multiprocessing.get_context("fork")
    logs = [str(tmp_path / f"log{w}") for w in range(4)]
    procs = [ctx.Process(target=hammer_logged, args=(path, w, 60, logs[w])) for w in range(2)]
    for p in procs:
        p.start()
    while not Path(path).exists() or Path(path).stat().st_size < 5_000:
        pass
    lock.unlink()
    procs += [ctx.Process(target=hammer_logged, args=(path, w, 60, logs[w])) for w in (2, 3)]
    for p in procs[2:]:
        p.start()
    for p in procs:
        p.join(60)
    entries = kernel.verify(Path(path).read_text()).entries
    kept = {e["hash"] for e in entries}
    appended = [h for log in logs if Path(log).exists() for h in Path(log).read_text().split()]
    assert appended and set(appended) <= kept, "an entry an append returned was lost"


def test_a_journal_where_none_can_be_written_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(Refused, match="cannot open the journal .* for writing: Not a directory"):
        JsonlJournal(tmp_path / "file" / "j.jsonl")


def test_a_file_that_was_never_a_journal_is_refused_not_emptied(tmp_path):
    """A user's own one-line file named as the journal: its line has no newline, so it read
    as a torn tail and opening it truncated the file to nothing."""
    for text in (b"hello", b'{"level":"info"}', b"[1, 2]\nnotes"):
        path = tmp_path / "notes.jsonl"
        path.write_bytes(text)
        with pytest.raises(Refused, match="lock file"):
            JsonlJournal(path)
        assert path.read_bytes() == text and not (tmp_path / "notes.jsonl.lock").exists()


def test_a_journal_reached_through_a_symlink_shares_the_real_journals_lock(tmp_path):
    """Two writers, one naming the file and one a symbolic link to it, used to lock two
    different files (link.jsonl.lock, real.jsonl.lock): no mutual exclusion at all."""
    import os
    real, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    a = JsonlJournal(real)
    link.symlink_to(real)
    b = JsonlJournal(link)
    assert os.fstat(a._lock_fd).st_ino == os.fstat(b._lock_fd).st_ino
    assert a.append(body(0, 0), a.head, fsync=True)
    assert b.append(body(0, 1), kernel.GENESIS, fsync=True) is None


def test_repair_is_the_way_out_of_an_unreadable_marker(tmp_path):
    """A garbled lock file: opening is refused with 'run python -m gate repair', and repair
    itself used to fail with that same sentence, leaving no way out."""
    path = tmp_path / "j.jsonl"
    _durable_journal(path, 3)
    (tmp_path / "j.jsonl.lock").write_bytes(b"garbage")
    with pytest.raises(Refused, match="marker is unreadable"):
        JsonlJournal(path)
    before = path.read_bytes()

    def repair(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gate", "repair", str(path), *args],
                              capture_output=True, text=True, cwd=ROOT)
    shown = repair()
    assert shown.returncode == 1 and "3 intact entries" in shown.stdout, shown.stderr
    assert path.read_bytes() == before
    assert repair("--apply").returncode == 0
    assert JsonlJournal(path).seq == 3 and path.read_bytes() == before
