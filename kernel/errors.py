"""The kernel's typed errors. Every user mistake becomes one of these, never a traceback."""

from __future__ import annotations


class KernelError(Exception):
    """Base class: a clear, one-line explanation of what was wrong."""


class ConfigError(KernelError):
    """A target's capabilities and the kernel's timing configuration are inconsistent."""


class IllegalTransition(KernelError):
    """An event that the state machine does not accept in the current state.

    Raised before anything changes: the effect's state is exactly what it was.
    """

    def __init__(self, state: object, event: object, why: str = "") -> None:
        self.state = state
        self.event = event
        name = type(event).__name__
        shown = getattr(state, "value", state)
        detail = f": {why}" if why else ""
        super().__init__(f"event {name} is not allowed in state {shown}{detail}")


class JournalError(KernelError):
    """A journal line that cannot be accepted (bad JSON, unknown kind, missing field...)."""

    def __init__(self, line_no: int, message: str) -> None:
        self.line_no = line_no
        super().__init__(f"line {line_no}: {message}")
