"""State-graph and trace API over a loaded Model (for bisimulation and trace checks).

States are tuples of TLA+ values ordered like `model.var_names`; `as_dict`
and `from_dict` convert to and from {variable: value}. `from_python` turns
plain Python data into TLA+ values (dict -> function/record, list -> tuple,
set -> frozenset), `to_python` goes back.
"""
import contextlib
import io
from collections import deque

import tla

from .bfs import PY_ERRORS, guarded
from .errors import TLAError
from .frontend import normalise
from .values import FnDict, ModelValue, RecFn, enum, is_set, make_fn


def initial_states(model):
    """All initial states (tuples), in generation order, without duplicates."""
    out = []
    guarded(model.init_fn, None, out.append, what="the initial predicate")
    return list(dict.fromkeys(out))


def successors(model, state):
    """[(action label, successor tuple)] for one state, duplicates removed."""
    out = []
    guarded(model.next_labeled, state, lambda t, label: out.append((label, t)),
            what="the next-state relation")
    return list(dict.fromkeys(out))


def is_initial(model, state):
    return tuple(state) in set(initial_states(model))


def is_step(model, state, nxt):
    """Whether state -> nxt satisfies the next-state relation (stuttering excluded)."""
    target = tuple(nxt)
    return any(t == target for _, t in successors(model, tuple(state)))


def violated_invariants(model, state):
    """Names of the cfg invariants that state violates."""
    return [name for name, inv in model.invariants
            if guarded(inv, tuple(state), what=f"invariant {name}") is not True]


class StateGraph:
    """Reachable states (index = BFS order), edges and labels."""

    def __init__(self, states, initial, edges):
        self.states = states      # list of state tuples
        self.initial = initial    # indexes of initial states
        self.edges = edges        # index -> list of (label, successor index)

    def __len__(self):
        return len(self.states)


def explore(model, max_states=None, use_constraints=True):
    """Breadth-first reachable graph of the model (cfg constraints applied)."""
    index = {}
    states = []
    edges = []
    queue = deque()

    def add(t):
        if t not in index:
            index[t] = len(states)
            states.append(t)
            edges.append([])
            queue.append(t)
        return index[t]

    def allowed(s, t):
        if not use_constraints:
            return True
        if any(guarded(c, t) is not True for c in model.constraints):
            return False
        return s is None or all(guarded(a, s, t) is True for a in model.action_constraints)

    initial = [add(t) for t in initial_states(model) if allowed(None, t)]
    while queue:
        s = queue.popleft()
        i = index[s]
        for label, t in successors(model, s):
            if not allowed(s, t):
                continue
            if max_states is not None and t not in index and len(states) >= max_states:
                raise TLAError(f"state graph larger than max_states={max_states}")
            edges[i].append((label, add(t)))
    return StateGraph(states, initial, edges)


def validate_trace(model, trace, allow_stuttering=True):
    """Check a behaviour step by step; trace is a list of state dicts or tuples.

    Returns (True, None) or (False, (position, reason)) with a 0-based position.
    """
    states = [from_dict(model, s) if isinstance(s, dict) else tuple(s) for s in trace]
    if not states:
        return True, None
    if states[0] not in set(initial_states(model)):
        return False, (0, "the first state is not an initial state")
    for i in range(1, len(states)):
        s, t = states[i - 1], states[i]
        if allow_stuttering and s == t:
            continue
        if not is_step(model, s, t):
            return False, (i, "no action of the next-state relation leads here")
    return True, None


def as_dict(model, state):
    return dict(zip(model.var_names, state, strict=False))


def from_dict(model, values):
    missing = [v for v in model.var_names if v not in values]
    if missing:
        raise TLAError(f"state lacks variables {', '.join(missing)}")
    return tuple(from_python(values[v]) for v in model.var_names)


def from_python(v):
    """Plain Python data -> TLA+ value."""
    if isinstance(v, (bool, int, str, ModelValue, FnDict)):
        return v
    if isinstance(v, dict):
        return make_fn({from_python(k): from_python(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return tuple(from_python(x) for x in v)
    if isinstance(v, (set, frozenset)):
        return frozenset(from_python(x) for x in v)
    raise TLAError(f"cannot convert {v!r} to a TLA+ value")


def to_python(v):
    """TLA+ value -> plain Python data (functions become dicts, tuples stay tuples)."""
    if isinstance(v, tuple):
        return tuple(to_python(x) for x in v)
    if isinstance(v, FnDict):
        return {to_python(k): to_python(x) for k, x in v.items()}
    if isinstance(v, RecFn):
        return to_python(v.value())
    if is_set(v):
        return frozenset(to_python(x) for x in enum(v))
    return v


def evaluate(model, expression, state=None):
    """Evaluate a TLA+ expression (text) in the root module, optionally in a state."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            node = tla.parse_expr(normalise(expression))
    except Exception:
        raise TLAError(f"cannot parse expression {expression!r}") from None
    fn = model.compiler.state_function(node, model.env, "eval")
    s = tuple(state) if state is not None else tuple(None for _ in model.var_names)
    try:
        return fn(s)
    except PY_ERRORS as exc:
        raise TLAError(f"evaluation error: {exc}") from None
