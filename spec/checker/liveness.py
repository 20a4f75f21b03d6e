"""Temporal properties on the explored state graph, under WF_/SF_ fairness.

Each PROPERTY is split into obligations: `[]P` (checked as an invariant
during BFS), `[][A]_v` (every step, tested by the explorer as the search generates
it: bfs.Explorer.step_tests, as TLC does), `<>P`, `[]<>P`, `<>[]P`, `P ~> Q`, plain
state predicates (initial states only), `[]<><<A>>_v`, `<>[][A]_v`, WF/SF (whole spec
formulas, also through INSTANCE), `[](P => []Q)`, `[](P => <>[]Q)`, `[]P => <>Q`, disjunctions of
`[]<>P` and `[]<><<A>>_v` (WF written out), conjunctions and `\\A x \\in S` of these,
and, on the initial states where a state predicate c holds (`c => F`,
`IF c THEN F ELSE G`), F among `<>P`, `[]P`, `<>[]P` and predicates. Any other
temporal formula (nested [] and <>, ~ of a temporal formula, WF/SF inside a property)
is checked through its negation's tableau in product with the graph (ltl.py).
A fairness condition on an action that leaves variables unassigned finds the
action's steps by testing each edge of the graph. A violation of a liveness
obligation is a fair behaviour that ends in a region of the graph: e.g. for
`[]<>P`, forever in states where ~P holds. We look for such an ending by
strongly connected components of the region
(Tarjan), keeping an SCC when every WF/SF condition is met inside it
(an <<A>>_v step occurs in it, or A is disabled somewhere (WF) / everywhere
(SF; otherwise the enabled states are removed and the rest re-split), or by
a single state that stutters forever while no fair action is enabled. The
counterexample is a lasso: shortest prefix, then a cycle that visits what
the SCC needs; its length counts prefix and cycle states once.
"""
from collections import deque

from . import ltl
from .compiler import name_of
from .errors import TLAError
from .frontend import canonical_op, pos
from .model import expand_forall, is_temporal, ref_node
from .scope import ArgB, DefB


class Obligation:
    def __init__(self, kind, name, preds, cond=None):
        self.kind = kind    # always | action | init | eventually | often | stable | leadsto
        #                     | reach (P => []Q from initial states, or [](P => []Q))
        #                     | settle ([](P => <>[]Q)) | wf | sf | often_step
        #                     | settle_step (<>[][A]_v)
        self.name = name
        self.preds = preds  # compiled state functions (or a transition function)
        self.cond = cond    # state function: the obligation is on initial states where it holds


class PropertyChecker:
    def __init__(self, model):
        self.model = model
        self.obligations = []
        self.conds = []  # (node, env, holds) of the enclosing `c =>` and IF c THEN/ELSE
        for name in model.cfg.properties:
            self.decompose(ref_node(name), model.env, name)
        graph_kinds = {"eventually", "often", "stable", "leadsto", "wf", "sf",
                       "often_step", "often_any", "reach", "settle", "settle_step", "general"}
        self.needs_graph = any(o.kind in graph_kinds for o in self.obligations)
        self.step_tests = [(o.name, o.preds[0]) for o in self.obligations
                           if o.kind == "action"]  # tested by the search: bfs.Explorer
        # state predicates on the initial states: the explorer tests them on every initial
        # state, one outside the constraints too, as it tests the invariants (as TLC does)
        self.init_tests = [(o.name, o.cond, o.preds[0]) for o in self.obligations
                           if o.kind == "init"]
        for o in self.obligations:
            if o.kind == "always" and o.cond is None:
                model.invariants.append((o.name, o.preds[0]))
            elif o.kind == "always":  # c => []P: P in every state reachable from a c state
                o.kind = "reach"
                o.preds = [lambda s: True, o.preds[0]]
                self.needs_graph = True
        self.fairness = []  # only properties of infinite behaviours ask about fairness
        if any(o.kind in graph_kinds - {"reach"} for o in self.obligations):
            for f in model.fairness:
                self.fairness.append((f.kind, *model.sub_action_fns(f.action, f.env),
                                      model.state_fn(f.subscript, f.env)))

    # --- decomposition ----------------------------------------------------------
    def decompose(self, node, env, name):
        kind = name_of(node)
        c = self.model.compiler
        if kind == "Parentheses":
            return self.decompose(node.expression, env, name)
        if kind == "Let" and is_temporal(node, env):  # LET d IN F: F with d defined
            return self.decompose(node.expression, c.let_env(node, env), name)
        if kind == "VerticalList" and node.operator == "/\\":
            for item in node.arguments:
                self.decompose(item.expression, env, name)
            return
        if kind == "SubexpressionReference":
            target, args, tenv = c.resolve_subexpr(node, env)
            if isinstance(target, DefB) and not target.params and not args:
                return self.decompose(target.node.definiens, target.env, name)
            if isinstance(target, DefB) and len(target.params) == len(args) and args \
                    and not target.recursive and not target.node.function:  # I!Prop(Op, x)
                return self.decompose(target.node.definiens, c.param_env(target, args, env),
                                      name)
        if kind == "Quantification" and node.quantifier == "\\A" and is_temporal(node, env):
            for e in expand_forall(c, node, env):
                self.decompose(node.predicate, e, name)
            return
        if kind == "OperatorApplication":
            op = canonical_op(node.operator)
            args = node.arguments or []
            if op == "/\\" and len(args) == 2:
                for a in args:
                    self.decompose(a, env, name)
                return
            if not args:
                b = env.get(node.operator)
                if isinstance(b, DefB) and not b.params and is_temporal(b.node.definiens, b.env):
                    return self.decompose(b.node.definiens, b.env, name)
                if isinstance(b, ArgB) and is_temporal(b.node, b.env):
                    return self.decompose(b.node, b.env, name)
            else:  # a temporal formula with parameters: op(TRUE) with op(b) == [][b]_x
                b = env.get(node.operator)
                if isinstance(b, DefB) and len(b.params) == len(args) and not b.recursive \
                        and not b.node.function:
                    benv = c.param_env(b, args, env)
                    if is_temporal(b.node.definiens, benv):
                        return self.decompose(b.node.definiens, benv, name)
            if op == "[]" and len(args) == 1:
                return self.decompose_always(args[0], env, name)
            if op == "<>" and len(args) == 1:
                inner = strip(args[0])
                box = strip(inner.arguments[0]) if is_op(inner, "[]") else None
                if name_of(box) == "SubscriptedAction" and box.operator == "[":
                    fn = c.transition_function(_box_action(box), env, "property_action")
                    self.add_fns("settle_step", name, [fn], box, env)
                    return
                if is_op(inner, "[]") and not is_temporal(inner.arguments[0], env):
                    self.add("stable", name, [(inner.arguments[0], env)])
                    return
                if not is_temporal(inner, env):
                    self.add("eventually", name, [(inner, env)])
                    return
            if op == "~>" and len(args) == 2:
                p, q = args
                if not is_temporal(p, env) and not is_temporal(q, env):
                    self.add("leadsto", name, [(p, env), (q, env)])
                    return
            if op == "=>" and len(args) == 2 and not is_temporal(args[0], env):
                return self.under(args[0], env, True, args[1], env, name)
            if op == "=>" and len(args) == 2 and is_op(strip(args[0]), "[]") \
                    and is_op(strip(args[1]), "<>"):
                p, q = strip(args[0]).arguments[0], strip(args[1]).arguments[0]
                if not is_temporal(p, env) and not is_temporal(q, env):
                    # []P => <>Q: no fair behaviour stays in P /\ ~Q forever
                    self.add("eventually", name, [(q, env), (p, env)])
                    return
        if self.often_any(node, env, name):
            return
        if kind == "If" and not is_temporal(node.predicate, env):
            self.under(node.predicate, env, True, node.then, env, name)
            return self.under(node.predicate, env, False, node.else_, env, name)
        if kind == "Fairness":
            m = self.model
            fns = [*m.sub_action_fns(node.action, env), m.state_fn(node.subscript, env)]
            self.add_fns(node.operator[:2].lower(), name, fns, node, env)
            return
        if not is_temporal(node, env):
            self.add("init", name, [(node, env)])
            return
        self.add_general(node, env, name)

    def often_any(self, node, env, name):
        """`[]<>P \\/ []<><<A>>_v \\/ ...` (the form WF_v(A) unfolds to): True once added."""
        parts = disjuncts(node, env)
        if len(parts) < 2:
            return False
        preds, steps = [], []
        for d, denv in parts:
            if not is_op(d, "[]") or not is_op(strip(d.arguments[0]), "<>"):
                return False
            inner = strip(strip(d.arguments[0]).arguments[0])
            if name_of(inner) == "SubscriptedAction" and inner.operator == "<<":
                steps.append(self.model.compiler.transition_function(inner, denv,
                                                                     "property_step"))
            elif not is_temporal(inner, denv):
                preds.append(self.model.state_fn(inner, denv))
            else:
                return False
        self.add_fns("often_any", name, [preds, steps], node, env)
        return True

    def under(self, cond, cenv, holds, node, env, name):
        """Decompose node as an obligation on the initial states where cond is `holds`."""
        self.conds.append((cond, cenv, holds))
        try:
            self.decompose(node, env, name)
        finally:
            self.conds.pop()

    def cond_fn(self):
        if not self.conds:
            return None
        fns = [(self.model.state_fn(n, e), holds) for n, e, holds in self.conds]
        return lambda s: all((f(s) is True) == holds for f, holds in fns)

    def decompose_always(self, arg, env, name):
        inner = strip(arg)
        if name_of(inner) == "Let" and is_temporal(inner, env):  # [](LET d IN F)
            return self.decompose_always(inner.expression,
                                         self.model.compiler.let_env(inner, env), name)
        if is_op(inner, "=>") and not is_temporal(inner.arguments[0], env):
            p, q = inner.arguments[0], strip(inner.arguments[1])
            if is_op(q, "[]") and not is_temporal(q.arguments[0], env):
                self.add("reach", name, [(p, env), (q.arguments[0], env)], everywhere=True)
                return
            if is_op(q, "<>") and is_op(strip(q.arguments[0]), "[]") \
                    and not is_temporal(strip(q.arguments[0]).arguments[0], env):
                self.add("settle", name, [(p, env), (strip(q.arguments[0]).arguments[0], env)],
                         everywhere=True)
                return
        if name_of(inner) == "SubscriptedAction" and inner.operator == "[":
            action = _box_action(inner)
            fn = self.model.compiler.transition_function(action, env, "property_action")
            fn = self.model.lifted_step_test(fn, action, env)
            self.add_fns("action", name, [fn], inner, env)
            return
        if is_op(inner, "<>") and name_of(strip(inner.arguments[0])) == "SubscriptedAction":
            fn = self.model.compiler.transition_function(strip(inner.arguments[0]), env,
                                                         "property_step")
            self.add_fns("often_step", name, [fn], inner, env)
            return
        if is_op(inner, "<>") and not is_temporal(inner.arguments[0], env):
            self.add("often", name, [(inner.arguments[0], env)])
            return
        if is_op(inner, "=>") and len(inner.arguments) == 2:
            p, q = inner.arguments
            q = strip(q)
            if is_op(q, "<>") and not is_temporal(p, env) \
                    and not is_temporal(q.arguments[0], env):
                self.add("leadsto", name, [(p, env), (q.arguments[0], env)])
                return
        if not is_temporal(inner, env):
            self.add("always", name, [(inner, env)])
            return
        self.add_general(arg, env, name, always=True)

    def add(self, kind, name, preds, everywhere=False):
        """An obligation; under an enclosing condition only for the kinds that look at
        initial states (`[]`-rooted ones are checked from every reachable state)."""
        fns = [self.model.state_fn(n, e) for n, e in preds]
        cond = self.cond_fn()
        if cond is not None and (everywhere or kind not in ("init", "eventually", "stable",
                                                            "always")):
            raise TLAError(f"unsupported form of temporal property {name}: a condition on "
                           f"the initial state before this formula",
                           pos(preds[0][0], preds[0][1].get(" path", "?")))
        self.obligations.append(Obligation(kind, name, fns, cond))

    def add_general(self, node, env, name, always=False):
        """Any other temporal formula (`[]node` when always): its negation's tableau,
        searched in product with the graph (ltl.py); refused by name where it has a
        construct the translation does not know."""
        tree = ltl.Formula(self, name).tree(node, env)
        if always:
            tree = ("always", tree)
        self.add_fns("general", name, [ltl.negation_normal(tree, negate=True)], node, env)

    def add_fns(self, kind, name, fns, node, env):
        """An obligation on steps or fairness: refused under an initial-state condition."""
        if self.conds:
            raise TLAError(f"unsupported form of temporal property {name}: a condition on "
                           f"the initial state before a step or fairness formula",
                           pos(node, env.get(" path", "?")))
        self.obligations.append(Obligation(kind, name, fns))

    # --- checking --------------------------------------------------------------
    def check(self, explorer, result):
        states = explorer.states
        inits = [i for i in range(len(states)) if explorer.parents[i] < 0]
        graph = Graph(explorer, self.model, self.fairness) if self.needs_graph else None
        for o in self.obligations:
            found = graph and graph.violation(o, inits)
            if found is not None:
                prefix, cycle = found
                return self.report(result, o, prefix, cycle, explorer)
        return None

    def report(self, result, o, prefix, cycle, explorer):
        from .bfs import build_trace
        path = prefix + (cycle[1:] if cycle and cycle != "stutter" else [])
        result.result = "property"
        result.violated = o.name
        states = [explorer.states[i] if isinstance(i, int) else i for i in path]
        result.trace = build_trace(self.model, states, explorer.key)
        if cycle == "stutter":
            result.cycle_back = "stuttering"
        elif cycle:
            result.cycle_back = len(prefix)
        return result


def disjuncts(node, env):
    """[(disjunct, env)] of a disjunction, through parentheses and definitions without
    parameters; a single element when node is no disjunction."""
    node = strip(node)
    if name_of(node) == "VerticalList" and node.operator == "\\/":
        return [p for item in node.arguments for p in disjuncts(item.expression, env)]
    if is_op(node, "\\/") and len(node.arguments) == 2:
        return [p for a in node.arguments for p in disjuncts(a, env)]
    if name_of(node) == "OperatorApplication" and not node.arguments:
        b = env.get(node.operator)
        if isinstance(b, DefB) and not b.params and is_temporal(b.node.definiens, b.env):
            inner = disjuncts(b.node.definiens, b.env)
            if len(inner) > 1:
                return inner
    return [(node, env)]


def strip(node):
    while name_of(node) == "Parentheses":
        node = node.expression
    return node


def is_op(node, op):
    return name_of(node) == "OperatorApplication" and canonical_op(node.operator) == op \
        and node.arguments


def _box_action(sub):
    from tla import _ast as tla_ast
    return tla_ast.SubscriptedAction(operator="[", action=sub.action, subscript=sub.subscript,
                                     start=sub.start)


class Graph:
    """The explored graph with per-edge fairness facts."""

    def __init__(self, explorer, model, fairness):
        self.ex = explorer
        self.model = model
        self.real = {}
        self.states = explorer.states
        self.succ = self.all_succ = [e or [] for e in explorer.edges]
        self._cyclic = None
        self._stutter = None
        self.n = len(self.states)
        m = model  # the edges are exactly the next-state relation's steps
        self.graph_is_next = explorer.key is None and not m.constraints \
            and not m.action_constraints
        self._levels = None
        self.fair = [self.fairness_facts(action, test, step, sub)
                     for _, action, test, step, sub in fairness]
        self.kinds = [f[0] for f in fairness]

    def fairness_facts(self, action, test, step, sub):
        """(enabled[i], fair_targets[i]) for <<A>>_v; when A leaves variables unassigned,
        `test` picks its steps among each state's successors (see Model.sub_action_fns)."""
        st = self.states
        if action is self.model.next_fn and self.graph_is_next:
            return self.facts_from_edges(sub)
        enabled = [False] * self.n
        targets = [()] * self.n
        for i, s in enumerate(st):
            vs = sub(s)
            out = []
            try:
                action(s, out.append)
            except TLAError:
                out, test = [], step
            tset = set()
            for t in out:
                if sub(t) != vs:
                    enabled[i] = True
                    if test is None:
                        j = self.ex.index(t)
                        if j is not None:
                            tset.add(j)
            if test is not None:
                tset = {j for j, t in self.real_steps(i) if test(s, t) is True and sub(t) != vs}
                enabled[i] = enabled[i] or bool(tset)
            targets[i] = tset
        return enabled, targets

    def facts_from_edges(self, sub):
        """fairness_facts of the next-state relation itself: its steps are the edges."""
        subs = [sub(s) for s in self.states]
        try:
            apart = len(set(subs)) == self.n  # v tells the states apart (v = vars, say)
        except (TLAError, TypeError):  # a value that cannot be hashed: compare them
            apart = False
        if apart:
            targets = [{j for j in out if j != i} for i, out in enumerate(self.succ)]
        else:
            targets = [{j for j in out if j != i and subs[j] != subs[i]}
                       for i, out in enumerate(self.succ)]
        return [bool(t) for t in targets], targets

    def violation(self, o, inits):
        n = self.n
        st = self.states
        if o.kind in ("always", "init", "action"):  # tested during the search
            return None
        if o.kind == "reach":
            return self.reach_bad(o, inits)
        if o.kind == "eventually":
            region = [o.preds[0](s) is not True for s in st]
            if len(o.preds) > 1:
                region = [r and o.preds[1](s) is True for r, s in zip(region, st, strict=True)]
            starts = [i for i in inits if region[i]]
            accept = None
        elif o.kind == "often":
            region = [o.preds[0](s) is not True for s in st]
            starts = [i for i in range(n) if region[i]]
            accept = None
        elif o.kind == "stable":
            region = [True] * n
            starts = list(inits)
            bad = [o.preds[0](s) is not True for s in st]
            accept = bad
        elif o.kind == "settle":  # [](P => <>[]Q): from a P state, ~Q infinitely often
            region = [True] * n
            starts = [i for i in range(n) if o.preds[0](st[i]) is True]
            accept = [o.preds[1](s) is not True for s in st]
        elif o.kind in ("wf", "sf"):
            return self.unfair_lasso(o)
        elif o.kind == "often_step":
            return self.without_steps(o.preds[0])
        elif o.kind == "settle_step":
            return self.failing_steps_often(o.preds[0])
        elif o.kind == "general":
            return ltl.violation(self, o.preds[0], inits)
        elif o.kind == "often_any":
            return self.never_again(*o.preds)
        else:  # leadsto: Q is evaluated only where P held or the search goes on from there,
            p, q = o.preds  # as TLC does (x \notin Nat ~> x = "abc" holds where x = 0)
            region = OnDemand(lambda i: q(st[i]) is not True)
            starts = [i for i in range(n) if p(st[i]) is True and region[i]]
            accept = None
        if o.cond is not None:
            starts = [i for i in starts if o.cond(st[i]) is True]
        return self.find_lasso(region, starts, accept, o.kind)

    def real_steps(self, i):
        """[(j, t)]: each successor t of state i kept in the graph, with j its class. Under
        SYMMETRY or VIEW an edge leads to the state of t's class found first, not to t, so
        the successors are generated again and steps tested on them (as TLC does). A step
        that several actions take is listed once, where it first occurs: what is asked of
        a step depends on the step alone."""
        ex = self.ex
        if ex.key is None:
            return [(j, self.states[j]) for j in dict.fromkeys(self.succ[i])]
        got = self.real.get(i)
        if got is None:
            s, out = self.states[i], []
            self.model.next_fn(s, out.append)
            got = self.real[i] = [(j, t) for t in dict.fromkeys(out) if ex.in_model(s, t)
                                  and (j := ex.index(t)) is not None]
        return got

    def steps_without(self, fns):
        """The edges with a real step satisfying none of `fns`."""
        out = []
        for i in range(self.n):
            s = self.states[i]
            keep = {j for j, t in self.real_steps(i) if all(f(s, t) is not True for f in fns)}
            out.append([j for j in self.succ[i] if j in keep])
        return out

    def reach_bad(self, o, inits):
        """P => []Q: a path from a P state (an initial one, or any for [](P => []Q)) to a
        state where Q fails."""
        st = self.states
        p, q = o.preds
        pool = range(self.n) if o.cond is None else [i for i in inits if o.cond(st[i]) is True]
        starts = [i for i in pool if p(st[i]) is True]
        dist, parent = self.region_bfs([True] * self.n, starts)
        bad = [i for i in dist if q(st[i]) is not True]
        if not bad:
            return None
        i = min(bad, key=lambda j: (dist[j], j))
        return self.prefix(i, dist, parent, "reach"), None

    def without_steps(self, step):
        """A fair behaviour that from some point on takes no step satisfying `step`."""
        full = self.succ
        self.succ = self.steps_without([step])
        try:
            return self.find_lasso([True] * self.n, list(range(self.n)), None, "often_step")
        finally:
            self.succ = full

    def failing_steps_often(self, step):
        """A fair behaviour that takes steps failing `step` infinitely often (a
        counterexample to <>[][A]_v): a fair part of a component with such a step
        inside it. Stuttering satisfies [A]_v, so a state that stutters forever is none."""
        every = range(self.n)
        failing = [{j for j, t in self.real_steps(i) if step(self.states[i], t) is not True}
                   for i in every]
        dist, parent = self.region_bfs([True] * self.n, every)
        best = None
        for comp in self.sccs([True] * self.n):
            for part in self.fair_parts(comp):
                members = set(part)
                edge = next(self.fair_edges(failing, part, members), None)
                if edge is None:
                    continue
                entry = min(part, key=lambda i: (dist[i], i))
                cycle = self.cycle(entry, part, None, edge)
                best = shorter(best, (self.prefix(entry, dist, parent, "settle_step"), cycle))
        return None if best is None else best[:2]

    def never_again(self, preds, steps):
        """A fair behaviour that from some point on meets none of `preds` and takes no
        step satisfying one of `steps` (a counterexample to []<>P \\/ []<><<A>>_v)."""
        st = self.states
        full = self.succ
        self.succ = self.steps_without(steps)
        region = [all(p(s) is not True for p in preds) for s in st]
        try:
            return self.find_lasso(region, [i for i in range(self.n) if region[i]], None,
                                   "often_any")
        finally:
            self.succ = full

    def unfair_lasso(self, o):
        """A fair behaviour violating WF_v(A) / SF_v(A): no <<A>>_v step from some point on,
        while <<A>>_v stays enabled (WF) or is enabled infinitely often (SF)."""
        enabled, targets = self.fairness_facts(*o.preds)
        full = self.succ
        self.succ = [[j for j in full[i] if j not in targets[i]] for i in range(self.n)]
        try:
            if o.kind == "wf":
                region, accept = enabled, None
            else:
                region, accept = [True] * self.n, enabled
            starts = [i for i in range(self.n) if region[i]]
            return self.find_lasso(region, starts, accept, o.kind)
        finally:
            self.succ = full

    def find_lasso(self, region, starts, accept, kind):
        dist, parent = self.region_bfs(region, starts)
        best = None
        stutter = self.stutter_fair()
        for i in dist:
            if stutter[i] and (accept is None or accept[i]):
                cand = (self.prefix(i, dist, parent, kind), "stutter")
                best = shorter(best, cand)
        inside = [i in dist for i in range(self.n)]
        for comp in self.sccs(inside):
            for part in self.fair_parts(comp):
                if accept is not None and not any(accept[i] for i in part):
                    continue
                entry = min(part, key=lambda i: (dist[i], i))
                cycle = self.cycle(entry, part, accept)
                cand = (self.prefix(entry, dist, parent, kind), cycle)
                best = shorter(best, cand)
        return None if best is None else best[:2]

    def prefix(self, i, dist, parent, kind):
        tail = []
        while parent[i] is not None:
            tail.append(i)
            i = parent[i]
        return self.ex.path_to(i) + tail[::-1]

    def levels(self):
        """levels[i]: the number of states on the shortest path to state i (parents come
        before their children in `states`, so one pass in index order computes them)."""
        if self._levels is None:
            parents = self.ex.parents
            lv = self._levels = [1] * self.n
            for i in range(self.n):
                p = parents[i]
                if p >= 0:
                    lv[i] = lv[p] + 1
        return self._levels

    def region_bfs(self, region, starts):
        dist = {}
        parent = {}
        queue = deque()
        lv = self.levels()
        for s in sorted(starts, key=lv.__getitem__):
            if s not in dist:
                dist[s] = lv[s]
                parent[s] = None
                queue.append(s)
        succ, pop, push = self.succ, queue.popleft, queue.append
        while queue:
            i = pop()
            d = dist[i] + 1
            for j in succ[i]:
                if j not in dist and region[j]:
                    dist[j] = d
                    parent[j] = i
                    push(j)
        return dist, parent

    def stutter_fair(self):
        """[i]: may a behaviour stutter in state i forever (no fair action enabled)?"""
        if self._stutter is None:
            self._stutter = [not any(col) for col in zip(*(e for e, _ in self.fair))] \
                if self.fair else [True] * self.n
        return self._stutter

    def sccs(self, inside):
        """The nontrivial strongly connected components of the nodes where inside[i]
        (under the edges self.succ, always some of all_succ's)."""
        cyclic = self.cyclic()
        if not any(cyclic):
            return []
        return self.tarjan([a and c for a, c in zip(inside, cyclic, strict=True)], self.succ)

    def cyclic(self):
        """cyclic[i]: state i lies on a cycle of the whole graph. A component of a region
        of it, or of it less some steps, lies within one of the whole graph's: only there
        does sccs look (an acyclic graph, CoffeeCan's, is never searched again)."""
        if self._cyclic is None:
            self._cyclic = bytearray(self.n)
            for comp in self.tarjan([True] * self.n, self.all_succ):
                for i in comp:
                    self._cyclic[i] = 1
        return self._cyclic

    def tarjan(self, inside, succ):
        """Tarjan's algorithm (iterative) over nodes where inside[i]; nontrivial SCCs only
        (of this graph, or of any graph given as succ lists, ltl.Product's)."""
        n = len(inside)
        index = [-1] * n
        low = [0] * n
        on_stack = bytearray(n)
        stack = []
        out = []
        counter = 0
        for root in range(n):
            if not inside[root] or index[root] >= 0:
                continue
            work = [(root, iter(succ[root]))]
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack[root] = 1
            while work:
                v, it = work[-1]
                advanced = False
                for w in it:
                    if not inside[w]:
                        continue
                    if index[w] < 0:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on_stack[w] = 1
                        work.append((w, iter(succ[w])))
                        advanced = True
                        break
                    if on_stack[w] and index[w] < low[v]:
                        low[v] = index[w]
                if advanced:
                    continue
                work.pop()
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = 0
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
        return out

    def fair_edges(self, targets, nodes, members):
        """The steps i -> j among targets (a fair action's, or those a property asks
        for) from nodes into members that the behaviour may take: those among the edges
        searched (self.succ), which lack the steps a property rules out (no <<A>>_v
        step, for []<><<A>>_v)."""
        succ = self.succ
        return ((i, j) for i in nodes for j in targets[i] if j in members and j in succ[i])

    def fair_parts(self, comp):
        """Sub-components of comp in which every fairness condition can be met."""
        return ltl.fair_parts(comp, self, range(self.n), self.fair_edges, self.sccs)

    def cycle(self, entry, part, accept, step=None):
        """A cycle from entry through the SCC's obligations (and the edge `step`) and back."""
        members = set(part)
        targets = []
        for (enabled, fair_targets), kind in zip(self.fair, self.kinds, strict=False):
            order = [entry] + [i for i in part if i != entry]
            edge = next(self.fair_edges(fair_targets, order, members), None)
            if edge is not None:
                targets.append(edge)
            elif kind == "WF":
                node = next((i for i in part if not enabled[i]), None)
                if node is not None:
                    targets.append((node,))
        if accept is not None:
            targets.append((next(i for i in part if accept[i]),))
        if step is not None:
            targets.append(step)
        path = [entry]
        for target in targets:
            path += self.walk(path[-1], target[0], members)[1:]
            if len(target) == 2:
                path.append(target[1])
        if len(path) > 1 and path[-1] == entry:
            return path[:-1]
        back = self.walk(path[-1], entry, members, allow_stay=False)
        return path + back[1:-1]

    def walk(self, src, dst, members, allow_stay=True):
        """Shortest path src -> dst inside members (non-empty when src == dst)."""
        return ltl.shortest_path(self.succ, src, dst, members, allow_stay)


class OnDemand:
    """region[i] = test(i), computed when first asked."""

    def __init__(self, test):
        self.test = test
        self.known = {}

    def __getitem__(self, i):
        got = self.known.get(i)
        if got is None:
            got = self.known[i] = self.test(i)
        return got


def shorter(best, cand):
    if cand[0] is None:
        return best
    length = len(cand[0]) + (0 if cand[1] == "stutter" else len(cand[1]) - 1)
    if best is None or length < best[2]:
        return (cand[0], cand[1], length)
    return best
