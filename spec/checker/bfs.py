"""Breadth-first state exploration with TLC's counting rules.

States are tuples of values; `seen` maps a state's key (the state itself, its
symmetry representative or its VIEW) to its index in `states`, so hashing
happens once per successor. `parents` holds each state's predecessor index,
giving shortest traces. Per TLC: invariants are checked on every new
successor before the state/action constraints decide whether it is stored;
a state with no successor at all is a deadlock; depth counts BFS levels
from 1. With liveness properties the edges are kept for the SCC analysis.
"""
import gc
import sys
import time
from array import array

from .errors import TLAError
from .symmetry import representative

PY_ERRORS = (TypeError, KeyError, IndexError, ValueError, ZeroDivisionError, RecursionError,
             AttributeError, NameError)


KNOWN_MAX = 400000  # successors remembered as generated (forgotten all at once beyond)


class Result:
    """Outcome of a run; `to_json()` gives the CLI's JSON object."""

    def __init__(self):
        self.result = "ok"
        self.violated = None
        self.distinct_states = 0
        self.states_generated = 0
        self.depth = 0
        self.trace = None       # list of (action label, state dict)
        self.cycle_back = None  # for lassos: "stuttering" or 1-based index
        self.error = None
        self.seconds = 0.0

    @property
    def trace_length(self):
        return None if self.trace is None else len(self.trace)

    def to_json(self):
        from .values import show
        out = {"result": self.result, "violated": self.violated,
               "distinct_states": self.distinct_states,
               "states_generated": self.states_generated, "depth": self.depth,
               "trace_length": self.trace_length, "seconds": round(self.seconds, 3)}
        if self.error:
            out["error"] = self.error
        if self.trace is not None:
            out["trace"] = [{"action": label, "state": {k: show(v) for k, v in st.items()}}
                            for label, st in self.trace]
            if self.cycle_back is not None:
                out["cycle_back"] = self.cycle_back
        return out


def guarded(fn, *args, what=None, where=None):
    try:
        return fn(*args)
    except TLAError as exc:
        raise located(exc, what, where) from None
    except PY_ERRORS as exc:
        raise located(TLAError(f"evaluation error: {type(exc).__name__}: {exc}"), what,
                      where) from None


def located(exc, what, where):
    if what and "while evaluating" not in exc.message:
        exc.message += f" (while evaluating {what})"
    if exc.where is None:
        exc.where = where
    return exc


GC_GAP_MAX = 16  # checkpoints (of 4096 states each) between collections at most
# states expanded before the next-state relation is rebuilt with its branches remembered
# (memo.block_memos): building that costs about what a few thousand states do
BRANCH_MEMOS_AFTER = 16384


def sharer(n, parent=False, pools=None):
    """share(state): the state rebuilt from one stored copy of each variable's value.
    With parent=True, share(state, parent): a value that is the parent's own object (a
    variable the step left alone) is kept without a look-up, the parent being shared."""
    pools = pools or [{} for _ in range(n)]
    names = [f"v{i}" for i in range(n)]
    args = ", ".join(f"d{i}=pools[{i}].setdefault" for i in range(n))
    comma = "," if n == 1 else ""
    if parent:
        body = ", ".join(f"{v} if {v} is p{i} else d{i}({v}, {v})" for i, v in enumerate(names))
        head = f"def share(t, p, {args}):\n    {', '.join(names)}{comma} = t\n" \
               f"    {', '.join(f'p{i}' for i in range(n))}{comma} = p\n"
    else:
        body = ", ".join(f"d{i}({v}, {v})" for i, v in enumerate(names))
        head = f"def share(t, {args}):\n    {', '.join(names)}{comma} = t\n"
    src = f"{head}    return ({body}{comma})" if n else \
        "def share(t, p=None):\n    return t"
    scope = {"pools": pools}
    exec(src, scope)
    return scope["share"]


def canonicaliser(model):
    """key(state): the state, its VIEW, and/or its symmetry representative (symmetry.py)."""
    view = model.view_fn
    rep = representative(model.symmetry)
    if rep is None:
        return view
    if view is None:
        return rep
    return lambda state: view(rep(state))


class Explorer:
    """Breadth-first search. `step_tests` are (name, test) of action properties `[][A]_v`,
    tested on every step as the search generates it, one into a state the constraints
    leave out too, after the invariants; the first failure ends the search, as in TLC.
    `init_tests` are a property's state predicates on the initial states, tested on each
    initial state right after the invariants, before the search, whether the constraints
    keep it or not (TLC's order: "Property P is violated by the initial state" first)."""

    def __init__(self, model, keep_edges=False, progress=None, step_tests=(), init_tests=()):
        self.model = model
        self.keep_edges = keep_edges
        self.step_tests = list(step_tests)
        self.init_tests = list(init_tests)  # (property name, condition or None, predicate)
        self.progress = progress
        self.seen = {}
        self.states = []
        self.parents = array("q")
        self.depth = 0
        self.edges = [] if keep_edges else None
        self.generated = 0
        self.key = canonicaliser(model)
        self.known = {}  # successors met before, as generated -> index (saves their key)
        self.checkpoints = self.next_collection = 0
        self.gc_gap = 1

    def pools(self):
        """The stored object of each distinct value, per variable (sharer), which the
        next-state memos give too (memo.next_memo)."""
        pools = self.model.compiler.value_pools
        return [pools.setdefault(v, {}) for v in self.model.var_names]

    def index(self, t):
        """The index of the state whose class t belongs to, or None."""
        if self.key is None:
            return self.seen.get(t)
        got = self.known.get(t)
        return self.seen.get(self.key(t)) if got is None else got

    def first_bad_invariant(self, state):
        for name, inv in self.model.invariants:
            try:
                ok = inv(state)
            except (TLAError,) + PY_ERRORS:  # again, to locate the error
                ok = guarded(inv, state, what=f"invariant {name}", where=self.model.where(name))
            if ok is not True:
                if ok is not False:
                    raise TLAError(f"invariant {name} is not a boolean")
                return name
        return None

    @staticmethod
    def all_hold(inv_all, *state):
        """True when every invariant surely holds (one call: inv_all(state), or
        Model.invariant_step's inv(parent, state)); False: ask one by one."""
        if inv_all is None:
            return True
        try:
            return inv_all(*state) is True
        except (TLAError,) + PY_ERRORS:
            return False

    def bad_outside(self, inv_step, parent, state):
        """The first invariant a state outside the constraints fails, or None: TLC checks
        them on such a state too (each time it is generated) and keeps it out of the
        graph. inv_step: Model.invariant_step's."""
        return None if self.all_hold(inv_step, parent, state) \
            else self.first_bad_invariant(state)

    def first_bad_step(self, s, t, new):
        """("property", name) of the first action property step s -> t fails, or None;
        ("invariant", name) instead when t (new: not met before) fails an invariant too,
        since TLC tests a state's invariants before its step."""
        for name, test in self.step_tests:
            if guarded(test, s, t, what=f"property {name}") is not True:
                m = self.model
                if new and not self.all_hold(m.invariant_all() if m.invariants else None, t):
                    bad = self.first_bad_invariant(t)
                    if bad:
                        return ("invariant", bad)
                return ("property", name)
        return None

    def in_model(self, parent, state, stored=False):
        """Do the constraints keep state (reached from parent)? stored: state is already
        stored, so the state constraints, when they read nothing but the state, held."""
        m = self.model
        if not (stored and getattr(m, "constraints_pure", False)):
            for c in m.constraints:
                if guarded(c, state) is not True:
                    return False
        if parent is not None:
            for a in m.action_constraints:
                if guarded(a, parent, state) is not True:
                    return False
        return True

    def run(self):
        """Explore; returns ("ok"|"invariant"|"property"|"deadlock", name, bad_index,
        extra_state)."""
        m = self.model
        inits = []
        share = sharer(len(m.var_names), pools=self.pools())
        m.compiler.tlc_level[0] = 0  # TLC's level of the states made and checked, from 0
        guarded(m.init_fn, None, inits.append, what="the initial predicate",
                where=m.where(m.cfg.init or m.cfg.spec))
        self.generated += len(inits)
        inv_all = m.invariant_all() if m.invariants else None
        for t in inits:
            if not self.all_hold(inv_all, t):
                bad = self.first_bad_invariant(t)
                if bad:
                    return ("invariant", bad, None, t)
            for name, cond, pred in self.init_tests:
                what = f"property {name}"
                if (cond is None or guarded(cond, t, what=what) is True) \
                        and guarded(pred, t, what=what) is not True:
                    return ("property", name, None, t)
            if not self.in_model(None, t):
                continue
            self.add(share(t), -1)
        return self.loop()

    def add(self, t, parent):
        k = t if self.key is None else guarded(self.key, t)
        n = len(self.states)
        if self.seen.setdefault(k, n) != n:
            return False
        self.states.append(t)
        self.parents.append(parent)
        if self.keep_edges:
            self.edges.append(None)
        return True

    def loop(self):
        m = self.model
        next_fn = m.next_fn
        invs = m.invariants
        key = self.key
        seen = self.seen
        states = self.states
        parents = self.parents
        constrained = bool(m.constraints or m.action_constraints)
        action_constrained = bool(m.action_constraints)
        skip = constrained and getattr(m, "constraints_pure", False)
        deadlock = m.check_deadlock
        keep = self.keep_edges
        level = m.compiler.tlc_level
        idx = 0
        next_level_at = len(states)
        depth = 1 if states else 0
        self.depth = depth
        last = time.monotonic()
        succ = []
        emit = succ.append
        # the fast loop: a set of states; state constraints that read nothing but the
        # state are tested on the states not met before only
        fast = (not constrained or (skip and not action_constrained)) and key is None \
            and not keep and not self.step_tests
        constraints = m.constraints
        # a state outside the constraints passes them and the invariants the same way each
        # time it is met when both read nothing but the state: the set remembers it then
        outside_once = fast and constraints and all(
            m.compiler.effect_free(f) for _, f in invs)
        known = self.known
        share = sharer(len(m.var_names), parent=True, pools=self.pools())
        if fast:  # a set is enough: a state's index is its position in `states`
            seen = self.seen = set(seen)
            add = seen.add
        append_state = states.append
        append_parent = parents.append
        inv_step = m.invariant_step() if invs else None  # (s, t): for t, a successor of s
        branches = getattr(next_fn, "with_branch_memos", None)
        while idx < len(states):
            if branches is not None and idx >= BRANCH_MEMOS_AFTER:
                next_fn, branches = branches(), None
            if idx == next_level_at:
                next_level_at = len(states)
                depth += 1
                self.depth = depth
            s = states[idx]
            level[0] = depth  # TLC's: the successors' level from 0 (s's from 1), in Next and
            # in their invariants and constraints alike
            del succ[:]
            try:
                next_fn(s, emit)
            except (TLAError,) + PY_ERRORS:
                guarded(next_fn, s, emit, what="the next-state relation",
                        where=m.where(m.cfg.next or m.cfg.spec))
            self.generated += len(succ)
            if not succ and deadlock:
                return ("deadlock", None, idx, None)
            if fast:
                n = len(states)
                for t in succ:
                    if t in seen:
                        continue
                    if constraints and not self.in_model(None, t):
                        bad = self.bad_outside(inv_step, s, t)
                        if bad:
                            return ("invariant", bad, idx, t)
                        if outside_once:  # never stored nor expanded: met again, skipped
                            add(share(t, s))
                        continue
                    t = share(t, s)
                    add(t)
                    if inv_step is not None:
                        try:
                            ok = inv_step(s, t)
                        except (TLAError,) + PY_ERRORS:
                            ok = False
                        if ok is not True:
                            states.append(t)
                            parents.append(idx)
                            bad = self.first_bad_invariant(t)
                            if bad is None:
                                raise TLAError("invariant evaluated to a non-boolean")
                            return ("invariant", bad, n, None)
                    append_state(t)
                    append_parent(idx)
                    n += 1
                idx += 1
                if idx & 4095 == 0:
                    last = self.checkpoint(idx, depth, last)
                continue
            out_edges = [] if keep else None
            stepped = set() if self.step_tests else None
            for t in succ:
                # a successor stored before (found as generated) skips the state constraints
                got = (seen.get(t) if key is None else known.get(t)) if skip else None
                if constrained and not ((got is not None and not action_constrained)
                                        or self.in_model(s, t, got is not None)):
                    bad = self.step_tests and self.first_bad_step(s, t, True)
                    if bad:
                        return (*bad, idx, t)
                    bad = self.bad_outside(inv_step, s, t)
                    if bad:
                        return ("invariant", bad, idx, t)
                    continue
                n = len(states)
                if key is None:
                    if got is None and not skip:
                        got = seen.get(t)
                    if got is None:
                        t = share(t, s)
                        seen[t] = n
                    elif self.step_tests:  # the stored copy: its values are the ones memos
                        t = states[got]    # by identity (memo.var_memo) have met before
                else:
                    if got is None and not skip:
                        got = known.get(t)
                    if got is None:  # shared first: the symmetry key remembers values by id
                        t = share(t, s)
                        k = key(t)
                        got = seen.get(k)
                        if got is None:
                            seen[k] = n
                        if len(known) >= KNOWN_MAX:
                            known.clear()
                        known[t] = n if got is None else got
                if self.step_tests and t not in stepped:  # a step several actions take:
                    stepped.add(t)                        # tested once
                    bad = self.first_bad_step(s, t, got is None)
                    if bad:
                        return (*bad, idx, t)
                if keep:
                    out_edges.append(n if got is None else got)
                if got is not None:
                    continue
                for name, inv in (() if self.all_hold(inv_step, s, t) else invs):
                    try:
                        ok = inv(t)
                    except (TLAError,) + PY_ERRORS:
                        ok = guarded(inv, t, what=f"invariant {name}", where=m.where(name))
                    if ok is not True:
                        if ok is not False:
                            raise TLAError(f"invariant {name} evaluated to a non-boolean")
                        states.append(t)
                        parents.append(idx)
                        return ("invariant", name, len(states) - 1, None)
                states.append(t)
                parents.append(idx)
                if keep:
                    self.edges.append(None)
            if keep:
                self.edges[idx] = out_edges
            idx += 1
            if idx & 4095 == 0:
                last = self.checkpoint(idx, depth, last)
        self.depth = depth
        return ("ok", None, None, None)

    def checkpoint(self, idx, depth, last):
        """Every 4096 states expanded: the cyclic garbage made since the last time is
        collected and what survives (mostly states, alive to the end of the run) leaves
        the collector's view for good (check.check keeps automatic collections off: each
        full one walked every stored state again, a fifth of the CPU of a run of 500,000
        states). Most specs make no cyclic garbage at all, and walking the new states
        still cost a twentieth of a run (MCLamportMutex): while collections find nothing,
        the gap between them doubles, up to GC_GAP_MAX checkpoints; one that finds garbage
        sets it back to 1. Progress on stderr every 3 seconds."""
        self.checkpoints += 1
        if self.checkpoints >= self.next_collection:
            self.gc_gap = 1 if gc.collect(1) else min(2 * self.gc_gap, GC_GAP_MAX)
            self.next_collection = self.checkpoints + self.gc_gap
        gc.freeze()
        if self.progress:
            now = time.monotonic()
            if now - last > 3:
                n = len(self.states)
                self.progress(self.generated, n, depth, n - idx)
                return now
        return last

    def path_to(self, idx):
        path = []
        while idx >= 0:
            path.append(idx)
            idx = self.parents[idx]
        return path[::-1]


def label_step(model, s, t, key):
    """The action label of a step s -> t (first matching successor)."""
    found = []

    def emit(state, label):
        if not found and (state == t or (key is not None and key(state) == key(t))):
            found.append(label)
    try:
        model.next_labeled(s, emit)
    except (TLAError,) + PY_ERRORS:
        return "Next"
    return found[0] if found else "Next"


def build_trace(model, states, key):
    trace = []
    prev = None
    for st in states:
        label = "Initial predicate" if prev is None else label_step(model, prev, st, key)
        trace.append((label, dict(zip(model.var_names, st, strict=False))))
        prev = st
    return trace


def print_progress(generated, distinct, depth, queue):
    print(f"Progress({depth}): {generated} states generated, {distinct} distinct states found, "
          f"{queue} states left on queue.", file=sys.stderr, flush=True)
