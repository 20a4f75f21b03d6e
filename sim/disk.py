"""A simulated disk holding one append-only journal file.

How it works. ``lines`` are the complete lines other processes on the host can already read;
the first ``durable`` of them survived an fsync. A crash drops every line after ``durable``;
if the crash hit while a line was being written (or ``torn`` is asked for and an unflushed
line was lost), a prefix of that line without its newline is left behind: a torn write.
A restarted reader verifies the text and truncates the torn tail before appending again.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any


class Disk:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.entries: list[Any] = []  # what each line encodes, as its writer sealed it
        self.durable = 0
        self.torn = ""

    @property
    def length(self) -> int:
        """Complete lines in the file (what a conditional append compares against)."""
        return len(self.lines)

    def append(self, line: str, fsync: bool, entry: Any = None) -> None:
        self.lines.append(line)
        self.entries.append(entry)
        if fsync:
            self.durable = len(self.lines)

    def text(self) -> str:
        return "".join(self.lines) + self.torn

    def crash(self, rng: Callable[[], random.Random], torn: bool, writing: str | None,
              fsync_lies: bool = False) -> str:
        """Lose what was never flushed; maybe leave a torn last line. Returns the torn text.
        ``rng`` gives the disk's random stream, asked for only when a line is torn (most
        crashes tear nothing, and a fresh stream costs a seeding). ``fsync_lies``: the last
        fsync'd line is lost too (a broken assumption)."""
        if fsync_lies:
            self.durable = max(0, self.durable - 1)
        lost = self.lines[self.durable:]
        del self.lines[self.durable:]
        del self.entries[self.durable:]
        victim = writing if writing is not None else (lost[-1] if lost and torn else None)
        self.torn = ""
        if torn and victim is not None and len(victim) > 2:
            self.torn = victim[:rng().randint(1, len(victim) - 2)]
        return self.torn

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` complete lines and drop any torn tail (after verify)."""
        del self.lines[keep:]
        del self.entries[keep:]
        self.durable = min(self.durable, keep)
        self.torn = ""
