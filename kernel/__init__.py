"""The exactly-once effect kernel: a pure state machine and its reference oracle.

Modules: ``identity`` (effect ids), ``model`` (states, capabilities, timing, leases,
proposals), ``machine`` (the transition table, ``step``, ``replay``), ``recovery`` (the pure
recovery decision), ``journal`` (format, hash chain, ``verify``), ``receipts``,
``invariants`` (K1-K10 over a history), ``oracle`` (``check`` and ``python -m kernel``) and
``view`` (the journal-wide view of claims, budgets and plans; ``status``).
No module here touches files, clocks, randomness, threads or sockets.
"""

from kernel.errors import ConfigError, IllegalTransition, JournalError, KernelError
from kernel.identity import canonical, effect_id, payload_digest
from kernel.journal import GENESIS, Chain, Verdict, seal, verify
from kernel.machine import (
    TRANSITIONS,
    Ack,
    Alert,
    Append,
    Authorize,
    Blocked,
    Command,
    Dispatch,
    Effect,
    Effects,
    Event,
    LookupAnswer,
    Propose,
    Query,
    Recover,
    Reply,
    Restore,
    Send,
    Surface,
    Transition,
    Verification,
    Verify,
    WaitUntil,
    edges,
    replay,
    step,
)
from kernel.model import (
    FINAL_STATES,
    Capabilities,
    Claim,
    Coordination,
    Executed,
    Lease,
    Plan,
    Proposal,
    State,
    Timing,
    View,
    stale_premises,
)
from kernel.receipts import Receipt, receipt, receipts
from kernel.recovery import Decision, Lookup, decide
from kernel.view import Folder, fold, status

__all__ = [
    "FINAL_STATES", "GENESIS", "TRANSITIONS", "Ack", "Alert", "Append", "Authorize",
    "Capabilities", "Chain", "Command", "ConfigError", "Decision", "Dispatch", "Effect",
    "Effects", "Event", "Executed", "IllegalTransition", "JournalError", "KernelError", "Lease",
    "Lookup", "LookupAnswer", "Proposal", "Propose", "Query", "Receipt", "Recover", "Reply",
    "Send", "State", "Surface", "Timing", "Transition", "Verdict", "WaitUntil", "canonical",
    "decide", "edges", "effect_id", "payload_digest", "receipt", "receipts", "replay", "seal",
    "stale_premises", "step", "verify",
    "Blocked", "Claim", "Coordination", "Folder", "Plan", "Restore", "Verification", "Verify",
    "View", "fold", "status",
]

from kernel import invariants, oracle  # noqa: E402  (they build on the names above)

__all__ += ["invariants", "oracle"]
