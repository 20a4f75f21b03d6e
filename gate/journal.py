"""Journal backends: one interface with a conditional append, a JSON-lines file and SQLite.

How it works. A journal holds the kernel's hash-chained entries (kernel/journal.py's format).
Each worker keeps a view: the entries it has read and the chain head they end in.
``append(body, head, fsync)`` is conditional: it seals and writes the entry only if the
journal's head is still ``head``, the one the caller's decision was made on, and returns the
sealed entry; otherwise it returns None, and the caller calls ``refresh()`` (read what others
appended), replays and decides again. That is the spec's atomic read-and-append; without it
two workers fork the chain (spec/broken/StaleView.tla).

JSONL file. The lock is ``fcntl.flock`` on the journal file itself, so every name that leads
to it (a symbolic link, a lock file removed and made again) is one lock, and a crash releases
it; it is held only while the tail is read and the entry appended. A writer also flocks the
side file ``JOURNAL.lock`` (what writers of the earlier layout lock alone), after the journal.
A writer that cannot take the lock is refused, and so is a journal file with more than one
hard link (each name would keep its own marker). The side file holds the durable-head
marker: after the journal is synced (outside the lock, so
concurrent writers' syncs are committed together), the marker (seq, end offset and hash of
the last synced entry) is raised under the lock and synced, before the caller acts on the
entry (sends, hands out a receipt). So every entry at or before the
marker is durable, and every entry anyone acted on is at or before it. Reading: damage at or
before the marker is refused naming the line; damage after it (written, never made durable:
a torn line, a zeroed or garbled sector, a lost write) is cut with a note. Every open writes a
marker record if the side file has none, so a side file without a record beside a journal
with content means the marker was lost (the file was removed): that is decided under the
lock, from the file's content, never from who created the file. ``plan_repair``
says what a cut would remove; ``python -m gate repair`` shows it and cuts only with --apply.

SQLite. One table of (seq, hash, line) holding the same canonical lines, in WAL mode; the
conditional append runs in ``BEGIN IMMEDIATE``; an append the kernel wants durable commits
with ``synchronous=FULL`` (others with NORMAL; the next FULL commit syncs them too). SQLite
does its own torn-write recovery, so the whole database is durable as read.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kernel
from kernel import JournalError
from kernel.journal import _not_a_prefix, entry_hash, parse_line

FINAL = frozenset(state.value for state in kernel.FINAL_STATES)
MARKER_SIZE = 160  # one fixed-size record at offset 0 of the lock file (inside one sector)


class Refused(JournalError):
    """The journal cannot be used as it is (damaged durable entries, no lock, ...)."""


@dataclass
class Tail:
    """Entries read past a known head, and the first bad line if any (line numbers 1-based)."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)  # byte offset after each entry's newline
    bad_line: int | None = None
    why: str = ""


def extend_chain(lines: list[bytes], seq: int, head: str, last_ts: int, start: int) -> Tail:
    """Check raw lines (newline stripped) as the continuation of a chain at (seq, head)."""
    tail, offset = Tail(), start
    for raw in lines:
        line_no = seq + 1
        try:
            text = raw.decode("utf-8")
            entry = parse_line(text, line_no)
        except (UnicodeDecodeError, JournalError) as exc:
            tail.bad_line, tail.why = line_no, _why(exc)
            return tail
        problem = _link_problem(entry, text, seq, head, last_ts)
        if problem:
            tail.bad_line, tail.why = line_no, problem
            return tail
        offset += len(raw) + 1
        tail.entries.append(entry)
        tail.ends.append(offset)
        seq, head, last_ts = seq + 1, entry["hash"], entry["ts"]
    return tail


def _why(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {exc.start} of the line)"
    return str(exc).split(": ", 1)[-1]


def _link_problem(entry: dict[str, Any], text: str, seq: int, head: str, last_ts: int) -> str:
    if entry["seq"] != seq:
        return f"seq is {entry['seq']}, expected {seq}"
    if entry["prev"] != head:
        return "prev does not match the hash of the entry before it (a forked chain?)"
    if entry_hash(text, entry) != entry["hash"]:
        return "content does not match its hash"
    if entry["ts"] < last_ts:
        return f"ts {entry['ts']} is earlier than the entry before ({last_ts})"
    return ""


class Journal:
    """What the gate needs of a journal; the backends below fill in the storage."""

    path: Path
    notes: list[str]

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.head = kernel.GENESIS
        self.last_ts = 0
        self.durable_seq = -1  # entries with seq <= this are durable
        self.final_seq: dict[str, int] = {}  # effect id -> seq of its final entry
        self._unseen: list[dict[str, Any]] = []  # others' entries not yet handed out

    @property
    def seq(self) -> int:
        return len(self.entries)

    def _take(self, entries: list[dict[str, Any]], own: bool = False) -> None:
        if not own:
            self._unseen += entries
        for entry in entries:
            self.entries.append(entry)
            if entry["kind"] in FINAL:
                self.final_seq.setdefault(entry["effect_id"], entry["seq"])
        if entries:
            self.head, self.last_ts = entries[-1]["hash"], entries[-1]["ts"]

    def recorded(self, effect_id: str) -> bool:
        """Whether the effect's final entry is durable."""
        return self.final_seq.get(effect_id, self.durable_seq + 1) <= self.durable_seq

    def refresh(self) -> list[dict[str, Any]]:
        """Read what other writers appended; returns every entry not handed out before
        (including those an append read on its way, so a caller's view never skips one)."""
        self._read()
        seen, self._unseen = self._unseen, []
        return seen

    def _read(self) -> None:
        raise NotImplementedError

    def append(self, body: Mapping[str, Any], head: str, fsync: bool) -> dict[str, Any] | None:
        """Seal and write ``body`` if the journal's head is still ``head``; else None."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------- JSON lines


@dataclass(frozen=True)
class Marker:
    seq: int  # the last durable entry's seq (-1: none)
    offset: int  # bytes of the journal up to and including that entry's newline
    hash: str

    def record(self) -> bytes:
        body = f"durable {self.seq} {self.offset} {self.hash}"
        check = hashlib.sha256(body.encode()).hexdigest()[:16]
        return f"{body} {check}\n".encode().ljust(MARKER_SIZE, b" ")


NO_MARKER = Marker(-1, 0, kernel.GENESIS)


def read_marker(lock_path: Path, fd: int | None = None) -> Marker:
    """The durable-head marker kept in the lock file (none yet: seq -1)."""
    try:
        raw = (os.pread(fd, MARKER_SIZE, 0) if fd is not None
               else lock_path.read_bytes()[:MARKER_SIZE]).strip()
    except FileNotFoundError:
        return NO_MARKER
    if not raw:
        return NO_MARKER
    parts = raw.decode("ascii", "replace").split(" ")
    body = " ".join(parts[:4])
    if (len(parts) != 5 or parts[0] != "durable"
            or hashlib.sha256(body.encode()).hexdigest()[:16] != parts[4]):
        raise Refused(0, f"{lock_path}: the durable-head marker is unreadable; run "
                         f"python -m gate repair to inspect the journal")
    return Marker(int(parts[1]), int(parts[2]), parts[3])


@dataclass
class RepairPlan:
    """What reading a journal file found, and what a cut would remove."""

    entries: list[dict[str, Any]]  # the entries kept
    keep_bytes: int  # the file is cut to this size
    size: int
    marker: Marker
    bad_line: int | None = None
    why: str = ""
    cut_entries: int = 0  # intact-looking lines after the bad one that the cut also drops
    marker_missing: bool = False  # the journal has content but no lock file holds its marker

    @property
    def clean(self) -> bool:
        return self.keep_bytes == self.size

    @property
    def durable_damage(self) -> bool:
        """The cut would remove an entry at or before the durable marker."""
        return len(self.entries) <= self.marker.seq

    def describe(self) -> str:
        if self.clean:
            return f"{len(self.entries)} entries, nothing to cut"
        where = (f"line {self.bad_line}: {self.why}" if self.bad_line
                 else "a torn last line (no newline)")
        lost = self.size - self.keep_bytes
        durable = (f"; DURABLE entries up to line {self.marker.seq + 1} would be lost"
                   if self.durable_damage else "; the lock file with the durable-head marker "
                   "is missing: the entries cut may have been durable" if self.marker_missing
                   else "; only entries never made durable")
        return (f"{where}: cut {lost} bytes from offset {self.keep_bytes} (keeps "
                f"{len(self.entries)} entries{durable})")


def has_marker(lock_path: Path) -> bool:
    """Whether the lock file holds a marker record (a missing or blank one holds none)."""
    try:
        return bool(lock_path.read_bytes()[:MARKER_SIZE].strip())
    except FileNotFoundError:
        return False


def plan_repair(path: Path, marker: Marker | None = None) -> RepairPlan:
    """Read a journal file fully; find where its valid chain ends and what lies past it."""
    data = path.read_bytes() if path.exists() else b""
    missing = marker is None and bool(data) and not has_marker(lock_path_of(path))
    marker = marker if marker is not None else read_marker(lock_path_of(path))
    pieces = data.split(b"\n")
    torn = pieces.pop()  # b"" when the file ends in a newline
    tail = extend_chain(pieces, 0, kernel.GENESIS, 0, 0)
    keep = tail.ends[-1] if tail.ends else 0
    plan = RepairPlan(tail.entries, keep, len(data), marker, tail.bad_line, tail.why,
                      marker_missing=missing)
    if tail.bad_line is None and torn:
        plan.why = "torn last line"
    plan.cut_entries = max(0, len(pieces) - len(tail.entries) - 1)
    if len(tail.entries) > marker.seq >= 0 and tail.entries[marker.seq]["hash"] != marker.hash:
        plan.bad_line, plan.why = marker.seq + 1, "differs from the entry the marker made durable"
        plan.entries, plan.keep_bytes = tail.entries[:marker.seq], _end(tail, marker.seq - 1)
    return plan


def _a_torn_entry(path: Path, plan: RepairPlan) -> bool:
    """Whether what a cut removes is the beginning of a journal entry (what a crash leaves),
    not a file that was never a journal."""
    torn = path.read_bytes()[plan.keep_bytes:].decode("utf-8", "replace")
    return _not_a_prefix(torn) is None


def _end(tail: Tail, index: int) -> int:
    return tail.ends[index] if index >= 0 else 0


def lock_path_of(path: Path) -> Path:
    """The lock file beside the journal's real file: a journal reached through a symbolic
    link (current.jsonl -> 2026.jsonl) is locked where the real name is, by everyone."""
    real = path.resolve()
    return real.with_name(real.name + ".lock")


def cut(path: Path, plan: RepairPlan) -> None:
    """Truncate the journal to the plan's kept bytes and fsync; lower the marker if needed."""
    _truncate(path, plan)
    if plan.durable_damage:
        _write_marker(path, plan)


def reset_marker(path: Path, plan: RepairPlan) -> None:
    """Make the kept entries durable and write a fresh marker naming the last of them (for
    a marker that is unreadable: ``python -m gate repair --apply``)."""
    _truncate(path, plan)
    _write_marker(path, plan)


def _truncate(path: Path, plan: RepairPlan) -> None:
    with open(path, "r+b") as f:
        f.truncate(plan.keep_bytes)
        os.fsync(f.fileno())


def _write_marker(path: Path, plan: RepairPlan) -> None:
    """The durable-head marker names the last kept entry (or no entry at all)."""
    last = plan.entries[-1] if plan.entries else None
    marker = Marker(last["seq"], plan.keep_bytes, last["hash"]) if last else NO_MARKER
    fd = os.open(lock_path_of(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, marker.record(), 0)
        os.fsync(fd)
    finally:
        os.close(fd)


class JsonlJournal(Journal):
    """The journal as a JSON-lines file shared by any number of locking writers."""

    def __init__(self, path: str | os.PathLike[str], *, lock: bool = True) -> None:
        super().__init__()
        self.path, self.notes, self.use_lock = Path(path), [], lock
        try:
            self._lock_fd = os.open(lock_path_of(self.path), os.O_RDWR | os.O_CREAT, 0o644)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            if getattr(self, "_lock_fd", None) is not None:
                os.close(self._lock_fd)
            raise Refused(0, f"cannot open the journal {self.path} (and its lock file) for "
                             f"writing: {exc.strerror}") from None
        self.offset = 0
        try:
            with self._locked():
                self._open_checked()
        except Refused:
            self.close()
            raise

    def _one_name(self) -> None:
        """Refuse a journal file with several hard links: the lock is shared (it is the
        file's), but the durable-head marker lives beside a name, and two names would keep
        two markers that disagree. A symbolic link is fine: it leads to the one real name."""
        links = os.fstat(self._fd).st_nlink
        if links > 1:
            raise Refused(0, f"{self.path}: the journal file has {links} hard links; its "
                             f"durable-head marker lives beside one name, so open it by one "
                             f"name (a symbolic link to it is fine)")

    def _open_checked(self) -> None:
        """Under the lock: read the journal; cut what a crash left past the durable head,
        refuse the rest. A lock file without a marker record beside a journal with content
        has lost its marker (it was removed): then nothing tells which entries were
        durable, and only a torn last line that begins an entry is cut."""
        plan = plan_repair(self.path)
        try:
            self._one_name()
            self._check_plan(plan, plan.marker_missing)
        except Refused:
            if not has_marker(lock_path_of(self.path)) and self._lock_file_is_ours():
                lock_path_of(self.path).unlink()  # leave no lock file behind a refusal
            raise
        if not plan.clean:
            cut(self.path, plan)
            self.notes.append(f"{self.path}: {plan.describe()}: cut")
        self._take(plan.entries, own=True)
        self.offset = plan.keep_bytes
        self.durable_seq = plan.marker.seq
        if self.seq - 1 > self.durable_seq or not has_marker(lock_path_of(self.path)):
            os.fsync(self._fd)  # intact entries nobody made durable: now they are, and the
            marker = Marker(self.seq - 1, self.offset, self.head)  # lock file has a record
            os.pwrite(self._lock_fd, marker.record(), 0)
            os.fsync(self._lock_fd)
            self.durable_seq = self.seq - 1

    def _check_plan(self, plan: RepairPlan, marker_lost: bool) -> None:
        """Refuse a plan that would cut durable entries, or entries nobody can tell."""
        if plan.durable_damage:
            raise Refused(plan.bad_line or len(plan.entries) + 1,
                          f"{self.path}: {plan.describe()}; refusing to repair durable "
                          f"entries silently (python -m gate repair shows the cut)")
        if marker_lost and not plan.clean and (plan.bad_line is not None
                                               or not _a_torn_entry(self.path, plan)):
            raise Refused(plan.bad_line or len(plan.entries) + 1, f"{self.path}: {plan.why}; its "
                          f"lock file, which holds the durable-head marker, is missing, so the "
                          f"entries a cut would remove may have been durable and acted on: "
                          f"refusing to cut them (python -m gate repair shows the cut)")

    def _lock_file_is_ours(self) -> bool:
        try:
            named = os.stat(lock_path_of(self.path))
        except FileNotFoundError:
            return False
        held = os.fstat(self._lock_fd)
        return (named.st_ino, named.st_dev) == (held.st_ino, held.st_dev)

    class _Lock:
        def __init__(self, journal: JsonlJournal) -> None:
            self.journal = journal

        def __enter__(self) -> None:
            if not self.journal.use_lock:
                return
            fd = self.journal._lock_fd
            try:
                fcntl.flock(self.journal._fd, fcntl.LOCK_EX)  # the journal's own inode
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # what earlier-layout writers lock
                except OSError:
                    fcntl.flock(self.journal._fd, fcntl.LOCK_UN)
                    raise
            except OSError as exc:
                raise Refused(0, f"{self.journal.path}: cannot lock {exc.strerror}: a writer "
                                 f"that cannot take the journal lock is refused") from None
            if not self.journal._lock_file_is_ours():
                self._release()
                raise Refused(0, f"{lock_path_of(self.journal.path)} was removed or replaced "
                                 f"while this writer had it open: a writer that opens the "
                                 f"journal now locks another file, so this one stops (reopen "
                                 f"the journal)")

        def _release(self) -> None:
            fcntl.flock(self.journal._lock_fd, fcntl.LOCK_UN)
            fcntl.flock(self.journal._fd, fcntl.LOCK_UN)

        def __exit__(self, *exc: object) -> None:
            if self.journal.use_lock:
                self._release()

    def _locked(self) -> JsonlJournal._Lock:
        return JsonlJournal._Lock(self)

    def _read(self) -> None:
        with self._locked():
            self._read_tail()

    def _read_tail(self) -> list[dict[str, Any]]:
        """Under the lock: take the complete lines past our offset (another writer's)."""
        size = os.fstat(self._fd).st_size
        tail = Tail()
        if size > self.offset:
            pieces = os.pread(self._fd, size - self.offset, self.offset).split(b"\n")
            torn = pieces.pop()
            tail = extend_chain(pieces, self.seq, self.head, self.last_ts, self.offset)
        if size < self.offset or (size > self.offset and (tail.bad_line is not None or torn)):
            self._damaged_under_us(tail)
        self._take(tail.entries)
        self.offset = tail.ends[-1] if tail.ends else self.offset
        self.durable_seq = self._marker().seq
        return tail.entries

    def _marker(self) -> Marker:
        return read_marker(lock_path_of(self.path), self._lock_fd)

    def _damaged_under_us(self, tail: Tail) -> None:
        """A bad or torn tail while running: cut it if nothing durable is in it, else refuse."""
        plan = plan_repair(self.path, self._marker())
        if plan.durable_damage or len(plan.entries) < self.seq:
            raise Refused(plan.bad_line or 0, f"{self.path}: {plan.describe()}; the journal "
                          f"changed under this writer (a writer without the lock?)")
        cut(self.path, plan)
        self.notes.append(f"{self.path}: {plan.describe()}: cut")
        tail.entries = plan.entries[self.seq:]
        tail.ends = [plan.keep_bytes] if tail.entries else []

    def append(self, body: Mapping[str, Any], head: str, fsync: bool) -> dict[str, Any] | None:
        with self._locked():
            self._read_tail()
            if self.head != head:
                return None
            entry, line = kernel.seal(body, self.seq, self.head)
            data = line.encode("utf-8")
            os.write(self._fd, data)
            self.offset += len(data)
            self._take([entry], own=True)
            end = self.offset
        if fsync:
            self._make_durable(entry, end)
        return entry

    def _make_durable(self, entry: dict[str, Any], end: int) -> None:
        """Sync outside the lock, so several writers' syncs overlap and the file system
        commits them together (group commit); then raise the marker (never lower it) and
        sync it. Whoever's sync covers a line, the marker only names entries already synced."""
        os.fdatasync(self._fd)
        with self._locked():
            if self._marker().seq < entry["seq"]:
                os.pwrite(self._lock_fd, Marker(entry["seq"], end, entry["hash"]).record(), 0)
        os.fdatasync(self._lock_fd)
        self.durable_seq = max(self.durable_seq, entry["seq"])

    def close(self) -> None:
        os.close(self._fd)
        os.close(self._lock_fd)


# ---------------------------------------------------------------- SQLite


class SqliteJournal(Journal):
    """The journal as rows of a SQLite database in WAL mode, same lines as the JSONL file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path, self.notes = Path(path), []
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=60)
        self._setup()
        self._sync: str | None = None
        self.refresh()

    def _setup(self) -> None:
        """WAL mode and the table; a writer creating the file at the same moment can make
        SQLite answer "locked" without waiting, so retry for a while."""
        for attempt in range(600):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY "
                                "KEY, hash TEXT NOT NULL, line TEXT NOT NULL)")
                return
            except sqlite3.OperationalError:
                if attempt == 599:
                    raise
                time.sleep(0.05)

    def _read(self) -> None:
        rows = self.db.execute("SELECT line FROM journal WHERE seq >= ? ORDER BY seq",
                               (self.seq,)).fetchall()
        self._check_rows(rows)

    def _check_rows(self, rows: list[tuple[str]]) -> list[dict[str, Any]]:
        lines = [row[0].encode("utf-8", "surrogatepass") for row in rows]
        tail = extend_chain(lines, self.seq, self.head, self.last_ts, 0)
        if tail.bad_line is not None:
            raise Refused(tail.bad_line, f"{self.path}: line {tail.bad_line}: {tail.why}")
        self._take(tail.entries)
        self.durable_seq = self.seq - 1
        return tail.entries

    def _synchronous(self, mode: str) -> None:
        if self._sync != mode:
            self.db.execute(f"PRAGMA synchronous={mode}")
            self._sync = mode

    def append(self, body: Mapping[str, Any], head: str, fsync: bool) -> dict[str, Any] | None:
        self._synchronous("FULL" if fsync else "NORMAL")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            rows = self.db.execute("SELECT line FROM journal WHERE seq >= ? ORDER BY seq",
                                   (self.seq,)).fetchall()
            self._check_rows(rows)
            if self.head != head:
                self.db.execute("ROLLBACK")
                return None
            entry, line = kernel.seal(body, self.seq, self.head)
            self.db.execute("INSERT INTO journal (seq, hash, line) VALUES (?, ?, ?)",
                            (entry["seq"], entry["hash"], line[:-1]))
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self._take([entry], own=True)
        self.durable_seq = entry["seq"] if fsync else self.durable_seq
        return entry

    def export(self) -> str:
        """The journal as JSON lines (what ``python -m kernel check`` reads)."""
        return "".join(line + "\n" for (line,) in
                       self.db.execute("SELECT line FROM journal ORDER BY seq"))

    def close(self) -> None:
        self.db.close()


def open_journal(path: str | os.PathLike[str]) -> Journal:
    """A SQLite journal for .db/.sqlite/.sqlite3 paths, else a JSON-lines file."""
    if Path(path).suffix in (".db", ".sqlite", ".sqlite3"):
        return SqliteJournal(path)
    return JsonlJournal(path)
