"""The liveness graph's fast paths against the slow ones they replace.

WF_/SF_ of the next-state relation itself reads its steps off the explored edges
(Graph.facts_from_edges) instead of running the action again on every state; BFS levels
come from one pass over the parents instead of a path per state; Tarjan runs on lists.
Each is compared here with the general computation (or a naive reachability closure)
on small specs with self-loops, stuttering steps and subscripts over some variables.
"""
import random
from types import SimpleNamespace

import pytest

from spec.checker import load
from spec.checker.bfs import Explorer
from spec.checker.liveness import Graph, PropertyChecker

from .conftest import write_spec

SPECS = {
    "self_loops": ("""
        VARIABLES x, y
        Init == x = 0 /\\ y \\in {0, 1}
        Next == \\/ x' = (x + 1) % 3 /\\ y' = y
                \\/ x' = x /\\ y' = 1 - y
                \\/ UNCHANGED <<x, y>>
        Spec == Init /\\ [][Next]_<<x, y>> /\\ WF_<<x, y>>(Next)
        Live == []<>(x = 0)
        """, "SPECIFICATION Spec\nPROPERTY Live\n"),
    "sub_subscript": ("""
        VARIABLES x, y
        Init == x = 0 /\\ y = 0
        Next == \\/ x' = 1 - x /\\ UNCHANGED y
                \\/ y' = (y + 1) % 4 /\\ UNCHANGED x
        Spec == Init /\\ [][Next]_<<x, y>> /\\ WF_x(Next) /\\ SF_y(Next)
        Live == <>(y = 3)
        """, "SPECIFICATION Spec\nPROPERTY Live\n"),
    "terminates": ("""
        VARIABLE n
        Init == n \\in 1..6
        Next == \\/ n > 1 /\\ n' \\in {n - 1, n - 2} \\cap 1..6
                \\/ n = 1 /\\ UNCHANGED n
        Spec == Init /\\ [][Next]_n /\\ WF_n(Next)
        Live == <>(n = 1)
        """, "SPECIFICATION Spec\nPROPERTY Live\n"),
}


def graph_of(tmp_path, body, cfg):
    spec, cfg_path = write_spec(tmp_path, body, cfg)
    model = load(spec, cfg_path)
    props = PropertyChecker(model)
    explorer = Explorer(model, keep_edges=True)
    assert explorer.run()[0] == "ok"
    return Graph(explorer, model, props.fairness), props


def as_sets(facts):
    enabled, targets = facts
    return list(enabled), [set(t) for t in targets]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fairness_of_next_read_off_the_edges(tmp_path, name):
    graph, props = graph_of(tmp_path, *SPECS[name])
    assert props.fairness and graph.graph_is_next
    for _, action, test, step, sub in props.fairness:
        assert action is graph.model.next_fn
        fast = as_sets(graph.fairness_facts(action, test, step, sub))
        graph.graph_is_next = False
        slow = as_sets(graph.fairness_facts(action, test, step, sub))
        graph.graph_is_next = True
        assert fast == slow, name


@pytest.mark.parametrize("name", sorted(SPECS))
def test_levels_and_sccs(tmp_path, name):
    graph, _ = graph_of(tmp_path, *SPECS[name])
    assert graph.levels() == [len(graph.ex.path_to(i)) for i in range(graph.n)]
    inside = [i % 3 != 1 for i in range(graph.n)]
    got = {frozenset(c) for c in graph.sccs(inside)}
    assert got == naive_sccs(graph.succ, inside), name
    assert {frozenset(c) for c in graph.sccs([True] * graph.n)} == \
        naive_sccs(graph.succ, [True] * graph.n)


@pytest.mark.parametrize("seed", range(20))
def test_sccs_on_random_graphs(seed):
    """Seeded random graphs with cross edges into finished components; the components
    of a region, then of the graph less some edges (as Graph.without_steps makes it),
    then of the whole graph again (the cycles Graph.cyclic remembers are the whole
    graph's, whichever edges the first call saw)."""
    rng = random.Random(seed)
    n = rng.randint(2, 12)
    succ = [[rng.randrange(n) for _ in range(rng.randint(0, 3))] for _ in range(n)]
    fewer = [[j for j in out if rng.random() < 0.7] for out in succ]
    inside = [rng.random() < 0.8 for _ in range(n)]
    graph = SimpleNamespace(n=n, succ=fewer, all_succ=succ, _cyclic=None)
    graph.cyclic = lambda: Graph.cyclic(graph)  # type: ignore[arg-type]
    graph.tarjan = lambda inside, edges: Graph.tarjan(graph, inside, edges)  # type: ignore
    for edges, region in ((fewer, inside), (succ, inside), (succ, [True] * n)):
        graph.succ = edges
        got = {frozenset(c) for c in Graph.sccs(graph, region)}  # type: ignore[arg-type]
        assert got == naive_sccs(edges, region), f"seed {seed}: {edges} {region}"


def naive_sccs(succ, inside):
    """Nontrivial SCCs by mutual reachability (quadratic; for small graphs only)."""
    n = len(succ)
    reach = []
    for v in range(n):
        seen, todo = set(), [v] if inside[v] else []
        while todo:
            i = todo.pop()
            for j in succ[i]:
                if inside[j] and j not in seen:
                    seen.add(j)
                    todo.append(j)
        reach.append(seen)
    comps = set()
    for v in range(n):
        if inside[v]:
            comp = frozenset([v] + [w for w in reach[v] if v in reach[w]])
            if len(comp) > 1:
                comps.add(comp)
    return comps


def test_recursive_function_as_a_memoised_argument(run_spec):
    """A RECURSIVE operator remembers results by argument; a recursive function passed to
    it is hashed by its whole value, computed once (different per state here)."""
    body = """
    VARIABLE k
    RECURSIVE Sum(_, _)
    Sum(f, S) == IF S = {} THEN 0 ELSE LET e == CHOOSE e \\in S : TRUE
                                       IN f[e] + Sum(f, S \\ {e})
    g[i \\in 0..3] == IF i = 0 THEN k ELSE g[i - 1] + i
    Init == k = 0
    Next == k < 5 /\\ k' = k + 1
    Total == Sum(g, 0..3) = 4 * k + 10 /\\ Sum(g, {1, 2}) = 2 * k + 4
    """
    r = run_spec(body, "INIT Init\nNEXT Next\nINVARIANT Total\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.distinct_states) == ("ok", 6), r.error
