"""Conformance between spec/Kernel.tla and the Python kernel, and the spec's manifest.

Modules: ``manifest`` (run every MC and broken config, compare with spec/manifest.json),
``mapping`` (kernel state -> spec variables), ``harness`` (the Python kernel driven in the
spec's world, as a state graph), ``bisim`` (the bisimulation check over both graphs) and
``trace`` (``validate_trace``: check a recorded kernel trace step by step against the spec).
"""

from spec.conformance.trace import TraceResult, check, validate_journal, validate_trace

__all__ = ["TraceResult", "check", "validate_journal", "validate_trace"]
