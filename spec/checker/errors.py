"""Error type shared by every stage of the checker.

A TLAError carries a one-line message and, when known, a (file, line, column)
position; `str()` renders it as `file:line:col: message`.
"""


class TLAError(Exception):
    """A problem in the spec, the cfg or during evaluation (exit code 150)."""

    def __init__(self, message, where=None):
        super().__init__(message)
        self.message = message
        self.where = where  # (file, line, column) 1-based, or None

    def __str__(self):
        if self.where:
            path, line, col = self.where
            return f"{path}:{line}:{col}: {self.message}"
        return self.message


class UsageError(Exception):
    """Bad command-line usage (exit code 254)."""
