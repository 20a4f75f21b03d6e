"""spec.checker: an explicit-state TLA+ model checker that reproduces TLC's results.

Command line (from the repo root):

    python -m spec.checker SPEC.tla [-config X.cfg] [--json] [--workers N]

Model checking from Python:

    from spec.checker import check
    r = check("path/Spec.tla", "path/MC.cfg")        # never raises for spec errors
    # options: workers=2 (parallel BFS), check_deadlock=False, progress=True (stderr)
    r.result            # "ok" | "invariant" | "property" | "deadlock" | "error"
    r.violated, r.distinct_states, r.states_generated, r.depth, r.trace_length
    r.trace             # [(action label, {var: value})] or None; r.error: message
    r.to_json()         # the CLI's JSON object

State graph and traces (bisimulation against an implementation, trace checks):

    from spec.checker import load, initial_states, successors, explore, validate_trace
    m = load("spec/Kernel.tla", "spec/Kernel.cfg")   # raises TLAError on bad input
    m.var_names                                      # state tuple layout
    initial_states(m)            -> [state tuple]
    successors(m, s)             -> [(action label, state tuple)]
    is_step(m, s, t)             -> bool   (t reachable from s by one Next step)
    violated_invariants(m, s)    -> [invariant name]
    g = explore(m, max_states=None)    # StateGraph: g.states, g.initial, g.edges[i]
                                       # = [(label, j)]; cfg constraints applied
    validate_trace(m, [state dict or tuple, ...], allow_stuttering=True)
                                 -> (True, None) | (False, (position, reason))
    as_dict(m, s), from_dict(m, {var: value})
    from_python(v), to_python(v)  # dict/list/set <-> TLA+ functions/tuples/sets
    evaluate(m, "Cardinality(S)", s)   # evaluate an expression in the root module

Lower level (what the functions above use; stable for other tools):

    m.init_fn(None, emit)        # emit(state) for each initial state
    m.next_fn(s, emit)           # emit(successor) for each Next step from s (duplicates possible)
    m.next_labeled(s, emit2)     # emit2(successor, action label)
    m.invariants                 # [(name, fn(state) -> bool)]
    m.constraints, m.action_constraints, m.view_fn, m.symmetry, m.check_deadlock

Not supported (reported as errors naming the construct and its position):
unbounded quantifiers and CHOOSE, temporal quantifiers (\\EE, \\AA), -+->, \\cdot,
\\A over a non-constant set in an action that assigns variables, TLCExt's operators other
than AssertEq, TLCNoOp and TLCCache (where they are evaluated), real numbers, TLC's
-simulate and checkpointing. Temporal properties of any other shape are checked (the
direct checks of liveness.py, else the tableau of ltl.py). RandomElement and the
Randomization module draw from a fixed seed (rt.RANDOM_SEED), so every run explores the
same model.

TLA+ values are Python objects: int, bool, str, frozenset (or lazy sets),
tuple (any function with domain 1..n, so sequences), FnDict (other functions
and records: a dict never changed once built, made by `fn_dict`), ModelValue.
Equal values compare equal and hash alike, so states can be put in sets and
dicts directly.
"""
from .api import (
                  StateGraph,
                  as_dict,
                  evaluate,
                  explore,
                  from_dict,
                  from_python,
                  initial_states,
                  is_initial,
                  is_step,
                  successors,
                  to_python,
                  validate_trace,
                  violated_invariants,
)
from .check import check, load
from .errors import TLAError

__all__ = ["check", "load", "TLAError", "StateGraph", "as_dict", "evaluate", "explore",
           "from_dict", "from_python", "initial_states", "is_initial", "is_step", "successors",
           "to_python", "validate_trace", "violated_invariants"]
