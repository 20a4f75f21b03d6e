"""Temporal properties of any shape: the tableau of the property's negation, searched in
product with the state graph, as TLC does for what liveness.py has no direct check for
(nested [] and <>, ~ of a temporal formula, WF/SF inside a property, ...).

A formula becomes a small tree (`Formula.tree`): ("atom", atom, positive), ("and", a, b),
("or", a, b), ("always", a), ("eventually", a), ("true",) and ("false",), negations pushed
down to the atoms. An atom is a state predicate, or a predicate of the step leaving the
current state ([A]_v, <<A>>_v, a fairness action's step). The tableau (Gerth, Peled,
Vardi and Wolper's construction, with [] and <> only) is a generalized Büchi automaton:
each node asks some atoms of the current position and passes formulas on to the next
one; for each <>F one acceptance set holds the nodes where <>F is met or not owed.
A counterexample is a fair lasso of the product (state, node) through every acceptance
set; each state may also stutter (a step to itself).
"""
from collections import deque

from .compiler import name_of
from .errors import TLAError
from .frontend import canonical_op, pos
from .model import expand_forall, is_temporal
from .scope import ArgB, DefB

BINARY = {"/\\": "and", "\\/": "or"}


class Atom:
    """A state predicate (test(s)) or a predicate of a step (test(s, t)); or, for a
    fairness condition, ENABLED <<A>>_v and <<A>>_v read off the graph's fairness facts."""

    def __init__(self, kind, test=None, facts=None):
        self.kind = kind    # state | step | enabled | fair_step
        self.test = test
        self.facts = facts  # the fairness condition's functions (Graph.fairness_facts)


class Formula:
    """The tree of a temporal formula; refuses by name what it cannot translate."""

    def __init__(self, checker, name):
        self.checker = checker
        self.model = checker.model
        self.name = name

    def refuse(self, node, env):
        raise TLAError(f"unsupported form of temporal property {self.name}",
                       pos(node, env.get(" path", "?")))

    def tree(self, node, env):
        c = self.model.compiler
        while name_of(node) == "Parentheses":
            node = node.expression
        kind = name_of(node)
        if not is_temporal(node, env):
            return ("atom", Atom("state", self.model.state_fn(node, env)), True)
        if kind == "Let":
            return self.tree(node.expression, c.let_env(node, env))
        if kind == "VerticalList":
            return self.fold(BINARY[node.operator], [(i.expression, env) for i in node.arguments])
        if kind == "Quantification" and node.quantifier in ("\\A", "\\E"):
            op = "and" if node.quantifier == "\\A" else "or"
            return self.fold(op, [(node.predicate, e) for e in expand_forall(c, node, env)])
        if kind == "Fairness":
            return self.fairness(node, env)
        if kind == "If" and not is_temporal(node.predicate, env):
            cond = Atom("state", self.model.state_fn(node.predicate, env))
            return ("or", ("and", ("atom", cond, True), self.tree(node.then, env)),
                    ("and", ("atom", cond, False), self.tree(node.else_, env)))
        if kind == "SubexpressionReference":
            b, args, _ = c.resolve_subexpr(node, env)
            return self.through(b, args, env, node)
        if kind == "OperatorApplication":
            return self.operator(node, env)
        self.refuse(node, env)

    def operator(self, node, env):
        op = canonical_op(node.operator)
        args = node.arguments or []
        if op in ("[]", "<>") and len(args) == 1:
            inner = args[0]
            while name_of(inner) == "Parentheses":
                inner = inner.expression
            if name_of(inner) == "SubscriptedAction":
                return self.step(op, inner, env)
            return ("always" if op == "[]" else "eventually", self.tree(inner, env))
        if op in BINARY and len(args) == 2:
            return self.fold(BINARY[op], [(a, env) for a in args])
        if op == "~" and len(args) == 1:
            return ("not", self.tree(args[0], env))
        if op == "=>" and len(args) == 2:
            return ("or", ("not", self.tree(args[0], env)), self.tree(args[1], env))
        if op == "<=>" and len(args) == 2:
            a, b = self.tree(args[0], env), self.tree(args[1], env)
            return ("or", ("and", a, b), ("and", ("not", a), ("not", b)))
        if op == "~>" and len(args) == 2:
            p, q = self.tree(args[0], env), self.tree(args[1], env)
            return ("always", ("or", ("not", p), ("eventually", q)))
        return self.through(env.get(node.operator), args, env, node)

    def through(self, b, args, env, node):
        """A definition (or argument) whose body is temporal: its body, parameters bound."""
        if isinstance(b, ArgB) and not args:
            return self.tree(b.node, b.env)
        if isinstance(b, DefB) and len(b.params) == len(args) and not b.recursive \
                and not b.node.function:
            benv = self.model.compiler.param_env(b, args, env) if args else b.env
            return self.tree(b.node.definiens, benv)
        self.refuse(node, env)

    def step(self, op, sub, env):
        """[][A]_v: every step satisfies [A]_v; <><<A>>_v: some step satisfies <<A>>_v."""
        from .liveness import _box_action
        c = self.model.compiler
        if op == "[]" and sub.operator == "[":
            test = c.transition_function(_box_action(sub), env, "property_action")
            return ("always", ("atom", Atom("step", test), True))
        if op == "<>" and sub.operator == "<<":
            test = c.transition_function(sub, env, "property_step")
            return ("eventually", ("atom", Atom("step", test), True))
        self.refuse(sub, env)

    def fairness(self, node, env):
        """WF_v(A): []<>~ENABLED <<A>>_v \\/ []<><<A>>_v; SF_v(A): <>[]~ENABLED <<A>>_v
        \\/ []<><<A>>_v."""
        m = self.model
        facts = [*m.sub_action_fns(node.action, env), m.state_fn(node.subscript, env)]
        enabled = ("atom", Atom("enabled", facts=facts), False)
        taken = ("always", ("eventually", ("atom", Atom("fair_step", facts=facts), True)))
        if node.operator.startswith("WF"):
            return ("or", ("always", ("eventually", enabled)), taken)
        return ("or", ("eventually", ("always", enabled)), taken)

    def fold(self, op, parts):
        return fold(op, [self.tree(n, e) for n, e in parts])


def negation_normal(tree, negate=False):
    """tree (negated if asked) with negations on atoms only."""
    kind = tree[0]
    if kind == "not":
        return negation_normal(tree[1], not negate)
    if kind == "atom":
        return ("atom", tree[1], tree[2] != negate)
    if kind in ("true", "false"):
        return (("false",) if kind == "true" else ("true",)) if negate else tree
    if kind in ("and", "or"):
        flip = {"and": "or", "or": "and"}[kind] if negate else kind
        return (flip, negation_normal(tree[1], negate), negation_normal(tree[2], negate))
    flip = {"always": "eventually", "eventually": "always"}[kind] if negate else kind
    return (flip, negation_normal(tree[1], negate))


class Tableau:
    """The automaton of an NNF formula: nodes[k] = (literals, next formulas, the <>F
    met or not owed here); succ[k]; initial node numbers; one acceptance set per <>F.
    Nodes that differ only in formulas processed on the way are one node."""

    def __init__(self, formula):
        self.nodes = []
        self.index = {}
        self.succ = []
        self.eventualities = sorted({f for f in subformulas(formula) if f[0] == "eventually"},
                                    key=repr)
        self.initial = self.expand_all([formula])
        todo = list(self.initial)
        done = set()
        while todo:
            k = todo.pop()
            if k in done:
                continue
            done.add(k)
            self.succ[k] = self.expand_all(list(self.nodes[k][1]))
            todo += self.succ[k]
        self.accepting = [{k for k, (_, _, met) in enumerate(self.nodes) if e in met}
                          for e in self.eventualities]

    def expand_all(self, formulas):
        """The node numbers of every consistent way to meet all `formulas` now."""
        out = []
        work = [(tuple(formulas), frozenset(), frozenset(), frozenset())]
        while work:
            new, lits, nxt, old = work.pop()
            if not new:
                key = (lits, nxt, frozenset(e for e in self.eventualities
                                            if e not in old or e[1] in old))
                if key not in self.index:
                    self.index[key] = len(self.nodes)
                    self.nodes.append(key)
                    self.succ.append([])
                out.append(self.index[key])
                continue
            f, rest = new[0], new[1:]
            if f in old:
                work.append((rest, lits, nxt, old))
                continue
            old2 = old | {f}
            kind = f[0]
            if kind == "true":
                work.append((rest, lits, nxt, old2))
            elif kind == "atom":
                if ("atom", f[1], not f[2]) not in lits:
                    work.append((rest, lits | {f}, nxt, old2))
            elif kind == "and":
                work.append(((f[1], f[2]) + rest, lits, nxt, old2))
            elif kind == "or":
                work.append(((f[1],) + rest, lits, nxt, old2))
                work.append(((f[2],) + rest, lits, nxt, old2))
            elif kind == "always":
                work.append(((f[1],) + rest, lits, nxt | {f}, old2))
            elif kind == "eventually":
                work.append(((f[1],) + rest, lits, nxt, old2))
                work.append((rest, lits, nxt | {f}, old2))
            # "false": no way
        return sorted(set(out))


def subformulas(f):
    yield f
    if f[0] in ("and", "or"):
        yield from subformulas(f[1])
        yield from subformulas(f[2])
    elif f[0] in ("always", "eventually"):
        yield from subformulas(f[1])


def violation(graph, tree, inits):
    """A fair behaviour of the graph satisfying tree (the property's negation, in negation
    normal form), as (prefix, cycle) of state numbers, cycle "stutter" for a behaviour
    that stutters forever in the prefix's last state; None if there is none. Each
    disjunct is searched for alone; in each, conjuncts []<>L and <>[]L (L without
    temporal operators) are asked of the lasso's cycle directly instead of the tableau,
    whose size grows with their number."""
    for part in disjunctive(tree):
        recur, persist, rest = [], [], []
        for f in part:
            if f[0] in ("always", "eventually") and {f[0], f[1][0]} == {"always", "eventually"} \
                    and is_local(f[1][1]):
                (recur if f[0] == "always" else persist).append(f[1][1])
            else:
                rest.append(f)
        tableau = Tableau(fold("and", rest))
        found = Product(graph, tableau, recur, persist).counterexample(inits)
        if found is not None:
            return found
    return None


def disjunctive(tree, most=64):
    """tree as a disjunction of conjunctions (lists of conjuncts), or-junctions under the
    top and-junction multiplied out while there are at most `most` disjuncts."""
    out = [[]]
    for conjunct in junction(tree, "and"):
        options = junction(conjunct, "or")
        if len(out) * len(options) > most:
            options = [conjunct]
        out = [d + [o] for d in out for o in options]
    return out


def junction(tree, op):
    if tree[0] == op:
        return junction(tree[1], op) + junction(tree[2], op)
    return [tree]


def fold(op, trees):
    if not trees:
        return ("true",) if op == "and" else ("false",)
    out = trees[0]
    for t in trees[1:]:
        out = (op, out, t)
    return out


def is_local(tree):
    """No temporal operator: a predicate of one state and the step leaving it."""
    if tree[0] in ("and", "or"):
        return is_local(tree[1]) and is_local(tree[2])
    return tree[0] in ("atom", "true", "false")


class Product:
    """Pairs (state, tableau node), numbered as the search from the initial pairs meets
    them; a pair's successors follow the graph's steps (and stuttering) and the node's
    successors, the step meeting the node's step literals and the next state the next
    node's. recur: what the cycle must meet again and again; persist: what the cycle
    must meet in all its states and steps."""

    def __init__(self, graph, tableau, recur=(), persist=()):
        self.graph = graph
        self.tab = tableau
        self.recur = recur
        self.persist = persist
        self.facts = {}
        self.known = {}
        self.fit = {}
        self.state, self.node, self.steps, self.parent, self.dist = [], [], [], [], []
        self.number = {}

    # --- atoms --------------------------------------------------------------------
    def fairness(self, atom):
        got = self.facts.get(atom)
        if got is None:
            action, test, step, sub = atom.facts
            got = self.facts[atom] = self.graph.fairness_facts(action, test, step, sub)
        return got

    def holds_now(self, atom, i):
        if atom.kind == "enabled":
            return self.fairness(atom)[0][i]
        key = (atom, i)
        got = self.known.get(key)
        if got is None:
            got = self.known[key] = atom.test(self.graph.states[i]) is True
        return got

    def holds_on(self, atom, i, j, t):
        if atom.kind in ("state", "enabled"):
            return self.holds_now(atom, i)
        if atom.kind == "fair_step":
            return j != i and j in self.fairness(atom)[1][i]
        return atom.test(self.graph.states[i], t) is True

    def local(self, tree, i, j, t):
        """A formula without temporal operators on state i and its step to t (state j)."""
        kind = tree[0]
        if kind == "atom":
            return self.holds_on(tree[1], i, j, t) == tree[2]
        if kind == "and":
            return self.local(tree[1], i, j, t) and self.local(tree[2], i, j, t)
        if kind == "or":
            return self.local(tree[1], i, j, t) or self.local(tree[2], i, j, t)
        return kind == "true"

    def fitting(self, i):
        """The tableau nodes whose state literals hold in state i."""
        got = self.fit.get(i)
        if got is None:
            got = self.fit[i] = {k for k, (lits, _, _) in enumerate(self.tab.nodes)
                                 if all(self.holds_now(a, i) == positive for _, a, positive in lits
                                        if a.kind in ("state", "enabled"))}
        return got

    def step_fits(self, i, j, t, k):
        return all(self.holds_on(a, i, j, t) == positive
                   for _, a, positive in self.tab.nodes[k][0]
                   if a.kind in ("step", "fair_step"))

    # --- the product ------------------------------------------------------------------
    def add(self, i, k, parent):
        key = (i, k)
        got = self.number.get(key)
        if got is None:
            got = self.number[key] = len(self.state)
            self.state.append(i)
            self.node.append(k)
            self.steps.append(None)
            self.parent.append(parent)
            self.dist.append(0 if parent is None else self.dist[parent] + 1)
            self.queue.append(got)
        return got

    def build(self, inits):
        """Every pair reachable from an initial one; steps[u] = [(pair, real successor)]."""
        self.queue = deque()
        for i in inits:
            for k in self.tab.initial:
                if k in self.fitting(i):
                    self.add(i, k, None)
        g = self.graph
        while self.queue:
            u = self.queue.popleft()
            i, k = self.state[u], self.node[u]
            out = []
            for j, t in g.real_steps(i) + [(i, g.states[i])]:  # and stuttering
                if not self.step_fits(i, j, t, k):
                    continue
                fit = self.fitting(j)
                for k2 in self.tab.succ[k]:
                    if k2 in fit:
                        out.append((self.add(j, k2, u), t))
            self.steps[u] = out

    # --- the search -----------------------------------------------------------------
    def counterexample(self, inits):
        self.build(inits)
        n = len(self.state)
        # the cycle stays where every persistence holds
        self.succ = [sorted({w for w, t in self.steps[u]
                             if all(self.local(f, self.state[u], self.state[w], t)
                                    for f in self.persist)}) for u in range(n)]
        best = None
        for comp in self.components([True] * n):
            for part in self.fair_parts(comp):
                if not all(any(self.node[u] in acc for u in part) for acc in self.tab.accepting):
                    continue
                members = set(part)
                meets = [next(self.edges_where(f, part, members), None) for f in self.recur]
                if None in meets:
                    continue
                lasso = self.lasso(part, meets)
                if best is None or len(lasso[0]) + len(lasso[1]) < len(best[0]) + len(best[1]):
                    best = lasso
        if best is None:
            return None
        prefix, cycle = best
        if len(set(cycle)) == 1:
            return prefix, "stutter"
        return prefix, cycle

    def edges_where(self, tree, part, members):
        """The edges inside part whose state and step satisfy a local formula."""
        return ((u, w) for u in part for w, t in self.steps[u]
                if w in members and w in self.succ[u]
                and self.local(tree, self.state[u], self.state[w], t))

    def fair_edges(self, targets, part, members):
        return ((u, w) for u in part for w in self.succ[u]
                if w in members and self.state[w] != self.state[u]
                and self.state[w] in targets[self.state[u]])

    def fair_parts(self, comp):
        return fair_parts(comp, self.graph, self.state, self.fair_edges, self.components)

    def components(self, keep):
        """The strongly connected components of the pairs kept: Tarjan's nontrivial ones,
        and each pair alone with a step to itself (stuttering, say)."""
        comps = self.graph.tarjan(keep, self.succ)
        inside = {u for comp in comps for u in comp}
        return comps + [[u] for u in range(len(keep))
                        if keep[u] and u not in inside and u in self.succ[u]]

    def lasso(self, part, meets):
        """(prefix, cycle) of states: to the part's nearest pair, then around the part
        through an accepting pair of each set, each recurrence's edge and each fairness
        condition's step (or, for WF, a state where it is disabled)."""
        members = set(part)
        entry = min(part, key=lambda u: (self.dist[u], u))
        stops = [(next(u for u in part if self.node[u] in acc),) for acc in self.tab.accepting]
        stops += meets
        for (enabled, targets), kind in zip(self.graph.fair, self.graph.kinds, strict=False):
            edge = next(self.fair_edges(targets, part, members), None)
            if edge is not None:
                stops.append(edge)
            elif kind == "WF":
                stops.append((next(u for u in part if not enabled[self.state[u]]),))
        path = [entry]
        while stops:  # the nearest stop next
            reach = self.distances(path[-1], members)
            stop = min(stops, key=lambda st: reach.get(st[0], len(members)))
            stops.remove(stop)
            path += self.walk(path[-1], stop[0], members)[1:]
            if len(stop) == 2:
                path.append(stop[1])
        path += self.walk(path[-1], entry, members, stay=False)[1:-1]
        prefix = []
        u = entry
        while u is not None:
            prefix.append(self.state[u])
            u = self.parent[u]
        return collapse(prefix[::-1]), collapse([self.state[u] for u in path], cyclic=True)

    def distances(self, src, members):
        dist = {src: 0}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for w in self.succ[u]:
                if w in members and w not in dist:
                    dist[w] = dist[u] + 1
                    queue.append(w)
        return dist

    def walk(self, src, dst, members, stay=True):
        return shortest_path(self.succ, src, dst, members, stay)


def fair_parts(comp, graph, state, fair_edges, components):
    """Sub-components of comp (nodes; state[u] the graph state of node u) in which every
    fairness condition of the spec (graph.fair, graph.kinds) is met: an <<A>>_v step
    inside (fair_edges), or A disabled in some node (WF) or in every node (SF); under SF
    the nodes where A is disabled are split into components again and asked again."""
    members = set(comp)
    for (enabled, targets), kind in zip(graph.fair, graph.kinds, strict=False):
        if next(fair_edges(targets, comp, members), None) is not None:
            continue
        if kind == "WF":
            if any(not enabled[state[u]] for u in comp):
                continue
            return []
        if all(not enabled[state[u]] for u in comp):
            continue
        keep = [u in members and not enabled[state[u]] for u in range(len(state))]
        out = []
        for sub in components(keep):
            out += fair_parts(sub, graph, state, fair_edges, components)
        return out
    return [comp]


def shortest_path(succ, src, dst, members, stay=True):
    """The shortest path src -> dst along succ inside members (a cycle when src == dst
    and not stay); dst must be reachable (a strongly connected component)."""
    if src == dst and stay:
        return [src]
    parent = {}
    queue = deque()
    for w in succ[src]:
        if w in members and w not in parent:
            parent[w] = src
            queue.append(w)
    while queue and dst not in parent:
        u = queue.popleft()
        for w in succ[u]:
            if w in members and w not in parent:
                parent[w] = u
                queue.append(w)
    if dst not in parent:
        raise TLAError("internal error: no path inside a strongly connected component")
    path = [dst]
    while path[-1] != src or len(path) == 1:
        path.append(parent[path[-1]])
    return path[::-1]


def collapse(states, cyclic=False):
    """states without repeats of one state in a row (stuttering steps); in a cycle, also
    the last one when it repeats the first."""
    out = [s for n, s in enumerate(states) if n == 0 or s != states[n - 1]]
    if cyclic and len(out) > 1 and out[-1] == out[0]:
        out.pop()
    return out
