"""spec.checker: an explicit-state TLA+ model checker that reproduces TLC's results."""
from .check import check, load

__all__ = ["check", "load"]
