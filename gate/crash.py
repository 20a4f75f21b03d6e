"""The real crash harness: SIGKILLs and power-loss images against workers using gate/.

How it works. The supervisor starts the loopback target (gate/loopback.py) in its own
process, then runs trials; each trial is a function of (seed, trial number) and draws: the
tier (1, 1d, 2, 3), the backend (JSONL or SQLite), one to three workers with disjoint
effects (sometimes one effect submitted by all of them), effects whose premise fails, and
how to crash:

- ``point``: chosen workers SIGKILL themselves at a seeded instrumented point (before or
  after an entry is appended, before or after a send) on its n-th occurrence;
- ``random``: the supervisor SIGKILLs chosen workers at a seeded time after each reported
  it was ready (journal open: the gate's active phase, not interpreter start-up);
- ``stop``: the supervisor SIGSTOPs chosen workers at a seeded time for longer than any
  claim (send timeout + settle margin), starts a recovery worker meanwhile, then SIGCONTs
  them: a paused sender resumes after its claim expired and must not land a second time
  (``--stop-share``; none by default, so the other trials' draws are unchanged);
- ``power``: every worker is SIGKILLed at once and the journal is replaced by a power-loss
  image made from what was really fsync'd (each worker logs the journal size and the marker
  at every sync): the unsynced tail dropped, cut at a byte, a sector zeroed or garbled, or
  a subset of its writes kept (JSONL only: SQLite recovers its own torn writes).

In half the SIGKILL trials a worker also runs ``recover()`` while the others are still
sending (it must wait out their claims, never adopt their sends). Then one to three workers
run ``recover()`` at once (sometimes one of them is killed too), and a last recovery follows.
The judge (``judge``, sharing no code with the gate) reads the journal lines with ``json``
alone and the ledger, and checks: applications per effect at most once at tiers 1-2,
requests at most once at tier 3, every effect final, the final receipts equal to the
ledger, no receipt a worker handed out lost, every ledger effect in the journal, and
``python -m kernel check --complete`` valid with the ledger as history.
The seed is printed first; each failure prints the command that reproduces it and keeps its
folder. ``--plant`` switches on a known bug in the workers to watch the judge catch it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kernel
from gate.journal import JsonlJournal, open_journal
from gate.loopback import CAPABILITIES, TIMING, LoopbackTarget, call, ledger, serve
from gate.runtime import Gate

POINTS = ["before:PROPOSED", "after:PROPOSED", "after:AUTHORIZED", "before:DISPATCHED",
          "after:DISPATCHED", "before:send", "after:send", "before:COMMITTED",
          "after:COMMITTED", "after:REFUSED", "after:AMBIGUOUS"]
PLANTS = ("no_lock", "unconditional", "no_claim_wait", "no_fsync")
TIERS = ("1", "1d", "2", "3")
SECTOR = 512
WORKER_TIMEOUT = 60


# ---------------------------------------------------------------- the worker process


def worker_main(args: argparse.Namespace, ready: int) -> int:
    """One worker: open the journal, say ready, submit or recover, print receipts."""
    folder = Path(args.dir)
    if args.fsync_log:
        _log_fsyncs(folder / f"fsync.{os.getpid()}.log", args.plant == "no_fsync")
    journal_path = folder / ("journal.db" if args.backend == "sqlite" else "journal.jsonl")
    journal = (JsonlJournal(journal_path, lock=False)
               if args.plant == "no_lock" and args.backend == "jsonl"
               else open_journal(journal_path))
    gate = Gate(journal, LoopbackTarget(args.port, args.run, args.tier), _lease,
                probe=_prober(args.die_at))
    if args.plant in ("unconditional", "no_claim_wait"):
        _plant(gate, args.plant)
    out = open(folder / f"receipts.{args.name}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
    os.write(ready, b"r")
    os.close(ready)
    if args.mode == "recover":
        receipts = gate.recover()
    else:
        receipts = []
        for n in args.effects:
            proposal = kernel.Proposal(
                payload={"run": args.run, "n": n, "amount": 5 + n, "note": "remboursé €"},
                premises={"open": True}, lease="bot", capabilities=CAPABILITIES[args.tier],
                timing=TIMING, key={"run": args.run, "n": n})
            receipts.append(gate.submit(proposal))
            out.write(json.dumps(receipts[-1].as_json()) + "\n")
            out.flush()
    if args.mode == "recover":
        for r in receipts:
            out.write(json.dumps(r.as_json()) + "\n")
    out.close()
    return 0


def _lease(lease_id: str) -> Any:
    return kernel.Lease(lease_id, expires_at=2**52)


def _prober(die_at: str | None) -> Any:
    point, nth = (die_at.rsplit("#", 1) if die_at else ("", "0"))
    seen = [0]

    def probe(p: str) -> None:
        if p == point:
            seen[0] += 1
            if seen[0] == int(nth):
                os.kill(os.getpid(), signal.SIGKILL)
    return probe


def _log_fsyncs(log: Path, disabled: bool) -> None:
    """Record, at every sync, how much of the journal (or which marker) it made durable:
    what was there when the sync was called, logged once it returned."""
    fd_log = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def wrap(real: Any) -> Any:
        def sync(fd: Any) -> None:
            if disabled:
                return  # planted bug: nothing is ever made durable
            name = os.readlink(f"/proc/self/fd/{fd}")
            before = (f"J {os.fstat(fd).st_size}\n" if name.endswith(".jsonl") else
                      f"M {os.pread(fd, 160, 0).hex()}\n" if name.endswith(".lock") else "")
            real(fd)
            if before:
                os.write(fd_log, before.encode())
        return sync
    os.fsync, os.fdatasync = wrap(os.fsync), wrap(os.fdatasync)


def _plant(gate: Any, plant: str) -> None:
    """Switch on a known bug in this worker (to watch the judge catch it)."""
    if plant == "unconditional":
        journal, real_append = gate.journal, gate.journal.append

        def append(body: Any, head: str, fsync: bool) -> Any:
            journal.refresh()  # appends on whatever the head now is, decision or not
            return real_append(body, journal.head, fsync)
        gate.journal.append = append
    else:  # a view that forgets the claims of DISPATCHED entries: recovery never waits
        real_fold = gate._fold

        def fold(entry: Any) -> None:
            real_fold(entry)
            eid = entry["effect_id"]
            gate.effects[eid] = gate.effects[eid]._replace(claim_until=0)
        gate._fold = fold
        for eid, effect in gate.effects.items():
            gate.effects[eid] = effect._replace(claim_until=0)


# ---------------------------------------------------------------- power-loss images


def durable_state(folder: Path) -> tuple[int, bytes]:
    """What the workers' fsyncs made durable: journal bytes, and the last marker record."""
    size, marker, best = 0, b"", -2
    for log in folder.glob("fsync.*.log"):
        for line in log.read_text().splitlines():
            kind, value = line.split(" ", 1)
            if kind == "J":
                size = max(size, int(value))
            else:
                record = bytes.fromhex(value)
                seq = int(record.split()[1])
                if seq > best:
                    best, marker = seq, record
    return size, marker


def power_loss(folder: Path, rng: random.Random) -> str:
    """Replace the journal by one of the images a power loss could leave; returns its kind."""
    journal, lock = folder / "journal.jsonl", folder / "journal.jsonl.lock"
    data = journal.read_bytes() if journal.exists() else b""
    durable, marker = durable_state(folder)
    durable = min(durable, len(data))
    head, tail = data[:durable], data[durable:]
    kind = rng.choice(["drop", "cut", "zero", "garble", "subset"])
    if kind == "drop" or not tail:
        image = head
    elif kind == "cut":
        image = head + tail[:rng.randrange(len(tail) + 1)]
    elif kind == "subset":
        image = head + _subset(tail, rng)
    else:
        at = durable + rng.randrange(len(tail))  # a sector holding unsynced bytes
        start = max(durable, at // SECTOR * SECTOR)
        length = min(SECTOR - start % SECTOR, len(data) - start)
        fill = (b"\0" * length if kind == "zero"
                else bytes(rng.randrange(256) for _ in range(length)))
        image = data[:start] + fill + data[start + length:]
    journal.write_bytes(image)
    lock.write_bytes(marker)
    return kind


def _subset(tail: bytes, rng: random.Random) -> bytes:
    """Each unsynced write (a line) kept or lost; a lost write before a kept one reads as
    zeros (the file was extended, the page never written)."""
    writes = tail.split(b"\n")
    pieces = [w + b"\n" for w in writes[:-1]] + ([writes[-1]] if writes[-1] else [])
    kept = [rng.random() < 0.5 for _ in pieces]
    last = max((i for i, k in enumerate(kept) if k), default=-1)
    return b"".join(p if k else b"\0" * len(p) for p, k in zip(pieces[:last + 1], kept))


# ---------------------------------------------------------------- the judge


def judge(journal: list[dict[str, Any]], ledger_rows: dict[str, list[tuple[Any, ...]]],
          tier: str, receipts: list[dict[str, Any]], told: list[dict[str, Any]]
          ) -> tuple[list[str], Counter[str]]:
    """Ground truth after recovery. Uses json and the ledger only: no gate or kernel code."""
    problems, counts = [], Counter[str]()
    last: dict[str, str] = {}
    for entry in journal:
        if entry["kind"] not in ("LATE", "REJECTED"):
            last.setdefault(entry["effect_id"], "PROPOSED")
            if last[entry["effect_id"]] not in ("COMMITTED", "REFUSED", "AMBIGUOUS"):
                last[entry["effect_id"]] = entry["kind"]
    applies = Counter(row[0] for row in ledger_rows["applies"])
    sends = Counter(row[0] for row in ledger_rows["requests"])
    for eid, n in applies.items():
        if n > 1 and tier != "3":
            counts["duplicates"] += 1
            problems.append(f"effect {eid[:12]} applied {n} times at tier {tier}")
        if eid not in last:
            counts["lost"] += 1
            problems.append(f"effect {eid[:12]} applied at the target but not in the journal")
    for eid, n in sends.items():
        if n > 1 and tier == "3":
            counts["duplicates"] += 1
            problems.append(f"effect {eid[:12]} sent {n} times at tier 3")
    for eid, kind in last.items():
        if kind not in ("COMMITTED", "REFUSED", "AMBIGUOUS"):
            counts["open"] += 1
            problems.append(f"effect {eid[:12]} left {kind} after recovery")
    final = {r["effect_id"]: r for r in receipts}
    if set(final) != set(last):
        counts["disagreements"] += 1
        problems.append(f"receipts cover {len(final)} effects, the journal {len(last)}")
    for eid, r in final.items():
        problems += _receipt_vs_ledger(eid, r, last.get(eid), applies[eid], counts)
    for r in told:
        if r["recorded"] and last.get(r["effect_id"]) != r["final"]:
            counts["lost"] += 1
            problems.append(f"effect {r['effect_id'][:12]}: a worker reported {r['final']} "
                            f"(recorded) but the journal now says {last.get(r['effect_id'])}")
    return problems, counts


def _receipt_vs_ledger(eid: str, r: dict[str, Any], kind: str | None, applied: int,
                       counts: Counter[str]) -> list[str]:
    wrong = ""
    if r["final"] != kind:
        wrong = f"receipt says {r['final']}, journal {kind}"
    elif r["final"] == "COMMITTED" and not applied:
        wrong = "COMMITTED but never applied"
    elif r["executed"] == "false" and applied:
        wrong = "executed=false but the ledger applied it"
    elif r["executed"] == "true" and not applied:
        wrong = "executed=true but the ledger never applied it"
    elif not r["recorded"]:
        wrong = "final state not recorded durably"
    if wrong:
        counts["disagreements"] += 1
        return [f"effect {eid[:12]}: {wrong}"]
    return []


def history(journal: list[dict[str, Any]], rows: dict[str, list[tuple[Any, ...]]]
            ) -> tuple[list[dict[str, Any]], list[str]]:
    """The ledger as the target history ``kernel check`` reads; a request whose deadline
    matches no DISPATCHED entry is reported here (a send without write-ahead intent)."""
    attempt_of: dict[tuple[str, int], int] = {}
    for e in journal:
        if e["kind"] == "DISPATCHED":
            attempt_of[(e["effect_id"], e["deadline"])] = e["attempt"]
    records, problems = [], []
    for eid, deadline, ts, _ in rows["sends"]:
        attempt = attempt_of.get((eid, deadline))
        if attempt is None:
            problems.append(f"effect {eid[:12]}: a request (deadline {deadline}) that no "
                            f"journaled DISPATCHED entry announced")
            continue
        records.append({"op": "send", "effect_id": eid, "ts": ts, "attempt": attempt})
    records += [{"op": "apply", "effect_id": eid, "ts": ts, "payload_digest": digest}
                for eid, ts, digest in rows["applies"]]
    return records, problems


# ---------------------------------------------------------------- the supervisor


@dataclass
class Trial:
    index: int
    seed: int
    tier: str
    backend: str
    workers: int
    mode: str
    folder: Path
    run: str = ""
    kills: int = 0
    stops: int = 0
    image: str = ""
    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


class Supervisor:
    def __init__(self, seed: int, out: Path, plant: str | None, keep: bool,
                 power_share: float = 0.25, stop_share: float = 0.0) -> None:
        self.seed, self.out, self.plant, self.keep = seed, out, plant, keep
        self.power_share, self.stop_share = power_share, stop_share
        out.mkdir(parents=True, exist_ok=True)
        self.ledger_path = out / "ledger.db"
        port_file = out / "port"
        port_file.unlink(missing_ok=True)
        self.target = subprocess.Popen(
            [sys.executable, "-m", "gate.crash", "target", str(self.ledger_path),
             str(port_file)], cwd=_root())
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline or self.target.poll() is not None:
                raise SystemExit("python -m gate.crash: the loopback target did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        self.db = ledger(self.ledger_path)

    def close(self) -> None:
        call(self.port, {"op": "stop"}, 5)
        try:
            self.target.wait(10)
        except subprocess.TimeoutExpired:
            self.target.kill()

    def draw(self, index: int) -> Trial:
        """The trial's setting: a function of (seed, index, power share) only."""
        rng = random.Random(f"{self.seed}:{index}:{self.power_share}")
        if self.stop_share and rng.random() < self.stop_share:
            mode, backend = "stop", rng.choice(["jsonl", "sqlite"])
        elif rng.random() < self.power_share:
            mode, backend = "power", "jsonl"
        else:
            mode, backend = rng.choice(["point", "random"]), rng.choice(["jsonl", "sqlite"])
        workers = rng.choice([1, 1, 2, 2, 3])
        return Trial(index, self.seed, rng.choice(TIERS), backend, workers, mode,
                     self.out / f"trial-{index}")

    def run(self, trial: Trial) -> Trial:
        rng = random.Random(f"{self.seed}:{trial.index}:run")
        shutil.rmtree(trial.folder, ignore_errors=True)
        trial.folder.mkdir(parents=True)
        trial.run = f"{self.seed}-{trial.index}-{os.getpid()}-{time.time_ns()}"
        self.db.execute("INSERT INTO runs VALUES (?, ?)", (trial.run, trial.tier))
        plan = self._effects(trial, rng)
        procs = [self._start(trial, f"w{i}", "submit", plan[i], self._die_at(trial, rng, i))
                 for i in range(trial.workers)]
        self._crash_phase(trial, rng, procs)
        if trial.mode == "power":
            trial.image = power_loss(trial.folder, rng)
        self._recover_phase(trial, rng)
        self._judge(trial)
        if not trial.problems and not self.keep:
            shutil.rmtree(trial.folder, ignore_errors=True)
        return trial

    def _effects(self, trial: Trial, rng: random.Random) -> list[list[int]]:
        per = [list(range(10 * w, 10 * w + rng.randint(2, 4))) for w in range(trial.workers)]
        if trial.workers > 1 and rng.random() < 0.3:
            for w in per:
                w.append(99)  # one effect submitted by every worker
        for n in sorted({n for w in per for n in w}):
            if rng.random() < 0.1:
                eid = kernel.effect_id(None, {"run": trial.run, "n": n})
                self.db.execute("INSERT INTO closed VALUES (?, ?)", (trial.run, eid))
        return per

    def _die_at(self, trial: Trial, rng: random.Random, worker: int) -> str | None:
        if trial.mode != "point" or (worker > 0 and rng.random() < 0.5):
            return None
        return f"{rng.choice(POINTS)}#{rng.randint(1, 3)}"

    def _start(self, trial: Trial, name: str, mode: str, effects: list[int],
               die_at: str | None) -> Child:
        args = argparse.Namespace(
            dir=str(trial.folder), port=self.port, run=trial.run, tier=trial.tier,
            backend=trial.backend, mode=mode, name=name, effects=effects, die_at=die_at,
            fsync_log=trial.mode == "power" and mode == "submit", plant=self.plant)
        return Child(args, trial.folder / f"stderr.{name}.txt")

    def _crash_phase(self, trial: Trial, rng: random.Random,
                     procs: list[Child]) -> None:
        delays = [rng.uniform(0.0, 0.6) for _ in procs]
        chosen = [trial.mode == "power" or (trial.mode in ("random", "stop") and
                                            (i == 0 or rng.random() < 0.5))
                  for i in range(len(procs))]
        if trial.mode == "stop":
            self._pause_phase(trial, rng, procs, delays, chosen)
            return
        if trial.mode == "power":
            delays = [delays[0]] * len(procs)
        early = rng.uniform(0.0, 0.6) if trial.mode != "power" and rng.random() < 0.5 else None
        for p in procs:
            _wait_ready(p)
        started = time.monotonic()
        events: list[tuple[float, Child | None]] = [
            (d, p) for d, p, kill in zip(delays, procs, chosen) if kill]
        if early is not None:  # recover() while the other workers are still sending
            events.append((early, None))
        for delay, victim in sorted(events, key=lambda x: x[0]):
            time.sleep(max(0.0, started + delay - time.monotonic()))
            if victim is None:
                procs = procs + [self._start(trial, "e0", "recover", [], None)]
            else:
                victim.kill()
        for p in procs:
            trial.kills += _finish(p, trial) == -signal.SIGKILL

    def _pause_phase(self, trial: Trial, rng: random.Random, procs: list[Child],
                     delays: list[float], chosen: list[bool]) -> None:
        """SIGSTOP the chosen workers at their seeded times for 0.4-1.2 s (every claim is
        350 ms), with a recovery worker running meanwhile; then SIGCONT them."""
        for p in procs:
            _wait_ready(p)
        started, pause = time.monotonic(), rng.uniform(0.4, 1.2)
        victims = sorted((d, p) for d, p, c in zip(delays, procs, chosen) if c)
        for delay, victim in victims:
            time.sleep(max(0.0, started + delay - time.monotonic()))
            trial.stops += victim.signal(signal.SIGSTOP)
        procs = procs + [self._start(trial, "e0", "recover", [], None)]
        time.sleep(pause)
        for _, victim in victims:
            victim.signal(signal.SIGCONT)
        for p in procs:
            trial.kills += _finish(p, trial) == -signal.SIGKILL

    def _recover_phase(self, trial: Trial, rng: random.Random) -> None:
        count = rng.choice([1, 2, 3])
        procs = [self._start(trial, f"r{i}", "recover", [], None) for i in range(count)]
        if rng.random() < 0.3:
            _wait_ready(procs[0])
            time.sleep(rng.uniform(0, 0.3))
            procs[0].kill()
        for p in procs:
            trial.kills += _finish(p, trial) == -signal.SIGKILL
        last = self._start(trial, "final", "recover", [], None)
        if _finish(last, trial) != 0:
            trial.problems.append("the last recovery worker failed: see stderr.final.txt")

    def _judge(self, trial: Trial) -> None:
        lines = self._journal_lines(trial)
        rows = {t: self.db.execute(q, (trial.run,)).fetchall() for t, q in (
            ("requests", "SELECT effect_id FROM sends WHERE run = ?"),
            ("sends", "SELECT effect_id, deadline, ts, outcome FROM sends WHERE run = ? "
                      "AND outcome != 'late' ORDER BY rowid"),
            ("applies", "SELECT effect_id, ts, payload_digest FROM applies WHERE run = ? "
                        "ORDER BY rowid"))}
        receipts = _read_jsonl(trial.folder / "receipts.final.jsonl")
        told = [r for pattern in ("receipts.w*.jsonl", "receipts.e*.jsonl")
                for f in trial.folder.glob(pattern) for r in _read_jsonl(f)]
        entries, unreadable = _parse(lines)
        problems, counts = judge(entries, rows, trial.tier, receipts, told)
        records, unannounced = history(entries, rows)
        if unreadable:
            problems.insert(0, unreadable)
            counts["disagreements"] += 1
        trial.problems += problems + unannounced
        trial.counts.update(counts)
        trial.counts["late"] += len(rows["requests"]) - len(rows["sends"])
        trial.counts["disagreements"] += len(unannounced)
        (trial.folder / "history.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records))
        (trial.folder / "export.jsonl").write_text("".join(line + "\n" for line in lines))
        verdict = _kernel_check(trial.folder)
        if verdict:
            trial.counts["disagreements"] += 1
            trial.problems.append(f"python -m kernel check: {verdict}")

    def _journal_lines(self, trial: Trial) -> list[str]:
        if trial.backend == "sqlite":
            import sqlite3
            db = sqlite3.connect(trial.folder / "journal.db")
            try:
                return [row[0] for row in db.execute("SELECT line FROM journal ORDER BY seq")]
            except sqlite3.Error as exc:
                trial.problems.append(f"journal.db unreadable: {exc}")
                return []
            finally:
                db.close()
        path = trial.folder / "journal.jsonl"
        text = path.read_bytes().decode("utf-8", "replace") if path.exists() else ""
        return [line for line in text.split("\n")[:-1]]


def _parse(lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    """Journal lines as JSON objects, up to the first that does not parse."""
    entries = []
    for no, line in enumerate(lines, 1):
        try:
            entries.append(json.loads(line))
        except ValueError:
            return entries, f"journal line {no} is unreadable after recovery"
    return entries, ""


def _kernel_check(folder: Path) -> str:
    """``python -m kernel check export.jsonl --history history.jsonl --complete`` (run in
    this process: the same entry point, without another interpreter start)."""
    from kernel.__main__ import main
    out = io.StringIO()
    argv = ["check", str(folder / "export.jsonl"), "--history", str(folder / "history.jsonl"),
            "--complete"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return "" if code == 0 else " ".join(out.getvalue().split())


class Child:
    """A worker forked from the supervisor (imports already done, so a kill at a random time
    lands in the gate's active phase), reporting "ready" on a pipe once its journal is open."""

    def __init__(self, args: argparse.Namespace, stderr: Path) -> None:
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            os.close(read)
            err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(err, 2)
            code = 1
            try:
                code = worker_main(args, write)
            except BaseException:  # noqa: B036 - report it, whatever it is, then exit
                import traceback
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(write)
        self.ready_fd, self.code = read, None  # type: int, int | None

    def wait_ready(self) -> None:
        os.read(self.ready_fd, 1)  # b"" if it died first

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def signal(self, sig: int) -> bool:
        """Send ``sig`` unless the worker has been reaped; True if it was still running
        (not a zombie waiting to be reaped) when the signal went out."""
        if self.code is not None:
            return False
        try:
            running = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            os.kill(self.pid, sig)
        except (ProcessLookupError, FileNotFoundError):
            return False
        return running != "Z"

    def wait(self, timeout: float) -> int | None:
        end = time.monotonic() + timeout
        while self.code is None and time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.code = os.waitstatus_to_exitcode(status)
                os.close(self.ready_fd)
            else:
                time.sleep(0.005)
        return self.code


def _wait_ready(p: Child) -> None:
    p.wait_ready()


def _finish(p: Child, trial: Trial) -> int:
    code = p.wait(WORKER_TIMEOUT)
    if code is None:
        p.kill()
        trial.problems.append(f"a worker hung for {WORKER_TIMEOUT} s and was killed")
        code = p.wait(10) or -signal.SIGKILL
    if code not in (0, -signal.SIGKILL):
        trial.problems.append(f"a worker exited with status {code} (see stderr.*.txt)")
    return code


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _root() -> Path:
    return Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the command line


@dataclass
class Totals:
    trials: int = 0
    kills: int = 0
    stops: int = 0
    images: int = 0
    multi: int = 0
    failures: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    by: Counter[str] = field(default_factory=Counter)

    def add(self, t: Trial) -> None:
        self.trials += 1
        self.kills += t.kills
        self.stops += t.stops
        self.images += t.mode == "power"
        self.multi += t.workers > 1
        self.failures += bool(t.problems)
        self.counts.update(t.counts)
        self.by[f"{t.mode}/{t.backend}/tier{t.tier}"] += 1

    def met(self, args: argparse.Namespace) -> bool:
        return bool(self.kills >= args.kills and self.images >= args.images
                    and self.multi >= args.multi and self.stops >= args.stops)

    def line(self) -> str:
        c = self.counts
        stops = (f"stops {self.stops} (requests dropped past their deadline "
                 f"{self.counts['late']}), " if self.stops else "")
        return (f"trials {self.trials}, kills {self.kills}, {stops}power-loss images "
                f"{self.images}, "
                f"multi-worker runs {self.multi}: duplicates {c['duplicates']}, lost "
                f"{c['lost']}, left open {c['open']}, disagreements {c['disagreements']}, "
                f"failed trials {self.failures}")


def _repro(args: argparse.Namespace, index: int) -> str:
    plant = f" --plant {args.plant}" if args.plant else ""
    share = f" --power-share {args.power_share}" if args.power_share != 0.25 else ""
    share += f" --stop-share {args.stop_share}" if args.stop_share else ""
    return f"python -m gate.crash --seed {args.seed} --trial {index}{share}{plant} --keep"


def campaign(args: argparse.Namespace) -> int:
    print(f"seed {args.seed}  kills>={args.kills} images>={args.images} "
          f"multi>={args.multi} max-trials {args.max_trials} power-share {args.power_share}"
          f"{'  plant ' + args.plant if args.plant else ''}", flush=True)
    out = Path(args.out or tempfile.mkdtemp(prefix="gate-crash-"))
    sup = Supervisor(args.seed, out, args.plant, args.keep or args.trial is not None,
                     args.power_share, args.stop_share)
    totals, began = Totals(), time.monotonic()
    indexes = [args.trial] if args.trial is not None else range(args.max_trials)
    try:
        for index in indexes:
            trial = sup.run(sup.draw(index))
            totals.add(trial)
            if trial.problems:
                print(f"FAIL trial {index} ({trial.mode} {trial.image} {trial.backend} tier "
                      f"{trial.tier}, {trial.workers} workers): {trial.problems[0]}"
                      f"{f' (+{len(trial.problems) - 1} more)' if len(trial.problems) > 1 else ''}")
                print(f"  repro: {_repro(args, index)}   artefacts: {trial.folder}", flush=True)
                if args.stop_on_failure:
                    break
            if args.progress and totals.trials % args.progress == 0:
                print(f"  {totals.line()} ({time.monotonic() - began:.0f} s)", flush=True)
            if args.trial is None and totals.met(args):
                break
    finally:
        sup.close()
    print(totals.line())
    print(f"wall {time.monotonic() - began:.1f} s; mix {dict(sorted(totals.by.items()))}")
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "trials": totals.trials,
                                               "kills": totals.kills, "images": totals.images,
                                               "multi": totals.multi,
                                               "failures": totals.failures,
                                               **totals.counts}, indent=2, sort_keys=True))
    return 1 if totals.failures else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gate.crash",
        description="Crash the gate for real: SIGKILLs at seeded points and times, power-loss "
                    "images, several workers at once; judge against the target's ledger.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills", type=int, default=50, help="stop once this many SIGKILLs "
                        "were delivered (and the other minimums met)")
    parser.add_argument("--images", type=int, default=0, help="minimum power-loss images")
    parser.add_argument("--multi", type=int, default=0, help="minimum multi-worker trials")
    parser.add_argument("--max-trials", type=int, default=100_000)
    parser.add_argument("--power-share", type=float, default=0.25,
                        help="share of trials that end in a power-loss image")
    parser.add_argument("--stop-share", type=float, default=0.0,
                        help="share of trials that SIGSTOP workers past their claims and "
                        "SIGCONT them while another recovers")
    parser.add_argument("--stops", type=int, default=0, help="minimum SIGSTOPs delivered")
    parser.add_argument("--trial", type=int, help="run only this trial (a repro)")
    parser.add_argument("--plant", choices=PLANTS, help="switch on a known bug in the workers")
    parser.add_argument("--out", help="folder for the ledger and the trials' artefacts")
    parser.add_argument("--keep", action="store_true", help="keep passing trials' folders too")
    parser.add_argument("--stop-on-failure", action="store_true")
    parser.add_argument("--progress", type=int, default=0, help="a summary line every N trials")
    parser.add_argument("--json", help="write the totals to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["target"]:
        serve(Path(argv[1]), Path(argv[2]))
        return 0
    return campaign(_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
