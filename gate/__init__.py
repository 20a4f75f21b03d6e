"""The real runtime around the pure kernel: shared journals, the gate, the crash harness.

Modules: ``journal`` (one interface with a conditional append; a JSON-lines file with a lock
and a durable-head marker, and SQLite), ``runtime`` (``Gate``: atomic read-decide-append
steps, ``recover()`` that settles every effect; the ``effect`` decorator), ``__main__``
(``python -m gate status | repair | export``), ``loopback`` (a target service in its own
process with a SQLite ledger) and ``crash`` (the SIGKILL and power-loss harness). This
package does I/O; the kernel package does none.
"""

from gate.journal import (
    Journal,
    JsonlJournal,
    Refused,
    SqliteJournal,
    open_journal,
    plan_repair,
)
from gate.runtime import Gate, GateError, Target, effect, recover, wall_clock_ms

__all__ = ["Gate", "GateError", "Journal", "JsonlJournal", "Refused", "SqliteJournal",
           "Target", "effect", "open_journal", "plan_repair", "recover", "wall_clock_ms"]
