"""A loopback target service for the crash harness: its own process, a SQLite ledger.

How it works. ``serve`` listens on 127.0.0.1 only (a port the OS picks, written to a file),
one JSON request per connection, a thread per connection, and stops after ``lifetime``
seconds or a ``stop`` request, so no loop is unbounded. The ledger is the ground truth the
harness judges against: every request received (``sends``: effect id, deadline, arrival
time, outcome) and every application (``applies``). Each trial (``run``) declares its tier in
the ``runs`` table: 1 dedupes by key and can be looked up, 1d only dedupes, 2 can only be
looked up, 3 neither. The in-flight bound of DESIGN.md section 4 is ``honours_deadline``: a
request that arrives after its deadline is recorded as ``late`` and never applied. A seeded
delay of up to 20 ms before applying widens the window in which a worker dies between the
target's commit and the answer. ``LoopbackTarget`` is the gate-side adapter.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import socketserver
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import kernel

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (run TEXT PRIMARY KEY, tier TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS closed (run TEXT NOT NULL, effect_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sends (run TEXT NOT NULL, effect_id TEXT NOT NULL,
    deadline INTEGER NOT NULL, ts INTEGER NOT NULL, outcome TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS applies (run TEXT NOT NULL, effect_id TEXT NOT NULL,
    ts INTEGER NOT NULL, payload_digest TEXT NOT NULL);
"""
DEDUP_WINDOW = 600_000
CAPABILITIES = {
    "1": kernel.Capabilities(dedupes=True, queryable=True, dedup_window=DEDUP_WINDOW),
    "1d": kernel.Capabilities(dedupes=True, queryable=False, dedup_window=DEDUP_WINDOW),
    "2": kernel.Capabilities(dedupes=False, queryable=True),
    "3": kernel.Capabilities(dedupes=False, queryable=False),
}
TIMING = kernel.Timing(send_timeout=250, settle_margin=100, dedup_margin=1_000)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ledger(path: str | Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    return db


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.request.settimeout(5)
        try:
            request = json.loads(self.rfile.readline())
            reply = self.server.answer(request)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            self.wfile.write(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass  # the worker died before the answer: exactly the case under test


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, ledger_path: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ledger_path = ledger_path
        self.local = threading.local()

    def db(self) -> sqlite3.Connection:
        if not hasattr(self.local, "db"):
            self.local.db = ledger(self.ledger_path)
        db: sqlite3.Connection = self.local.db
        return db

    def answer(self, r: dict[str, Any]) -> dict[str, Any]:
        op, db = r["op"], self.db()
        if op == "stop":
            threading.Thread(target=self.shutdown, daemon=True).start()
            return {"ok": True}
        tier = db.execute("SELECT tier FROM runs WHERE run = ?", (r["run"],)).fetchone()[0]
        if op == "facts":
            closed = db.execute("SELECT 1 FROM closed WHERE run = ? AND effect_id = ?",
                                (r["run"], r["effect_id"])).fetchone()
            return {"facts": {"open": closed is None}}
        if op == "lookup":
            if not CAPABILITIES[tier].queryable:
                return {"error": f"tier {tier} cannot be looked up"}
            return {"found": self._applied(db, r["run"], r["effect_id"])}
        if op == "apply":
            return self._apply(db, r, tier)
        return {"error": f"unknown op {op}"}

    @staticmethod
    def _applied(db: sqlite3.Connection, run: str, eid: str) -> bool:
        return db.execute("SELECT 1 FROM applies WHERE run = ? AND effect_id = ?",
                          (run, eid)).fetchone() is not None

    def _apply(self, db: sqlite3.Connection, r: dict[str, Any], tier: str) -> dict[str, Any]:
        arrived = now_ms()
        seed = hashlib.sha256(f"{r['run']}:{r['key']}:{r['deadline']}".encode()).digest()
        time.sleep(seed[0] % 21 / 1000)
        db.execute("BEGIN IMMEDIATE")
        try:
            ts = now_ms()
            if ts > r["deadline"]:
                outcome = "late"
            elif CAPABILITIES[tier].dedupes and self._applied(db, r["run"], r["key"]):
                outcome = "deduped"
            else:
                outcome = "applied"
                db.execute("INSERT INTO applies VALUES (?, ?, ?, ?)",
                           (r["run"], r["key"], ts, kernel.payload_digest(r["payload"])))
            db.execute("INSERT INTO sends VALUES (?, ?, ?, ?, ?)",
                       (r["run"], r["key"], r["deadline"], arrived, outcome))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return {"ok": outcome != "late"}


def serve(ledger_path: Path, port_file: Path, lifetime: float = 3600) -> None:
    """Run the target until ``lifetime`` seconds pass or a stop request comes."""
    ledger(ledger_path).close()
    server = _Server(ledger_path)
    parent, end = os.getppid(), time.monotonic() + lifetime

    def watchdog() -> None:  # bounded: stops at the lifetime or when the supervisor is gone
        while time.monotonic() < end and os.getppid() == parent:
            time.sleep(0.5)
        server.shutdown()
    threading.Thread(target=watchdog, daemon=True).start()
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever(poll_interval=0.05)
    server.server_close()


def call(port: int, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One request; None when no answer came in time."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(json.dumps(request).encode() + b"\n")
            line = s.makefile("rb").readline()
    except OSError:
        return None
    reply: dict[str, Any] | None = json.loads(line) if line else None
    return reply


class LoopbackTarget:
    """The gate's adapter for the loopback service (one trial's run id and tier)."""

    def __init__(self, port: int, run: str, tier: str) -> None:
        self.port, self.run, self.capabilities = port, run, CAPABILITIES[tier]

    def _ask(self, request: dict[str, Any], timeout: float = 5) -> dict[str, Any]:
        reply = call(self.port, {"run": self.run, **request}, timeout)
        if reply is None or "error" in reply:
            raise kernel.KernelError(f"loopback target: {reply and reply.get('error')}")
        return reply

    def apply(self, key: str, payload: Any, deadline: int) -> bool:
        wait = max(0.01, (deadline - now_ms()) / 1000 + 0.05)
        reply = call(self.port, {"run": self.run, "op": "apply", "key": key,
                                 "payload": payload, "deadline": deadline}, wait)
        return bool(reply and reply.get("ok"))

    def lookup(self, effect_id: str) -> bool:
        return bool(self._ask({"op": "lookup", "effect_id": effect_id})["found"])

    def facts(self, effect_id: str) -> dict[str, Any]:
        facts: dict[str, Any] = self._ask({"op": "facts", "effect_id": effect_id})["facts"]
        return facts
