"""LET definitions evaluated once per evaluation of their LET (spec/checker/memo.py).

Each spec is built so that a memo shared too widely changes the verdict: a value
remembered across the iterations of a quantifier, across the choices of a primed
variable, or for a primed mention of the definition. Expected results worked out
by hand.
"""
import re

from spec.checker import bfs, check, codegen, load, memo
from spec.checker.bfs import Explorer

from .conftest import write_spec

NO_DEADLOCK = "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"


def run(tmp_path, body, cfg):
    spec, cfg_path = write_spec(tmp_path, body, cfg)
    r = check(spec, cfg_path)
    return r.result, r.violated, r.distinct_states


def test_one_memo_per_iteration_of_a_quantifier(tmp_path):
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 2 /\\ x' = x + 1
    Each == \\A i \\in 1..x : LET a == {i, i * 1} IN a = {i} /\\ Cardinality(a) = 1
    Some == \\E i \\in 1..x : LET a == {i + 10} IN 12 \\in a
    Fn == [i \\in 1..2 |-> LET a == {i * x} IN a] = <<{x}, {2 * x}>>
    """
    cfg = NO_DEADLOCK + "INVARIANT Each Fn\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 3)
    body += "NotSome == ~Some\n"
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT NotSome\n") == ("invariant", "NotSome", 3)


def test_a_primed_value_is_not_remembered_across_choices(tmp_path):
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = {}
    Next == LET b == {x', x' + 0} IN x = 0 /\\ x' \\in {1, 2} /\\ y' = b /\\ b \\subseteq {x'}
    Tracks == x = 0 \\/ y = {x}
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Tracks\n") == ("ok", None, 3)


def test_a_primed_mention_is_evaluated_in_the_next_state(tmp_path):
    body = """
    VARIABLE x
    Init == x = 0
    Next == LET a == {x, x + 10} IN x < 3 /\\ x' = x + 1 /\\ a' = {x', x' + 10} /\\ a # a'
    """
    assert run(tmp_path, body, NO_DEADLOCK) == ("ok", None, 4)
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = 0
    Next == x < 3 /\\ x' = x + 1 /\\ y' = LET a == {x, x * 1} IN Cardinality(a \\cup a')
    Two == y \\in {0, 2}
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Two\n") == ("ok", None, 4)


def test_a_let_inside_an_action_loop(tmp_path):
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = 0
    Next == \\E i \\in {x + 1, x + 2, x + 3} : LET s == {i, i + 1} IN
                x = 0 /\\ x' = i /\\ y' = Cardinality(s \\cup {x'}) * 10 + Cardinality(s)
    Ok == x = 0 \\/ y = 22
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Ok\n") == ("ok", None, 4)


def test_state_subexpressions_inside_a_recursive_operator(tmp_path):
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = {1}
    RECURSIVE Sum(_)
    Sum(n) == IF n = 0 THEN Cardinality(y \\cup {x}) - Cardinality(y \\cup {x}) ELSE 1 + Sum(n - 1)
    Next == x < 3 /\\ x' = x + Sum(1) /\\ y' = y \\cup {x}
    Ok == Sum(2) = 2 /\\ Cardinality(y \\cup {x}) = Cardinality(y \\cup {x})
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Ok\n") == ("ok", None, 4)


def test_a_repeated_state_expression_in_a_step(tmp_path):
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = {}
    Next == \\E v \\in {x + 1, x + 2} : x < 4 /\\ x' = v /\\ y' = {x' * 2} \\cup {x' * 2}
    Step == [][y' = {x' * 2} \\cup {x' * 2} /\\ Cardinality({x' * 2} \\cup {x' * 2}) = 1]_x
    """
    assert run(tmp_path, body, NO_DEADLOCK + "PROPERTY Step\n") == ("ok", None, 6)


def test_expressions_of_state_values_are_remembered_across_states(tmp_path):
    """A loop that reads only variables is remembered by the identities of their values,
    across states (memo.var_memo): Doubles over x in each state, over x and x' in a step
    (one memo for both); a string literal spelled like a variable of the generated code
    (x is c_0 there) stays as written."""
    body = """
    VARIABLES x, y, z
    Init == x = {} /\\ y = 0 /\\ z = "c_0"
    Next == /\\ y < 6 /\\ y' = y + 1 /\\ z' = z
            /\\ x' = IF y % 2 = 0 THEN x \\cup {y} ELSE x
    Doubles(s) == {2 * e : e \\in s}
    Inv == /\\ \\A d \\in Doubles(x) : d \\div 2 \\in x
           /\\ Cardinality(Doubles(x)) = Cardinality(x)
           /\\ \\A r \\in {[k |-> e, t |-> "c_0"] : e \\in x} : r.t = z
    Step == [][Cardinality(Doubles(x')) = Cardinality(x) + (y % 2)]_y
    """
    cfg = NO_DEADLOCK + "INVARIANT Inv\nPROPERTY Step\n"
    assert run(tmp_path, body, cfg) == ("property", "Step", 1)  # the first step fails it
    model = load(*write_spec(tmp_path, body, cfg))
    assert model.compiler.var_memos, "no expression of state values was remembered"
    body = body.replace("(y % 2)]_y", "((y + 1) % 2)]_y")
    assert run(tmp_path, body, cfg) == ("ok", None, 7)


def test_a_quantifier_over_several_names_is_remembered_by_state_values(tmp_path):
    """`\\A a, b \\in 1..12` (too many copies to unroll) compiles to one generator of two
    for-clauses over a constant. Both names are bound in it (codegen.local_scope), so
    the loop reads x alone and is remembered by x's value (memo.var_memo)."""
    body = """
    VARIABLES x, y
    Init == x = {1} /\\ y = 0
    Next == y < 4 /\\ y' = y + 1 /\\ x' = IF y % 2 = 0 THEN x \\cup {y + 2} ELSE x
    Inv == \\A a, b \\in 1..12 : a \\in x /\\ b \\in x => a + b < 9
    """
    cfg = NO_DEADLOCK + "INVARIANT Inv\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 5)
    model = load(*write_spec(tmp_path, body, cfg))
    model.invariant_all()
    assert any(re.match(r"def vmemo_\d+\(v_0\):", src) and src.count(" for b_") == 2
               for src in model.compiler.sources.values()), "the loop was not remembered"
    assert run(tmp_path, body.replace("< 9", "< 8"), cfg) == ("invariant", "Inv", 4)


def test_a_memo_of_state_values_keeps_the_memos_it_reads(tmp_path):
    """DOMAIN q, met twice, has a memo of the invariant's; the loop around it becomes a
    memo of q's value whose function makes that list its own (memo.var_memo)."""
    body = """
    VARIABLES q, y
    Init == q = <<1>> /\\ y = 0
    Next == y < 4 /\\ y' = y + 1 /\\ q' = Append(q, y)
    Inv == \\A i \\in DOMAIN q : \\E j \\in DOMAIN q : q[j] = q[i] + 0
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Inv\n") == ("ok", None, 5)
    model = load(*write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT Inv\n"))
    model.invariant_all()
    assert any(name.startswith("vmemo") and re.search(r"^    x_\d+ = \[\]$", src, re.M)
               for name, src in model.compiler.sources.items())
    body = body.replace("q[i] + 0", "q[i] + y")
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Inv\n") == ("invariant", "Inv", 2)


def test_a_memo_of_state_values_reads_fields_of_a_variable(tmp_path):
    """r.set and r.n are hoisted parts of r (compiler.unit): the loop over them becomes
    a memo keyed by those parts' values (memo.var_memo)."""
    body = """
    VARIABLES r, y
    Init == r = [set |-> {1}, n |-> 0] /\\ y = 0
    Next == y < 4 /\\ y' = y + 1 /\\ r' = [r EXCEPT !.set = @ \\cup {y + 1}]
    Inv == (\\A e \\in r.set : e \\in 1..5 /\\ e > r.n) /\\ y >= 0
    """
    cfg = NO_DEADLOCK + "INVARIANT Inv\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 5)
    model = load(*write_spec(tmp_path, body, cfg))
    model.invariant_all()
    assert any(re.match(r"def vmemo_\d+\(p_", src) for src in model.compiler.sources.values())
    assert run(tmp_path, body.replace("e \\in 1..5", "e \\in 1..3"), cfg) \
        == ("invariant", "Inv", 5)


def test_constant_recursive_operators_remember_results(tmp_path, capsys):
    """Fib(60) by naive recursion finishes only if results are remembered; a LET's value
    reached by a recursive operator is part of what it remembers; one that prints is
    evaluated at every call."""
    body = """
    VARIABLES x
    Init == x = 0
    RECURSIVE Fib(_)
    Fib(n) == IF n < 2 THEN n ELSE Fib(n - 1) + Fib(n - 2)
    Same(v) == LET k == v * 10
                   RECURSIVE G(_)
                   G(n) == IF n = 0 THEN k ELSE G(n - 1)
               IN G(3)
    RECURSIVE Loud(_)
    Loud(n) == IF n = 0 THEN PrintT("loud") ELSE Loud(n - 1)
    Next == x < 3 /\\ x' = x + 1
    Ok == Fib(60) = 1548008755920 /\\ (\\A v \\in 0..3 : Same(v) = v * 10) /\\ Loud(x % 2)
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Ok\n") == ("ok", None, 4)
    assert capsys.readouterr().out.count("loud") == 4


def test_a_recursive_operator_remembers_what_some_of_its_parameters_give(tmp_path):
    """Sum(f, S) with f made anew in each state: CHOOSE and S \\ {x} read S alone and are
    remembered by the identity of S (memo.param_memo); every sum is checked against one
    worked out by hand, over constant sets and sets of the state, up to the state where
    one is made wrong on purpose."""
    body = """
    VARIABLE y
    RECURSIVE Sum(_, _)
    Sum(f, S) == IF S = {} THEN 0
                 ELSE LET x == CHOOSE x \\in S : TRUE IN f[x] + Sum(f, S \\ {x})
    Sets == {{1, 2, 3}, {2, 5}, {4}, {}}
    Hand == [T \\in Sets |-> CASE T = {1, 2, 3} -> 6 [] T = {2, 5} -> 7 [] T = {4} -> 4
                                 [] T = {} -> 0]
    Init == y = 0
    Next == y < 5 /\\ y' = y + 1
    F == [n \\in 1..9 |-> n * (y + 1)]
    Off(T) == IF T = {4} /\\ y = LAST THEN 1 ELSE 0
    Ok == /\\ \\A T \\in Sets : Sum(F, T) = (y + 1) * Hand[T] + Off(T)
          /\\ Sum(F, {y + 1, 9}) = (y + 1) * (y + 10)
    """
    for last, expected in (("9", ("ok", None, 6)), ("3", ("invariant", "Ok", 4))):
        cfg = NO_DEADLOCK + "INVARIANT Ok\n"
        assert run(tmp_path, body.replace("LAST", last), cfg) == expected, last
    model = load(*write_spec(tmp_path, body.replace("LAST", "9"), NO_DEADLOCK + "INVARIANT Ok\n"))
    assert any(n.startswith("Kpm") for n in model.compiler.ns), "no subexpression remembered"


def test_the_element_of_a_membership_test_is_evaluated_once(tmp_path, capsys):
    """x \\in S for a constant S: x once, also when it is not in S (it used to be
    computed again for the error check); PrintT shows how often."""
    body = """
    VARIABLE x
    Init == x = 3
    Next == UNCHANGED x
    Inv == (IF PrintT(<<"probe", x>>) THEN x ELSE 0) \\notin {1, 2}
    """
    assert run(tmp_path, body, NO_DEADLOCK + "INVARIANT Inv\n") == ("ok", None, 1)
    assert capsys.readouterr().out.count("probe") == 1


def test_a_memo_that_rarely_hits_is_dropped(tmp_path, monkeypatch):
    """compiler.memo_wrapper, with a memo of 32 entries: Sum over a function built anew
    in every state (6 misses per state, never a hit) goes to its raw function once the
    memo fills up; Fib (a hit saves a whole subtree) keeps its memo when it fills up
    (Fib(20 + x) adds one entry per state), or Fib(40) would take 10^8 calls. Values:
    Sum([i \\in 1..5 |-> i + x], 1..5) = 15 + 5 * x, Fib(40) = 102334155; x = 0..20 is
    21 states, no violation."""
    from spec.checker import compiler, violated_invariants

    monkeypatch.setattr(compiler, "MEMO_MAX", 32)
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 20 /\\ x' = x + 1
    RECURSIVE Sum(_, _), Fib(_)
    Sum(f, S) == IF S = {} THEN 0 ELSE LET e == CHOOSE e \\in S : TRUE
                                       IN f[e] + Sum(f, S \\ {e})
    Fib(n) == IF n < 2 THEN n ELSE Fib(n - 1) + Fib(n - 2)
    Ok == Sum([i \\in 1..5 |-> i + x], 1..5) = 15 + 5 * x
          /\\ Fib(20 + x) = IF x = 20 THEN 102334155 ELSE Fib(19 + x) + Fib(18 + x)
    """
    cfg = NO_DEADLOCK + "INVARIANT Ok\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 21)
    m = load(*write_spec(tmp_path, body, cfg))
    assert all(violated_invariants(m, (x,)) == [] for x in range(21))
    ns = m.invariants[0][1].__globals__
    names = {n.rsplit("_", 1)[0]: n for n in ns if n.startswith("rec_") and n[-1].isdigit()}
    assert ns[names["rec_Sum"]] is ns[names["rec_Sum"] + "_raw"]
    assert ns[names["rec_Fib"]] is not ns[names["rec_Fib"] + "_raw"]


def test_record_and_function_set_membership_per_object(tmp_path):
    """values.remembered: a record set and a function set remember their answer per
    object. msgs keeps its records from state to state (the same objects tested again)
    and gains [t |-> "a", n |-> k] at each step; the record with n = 3 is outside
    [t : {"a"}, n : 0..2], so TypeOK first fails in the state after k = 3 was added:
    k = 0..4, a trace of 5 states. The function [i \\in {1, 2} |-> i * k] is outside
    [{1, 2} -> 0..4] from k = 3 (2 * 3 = 6): 4 states and a trace of 4 for FnOK."""
    body = """
    VARIABLES msgs, k
    Init == msgs = {} /\\ k = 0
    Next == k < 6 /\\ k' = k + 1 /\\ msgs' = msgs \\cup {[t |-> "a", n |-> k]}
    TypeOK == \\A m \\in msgs : m \\in [t : {"a"}, n : 0..2]
    FnOK == [i \\in {1, 2} |-> i * k] \\in [{1, 2} -> 0..4]
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT TypeOK\n")
    r = check(spec, cfg)
    assert (r.result, r.violated, r.distinct_states, r.trace_length) == \
        ("invariant", "TypeOK", 5, 5)
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT FnOK\n")
    r = check(spec, cfg)
    assert (r.result, r.violated, r.distinct_states, r.trace_length) == \
        ("invariant", "FnOK", 4, 4)


def test_by_identity_never_answers_for_an_equal_value():
    """rt.by_identity (memo.const_memo's store) keys by the objects, not their values:
    Python holds TRUE = 1 and <<1>> = <<TRUE>>, TLA+ does not."""
    from spec.checker.rt import by_identity
    one = by_identity(lambda a: type(a).__name__, 1)
    assert [one(1), one(True), one(1), one(False), one(0)] == ["int", "bool", "int", "bool", "int"]
    two = by_identity(lambda a, b: (type(a).__name__, type(b[0]).__name__), 2)
    t1, t2 = (1,), (True,)
    assert two(1, t1) == ("int", "int") and two(1, t2) == ("int", "bool")
    assert two(True, t1) == ("bool", "int") and two(1, t1) == ("int", "int")


def test_a_memo_of_state_values_that_rarely_hits_is_dropped():
    """rt.state_memo (memo.var_memo's store), called through ns["f"]: new objects at
    every call leave it at its first check, VAR_MEMO_CHECK entries; each object called
    three times keeps it, and it still answers for the first object after four times that
    many others (it holds up to VAR_MEMO_MAX); either way the answers are fn's, by object."""
    from spec.checker import rt
    calls = []

    def fn(*args):
        calls.append(args)
        return sum(a[0] for a in args)
    assert 4 * rt.VAR_MEMO_CHECK < rt.VAR_MEMO_MAX
    for n in (1, 2):
        ns = {}
        ns["f"] = rt.state_memo(fn, n, ns, "f")
        for i in range(rt.VAR_MEMO_CHECK + 1):
            assert ns["f"](*[(i,)] * n) == i * n
        assert ns["f"] is fn, n
        ns["f"] = memo_f = rt.state_memo(fn, n, ns, "f")
        del calls[:]
        objects = [(i,) for i in range(4 * rt.VAR_MEMO_CHECK)]
        for each in objects:
            for _ in range(3):
                assert ns["f"](*[each] * n) == each[0] * n
        assert ns["f"] is memo_f and len(calls) == len(objects), n
        assert memo_f(*[objects[0]] * n) == 0 and len(calls) == len(objects), n
        assert memo_f(*[(True,)] * n) == n and memo_f(*[(1,)] * n) == n
        assert len(calls) == len(objects) + 2


def test_memos_of_state_values_share_their_room():
    """rt.state_memo with room (a model's memo_room): beyond its first check a memo takes
    what it grows by from the room it shares with others; one that finds too little left
    is emptied instead (it forgets), and an emptied memo hands its share back."""
    from spec.checker import rt
    check = rt.VAR_MEMO_CHECK
    calls = []

    def fn(a):
        calls.append(a)
        return a[0]
    room, ns = [check], {}
    ns["a"] = a = rt.state_memo(fn, 1, ns, "a", room=room)
    ns["b"] = b = rt.state_memo(fn, 1, ns, "b", room=room)
    mine = [(i,) for i in range(check + 1)]
    for each in mine:
        assert a(each) == a(each) == each[0]
    assert room == [0]  # a grew by check entries
    theirs = [(i,) for i in range(check + 1)]
    for each in theirs:
        assert b(each) == b(each) == each[0]
    del calls[:]
    assert a(mine[0]) == 0 and calls == []  # a remembers
    assert b(theirs[0]) == 0 and calls == [theirs[0]]  # b was emptied at its first check
    for i in range(check):  # a fills up again, finds no room to grow: emptied, room back
        a((i,))
    assert room == [check] and ns["a"] is a and ns["b"] is b
    del calls[:]
    assert a(mine[0]) == 0 and calls == [mine[0]]


def test_a_models_memos_of_state_values_take_from_its_room(tmp_path, monkeypatch):
    """Compiler.memo_room is the room a model's memos of state values share: x's next
    value (memo.next_memo) and the test on x alone (memo.var_memo) are remembered by x's
    object, met twice (y = 0, 1) for each of 30 values, so each memo pays and grows beyond
    its first check (4 here) to hold all 31, taking 4, 8, then 16 entries from the room."""
    from spec.checker import rt
    monkeypatch.setattr(rt, "VAR_MEMO_CHECK", 4)
    body = """
    VARIABLES x, y
    Init == x = <<0>> /\\ y = 0
    Next == \\/ x[1] < 30 /\\ (\\A i \\in 1..x[1] : i > 0)
               /\\ x' = [x EXCEPT ![1] = @ + 1] /\\ UNCHANGED y
            \\/ y = 0 /\\ y' = 1 /\\ UNCHANGED x
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK)
    model = load(spec, cfg)
    explorer = Explorer(model)
    assert explorer.run()[0] == "ok" and len(explorer.states) == 62
    sources = "".join(model.compiler.sources.values())
    assert "Kvm_" in sources and "Knm_" in sources
    assert model.compiler.memo_room[0] == rt.STATE_MEMO_ROOM - 2 * (4 + 8 + 16)


OLD_BINDER = re.compile(r"\bfor \(?([\w, ]+?)\)? in\b|\blambda ([\w, ]*):")
SCOPE_CODES = [
    "[b_x_1 for b_x_1 in c_0]", "all(b_y_2 for (b_y_2, b_z_3) in c_1.items())",
    "(lambda x_4, x_5: x_4 + x_5)([], [])", "xfor b_a_6 in c_0", "_lambda b_q_7: c_2",
    "(lambda : c_3)()", "{b_k_8: s for b_k_8 in n_1 if (lambda x_9: x_9)(b_k_8)}",
    "'for b_s_10 in' + c_4", "c_0 if c_0 else _ap(c_1, 'f') or _isin(b_w_11, c_2)",
    "all(b_a_12 < b_b_13 for b_a_12 in Ko_5 for b_b_13 in c_0 for (b_c_14, b_d_15) in c_1)",
]


def old_local_scope(code):
    """local_scope as it was: one alternation of both binders, tried at every position."""
    names = set(codegen.LOCAL_NAME.findall(code))
    bound = set()
    for m in OLD_BINDER.finditer(code):
        bound.update(n.strip() for n in (m.group(1) or m.group(2) or "").split(","))
    return frozenset(names - bound), frozenset(bound & names)


def test_the_binder_scan_finds_what_the_alternation_found():
    for code in SCOPE_CODES:
        codegen._SCOPES.clear()
        assert codegen.local_scope(code) == old_local_scope(code), code


def test_remembered_worth_and_shape_are_the_plain_computations():
    for code in SCOPE_CODES * 2:
        plain_worth = memo.WORTH.search(memo.CHEAP_FALLBACK.sub("", code)) is not None
        assert memo.worth(code) is plain_worth, code
        bound = codegen.local_scope(code)[1]
        assert memo.unit_shape(code, bound) == plain_shape(code, bound), code


def plain_shape(code, bound):
    """unit_memo's renaming of bound names as it was, computed every time."""
    canon = {}
    return codegen.LOCAL_NAME.sub(lambda m: canon.setdefault(m.group(0), f"_#{len(canon)}")
                                  if m.group(0) in bound else m.group(0), code)


def test_memo_lists_are_made_where_their_uses_meet():
    """place_inits: a list before the first statement of the innermost block holding
    every use; never inside a loop, never after an if-chain's test that reads it."""
    lines = ["if a:",
             "    if f(x_1):",            # x_1 read by the test: made before this if
             "        g(x_2, x_6)",       # x_6 used only here: made in this branch
             "    elif h(x_3):",          # x_3 read by an elif: made before the chain
             "        g(x_1, x_2)",       # x_2 used in two branches: before the chain
             "    for i in r:",           # x_4 used in a loop only: made before it
             "        g(x_4)",
             "        g(x_4)",
             "else:",
             "    g(x_5)"]
    placed = memo.place_inits(lines, ["x_1", "x_2", "x_3", "x_4", "x_5", "x_6", "x_9"])
    assert placed == ["if a:",
                      "    x_1 = []", "    x_2 = []", "    x_3 = []",
                      "    if f(x_1):",
                      "        x_6 = []",
                      "        g(x_2, x_6)",
                      "    elif h(x_3):",
                      "        g(x_1, x_2)",
                      "    x_4 = []",
                      "    for i in r:",
                      "        g(x_4)",
                      "        g(x_4)",
                      "else:",
                      "    x_5 = []",
                      "    g(x_5)"]
    for first in (True, False):  # every use finds its list made, down either branch
        exec("\n".join(placed), {"a": True, "f": lambda x, first=first: first, "h": lambda x: True,
                                 "g": lambda *x: None, "r": range(2)})


def test_memos_of_an_untaken_branch_are_made_in_it(tmp_path):
    """A repeated state-level subexpression inside one branch of Next: its memo list is
    made in that branch, not at the top (the counts show the memo answers right)."""
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = {}
    Next == \\/ x = 0 /\\ x' = 1 /\\ UNCHANGED y
            \\/ x > 0 /\\ x < 3 /\\ x' = x + 1
               /\\ {z \\in 0..x : z \\notin y} \\subseteq 0..x
               /\\ y' = {z \\in 0..x : z \\notin y} \\cup ({z \\in 0..x : z \\notin y} \\ {x - 1})
            \\/ x = 3 /\\ UNCHANGED <<x, y>>
    Inv == (x = 2 => y = {0, 1}) /\\ (x = 3 => y = {2})
    """
    assert run(tmp_path, body, "INIT Init\nNEXT Next\nINVARIANT Inv\n") == ("ok", None, 4)
    model = load(*write_spec(tmp_path, body, "INIT Init\nNEXT Next\n"))
    src = "\n".join(v for k, v in model.compiler.sources.items() if k.startswith("next"))
    assert re.search(r"\n        x_\d+ = \[\]", src), src  # made in the branch...
    assert not re.search(r"\n    x_\d+ = \[\]", src), src  # ...not at the top


def test_equal_constants_are_one_name_and_true_is_not_one(tmp_path):
    """Folded constant values that are equal get one name (the hoisting prologue reads
    each key once); TRUE and 1, equal to Python, stay apart."""
    from spec.checker.expressions import literal_key
    assert literal_key(frozenset({1})) != literal_key(frozenset({True}))
    assert literal_key((1, "a")) == literal_key((1, "a"))
    assert literal_key(frozenset(range(1000))) is None  # too big to key: a name each
    body = """
    VARIABLES f, g, h
    CONSTANT A, B
    Init == f = [a \\in {A, B} |-> 0] /\\ g = <<>> /\\ h = <<>>
    Next == \\/ f[A] < 2 /\\ f' = [f EXCEPT ![A] = f[A] + 1] /\\ g' = <<{1}, <<1>>>>
               /\\ UNCHANGED h
            \\/ f[A] = 2 /\\ f[B] < 1 /\\ f' = [f EXCEPT ![B] = f[A] - 1]
               /\\ h' = <<{TRUE}, <<TRUE>>>> /\\ UNCHANGED g
            \\/ f[B] = 1 /\\ UNCHANGED <<f, g, h>>
    Mixed == f[B] = 1 => ToString(h) = "<<{TRUE}, <<TRUE>>>>"
    """
    cfg = "INIT Init\nNEXT Next\nCONSTANTS A = A\nB = B\nINVARIANT Mixed\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 4)
    model = load(*write_spec(tmp_path, body, cfg))
    src = "\n".join(v for k, v in model.compiler.sources.items() if k.startswith("next"))
    prologue = src.split("\n")[2]  # the test that f holds its keys: each read once
    assert prologue.count(" not in c_0") == 2, prologue


def test_a_remembered_length_is_still_known_to_be_a_number(tmp_path):
    """Len(...) through a memo still gives an int: `<=` on it is Python's own operator,
    not the runtime's checked comparison."""
    body = """
    VARIABLE n
    Init == n = [p \\in 1..2 |-> <<>>]
    Next == n[1] = <<>> /\\ n' = [n EXCEPT ![1] = <<1, 2>>]
    Inv == Len(n[1]) <= 3 /\\ Len(n[1]) < 5
    """
    cfg = NO_DEADLOCK + "INVARIANT Inv\n"
    assert run(tmp_path, body, cfg) == ("ok", None, 2)
    model = load(*write_spec(tmp_path, body, cfg))
    src = "\n".join(v for k, v in model.compiler.sources.items() if k.startswith("state_"))
    assert "_rt.length(" in src and "_rt.le(" not in src and "_rt.lt(" not in src, src


def reachable(init, step):
    """The judge: breadth-first reachable states of a Python transition function."""
    seen, todo = {init}, [init]
    while todo:
        for t in step(todo.pop()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return len(seen)


def test_a_next_value_is_remembered_by_everything_it_reads(tmp_path):
    """f' = [f EXCEPT ![i] = x + c] reads f, the bound i, x and c: a memo that forgot one
    of them (or answered for an equal but other value) gives another count than the
    plain enumeration below. The value is remembered (memo.next_memo), in a unit memo
    too (g' repeats an expression the guard reads)."""
    body = """
    VARIABLES f, x, c, g
    Init == f = [i \\in 1..3 |-> 0] /\\ x = 0 /\\ c = 0 /\\ g = {}
    Next == \\E i \\in 1..3 :
              /\\ f' = [f EXCEPT ![i] = (x + c) % 3]
              /\\ x' = (x + i) % 3
              /\\ c' = 1 - c
              /\\ Cardinality(g \\cup {f[i]}) < 4
              /\\ g' = g \\cup {f[i]}
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK)
    model = load(spec, cfg)
    assert any("Knm" in src for src in model.compiler.sources.values())

    def step(s):
        f, x, c, g = s
        for i in range(3):
            g2 = g | {f[i]}
            if len(g2) < 4:
                f2 = list(f)
                f2[i] = (x + c) % 3
                yield (tuple(f2), (x + i + 1) % 3, 1 - c, g2)
    expected = reachable(((0, 0, 0), 0, 0, frozenset()), step)
    assert run(tmp_path, body, NO_DEADLOCK) == ("ok", None, expected)


def test_a_next_value_is_the_stored_object(tmp_path):
    """A remembered value equal to one a stored state holds is that state's very object
    (memo.next_memo's canon), so the seen set compares successors by identity."""
    body = """
    VARIABLES f, x
    Init == f = [i \\in {"a", "b"} |-> 0] /\\ x = 0
    Next == \\E i \\in {"a", "b"} : f' = [f EXCEPT ![i] = 1 - @] /\\ x' = (x + 1) % 3
    """
    model = load(*write_spec(tmp_path, body, NO_DEADLOCK))
    explorer = Explorer(model)
    assert explorer.run()[0] == "ok"
    values = [s[0] for s in explorer.states]
    assert len(values) == 12 and len({id(v) for v in values}) == len(set(values)) == 4
    pool = {v: v for v in values}
    for s in explorer.states:  # each successor's f is the object stored for its value
        out = []
        model.next_fn(s, out.append)
        assert all(t[0] is pool[t[0]] for t in out)


def test_a_conjunct_of_two_variables_is_not_remembered_by_one(tmp_path):
    """Inv's second conjunct reads x and y: remembered by x alone it would hold for
    x = 2 once (2, 0) passed, and miss (2, 1). TypeOK's conjuncts each read one
    variable and are remembered per value (memo.conjunct_memo)."""
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = 0
    Next == \\/ x < 2 /\\ x' = x + 1 /\\ y' = y
            \\/ x = 2 /\\ y = 0 /\\ x' = 0 /\\ y' = 1
    TypeOK == x \\in 0..2 /\\ y \\in {0, 1}
    Inv == TypeOK /\\ (x < 2 \\/ y = 0)
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT Inv\n")
    model = load(spec, cfg)
    model.invariant_all()
    assert sum(src.count("Kok_") for src in model.compiler.sources.values()) >= 2
    r = check(spec, cfg)
    assert (r.result, r.violated, len(r.trace)) == ("invariant", "Inv", 6)


def test_a_conjunct_holds_at_once_only_when_all_it_reads_is_the_parents(tmp_path):
    """memo.parent_shortcut: tested on a successor of a state that satisfied them, a
    conjunct whose variables are all the parent's objects holds at once (Y, after each
    step). Sum reads x and y: with y's object kept alone it would pass (3, 0). Level
    reads the level as well as y, and the level moves at each step though y does not."""
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = 0
    Next == x < 5 /\\ x' = x + 1 /\\ y' = y
    Y == y = 0
    Sum == x + y < 3
    Level == y = 0 => TLCGet("level") < 4
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT Y Sum\n")
    model = load(spec, cfg)
    model.invariant_all()
    source = "".join(model.compiler.sources.values())
    assert "(c_1 is q_1 or " in source and "(c_0 is q_0 and c_1 is q_1 or " in source
    r = check(spec, cfg)
    assert (r.result, r.violated, len(r.trace or ())) == ("invariant", "Sum", 4)
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK + "INVARIANT Y Level\n")
    r = check(spec, cfg)
    assert (r.result, r.violated, len(r.trace or ())) == ("invariant", "Level", 5)


def test_a_bound_name_is_in_the_set_it_ranges_over(tmp_path):
    """`t \\in S` where t ranges over S is TRUE without a test; over another set it is
    tested."""
    body = """
    VARIABLES x, s
    Init == x = 0 /\\ s = {1, 2}
    Next == \\E t \\in s : t \\in s /\\ t \\in {2, 3} /\\ x' = t /\\ s' = s
    """
    spec, cfg = write_spec(tmp_path, body, NO_DEADLOCK)
    model = load(spec, cfg)
    src = "\n".join(model.compiler.sources.values())
    assert re.search(r"_isin\(b_t_\d+, c_1\)", src) is None
    assert run(tmp_path, body, NO_DEADLOCK) == ("ok", None, 2)


def test_collections_back_off_while_they_find_nothing(monkeypatch):
    """bfs.Explorer.checkpoint: the gap between collections doubles up to GC_GAP_MAX
    while they find no garbage, and is 1 again after one that finds some."""
    found = iter([5, 0, 0, 0, 0, 0, 3] + [0] * 60)
    done = []
    monkeypatch.setattr(bfs.gc, "collect", lambda gen: done.append(1) or next(found))
    monkeypatch.setattr(bfs.gc, "freeze", lambda: None)
    explorer = bfs.Explorer.__new__(bfs.Explorer)
    explorer.checkpoints = explorer.next_collection = 0
    explorer.gc_gap, explorer.progress = 1, None
    at = []
    for k in range(1, 80):
        before = len(done)
        explorer.checkpoint(0, 0, 0)
        if len(done) > before:
            at.append(k)
    assert at[:10] == [1, 2, 4, 8, 16, 32, 48, 49, 51, 55], at
    assert all(b - a <= bfs.GC_GAP_MAX for a, b in zip(at, at[1:]))


BRANCHES = """
VARIABLES f, x, y, z
Init == f = [i \\in 1..3 |-> 0] /\\ x = 0 /\\ y = 0 /\\ z = 0
Bump(i) == /\\ f[i] < 2 /\\ f' = [f EXCEPT ![i] = @ + 1]
           /\\ x' \\in {x, (x + i) % 3} /\\ UNCHANGED <<y, z>>
Spin(p) == \\E k \\in {0, 1} : z' = (z + p * k + y) % 5 /\\ UNCHANGED <<f, x, y>>
Next == \\/ \\E i \\in 1..3 : Bump(i)
        \\/ y' = (y + x) % 4 /\\ UNCHANGED <<f, x, z>>
        \\/ \\E p \\in {y, 1} : Spin(p)
        \\/ \\E p \\in {y % 3, 2} : \\E q \\in {0, p} :
             z' = q /\\ x' = (y + p) % 3 /\\ UNCHANGED <<f, y>>
        \\/ \\E p \\in {x, z} :
             \\/ \\E k \\in {0, p} : y' = (p + k + y) % 4 /\\ UNCHANGED <<f, x, z>>
             \\/ \\E i \\in {1, (p % 3) + 1} : f[i] < 2 /\\ f' = [f EXCEPT ![i] = p % 2]
                                           /\\ UNCHANGED <<x, y, z>>
"""


def branches_step(s):
    """BRANCHES' next-state relation in plain Python: the judge of the memos of branches."""
    f, x, y, z = s
    for i in (1, 2, 3):
        if f[i - 1] < 2:
            f2 = f[:i - 1] + (f[i - 1] + 1,) + f[i:]
            for x2 in {x, (x + i) % 3}:
                yield (f2, x2, y, z)
    yield (f, x, (y + x) % 4, z)
    for p in {y, 1}:
        for k in (0, 1):
            yield (f, x, y, (z + p * k + y) % 5)
    for p in {y % 3, 2}:
        for q in {0, p}:
            yield (f, (y + p) % 3, y, q)
    for p in {x, z}:
        for k in {0, p}:
            yield (f, x, (p + k + y) % 4, z)
        for i in {1, p % 3 + 1}:
            if f[i - 1] < 2:
                yield (f[:i - 1] + (p % 2,) + f[i:], x, y, z)


def test_a_branch_of_next_is_remembered_by_everything_it_reads(tmp_path, monkeypatch):
    """memo.block_memos: Bump's branch reads f and x only (y and z are copied), Spin's
    reads y, z and the bound p, the last reads y and p and gives z and x from them, with
    `x' \\in S` among the assignments. A memo that forgot something it reads, or emitted
    a variable as copied that a branch assigns, gives another count than the judge. The
    search switches to the remembering Next from its first state here."""
    monkeypatch.setattr(bfs, "BRANCH_MEMOS_AFTER", 0)
    spec, cfg = write_spec(tmp_path, BRANCHES, NO_DEADLOCK)
    model = load(spec, cfg)
    remembering = model.next_fn.with_branch_memos()
    memos = [k for k in model.compiler.sources if k.startswith("bmemo")]
    assert remembering is not model.next_fn and len(memos) >= 2, sorted(model.compiler.sources)
    expected = reachable(((0, 0, 0), 0, 0, 0), branches_step)
    assert run(tmp_path, BRANCHES, NO_DEADLOCK) == ("ok", None, expected)
    switched = []
    build = model.next_fn.with_branch_memos
    model.next_fn.with_branch_memos = lambda: switched.append(1) or build()
    explorer = Explorer(model)
    assert explorer.run()[0] == "ok" and switched == [1]
    assert len(explorer.states) == expected
    for s in explorer.states:  # the same successors in the same order, state by state
        plain, got = [], []
        model.next_fn(s, plain.append)
        remembering(s, got.append)
        remembering(s, got.append)  # the second time from the memos
        assert got == plain + plain
        assert sorted(map(repr, plain)) == sorted(map(repr, branches_step(s)))


def test_a_branch_memo_that_saves_little_is_dropped():
    """rt.by_identity with weight (memo.block_build): asked at first_check entries and at
    each doubling, a memo whose hits serve fewer successors than it has entries rebinds
    its name to `gone`; one whose values are long lists stays."""
    from spec.checker import rt
    for length, stays in ((0, False), (1, False), (2, True), (8, True)):
        ns = {"on": True}
        memo_f = rt.by_identity(lambda a, b, n=length: [a] * n, 2, 1 << 16, ns, "on",
                                hits_per_entry=1, first_check=64, gone=False, weight=len)
        objects = [(i,) for i in range(64)]
        for each in objects:  # 64 entries, then 32 hits
            memo_f(each, 0)
        for each in objects[::2]:
            assert memo_f(each, 0) == [each] * length
        memo_f((), 0)  # the 65th entry asks
        assert ns["on"] is stays, length


def test_a_name_bound_in_a_comprehension_is_still_read_outside_it(tmp_path):
    """memo.block_plan: b_v_1 is bound by a loop around the statements and again inside
    one of their comprehensions; where they read it outside the comprehension it is the
    outer loop's, so the branch's function takes it as an argument (dag-consensus'
    TLCSailfish1 raised NameError when a name bound anywhere counted as bound everywhere)."""
    model = load(*write_spec(tmp_path, BRANCHES, NO_DEADLOCK))
    emit = "emit((n_0, n_1, n_2, n_3, ))"
    lines = ["for b_k_2 in _enum(c_1):",
             "    if all(b_v_1 for b_v_1 in c_0):",
             "        n_1 = b_v_1 + b_k_2",
             "        n_0 = c_0",
             "        n_2 = c_2",
             "        n_3 = c_3",
             f"        {emit}"]
    plan = model.compiler.block_plan(lines, {}, emit)
    assert plan is not None and plan.args == ("b_v_1", "c_0", "c_1"), plan and plan.args


def test_a_memo_read_once_outside_loops_is_inlined():
    """memo.inline_single_memos: a memo list read at one place, not in a loop, lambda or
    comprehension, gives way to its expression; the others keep their lists. The
    expression holds brackets inside strings, which must not end it early. A list no
    line reads is not made."""
    from spec.checker.memo import inline_single_memos
    from spec.checker.memo import memo_code as memo
    once = memo("x_1", "f(')', [1])")
    src = "\n".join([
        "def g(s):",
        "    x_1 = []",
        "    x_2 = []",
        "    x_3 = []",
        "    x_4 = []",
        f"    if {once} and {memo('x_5', 'h(s)')}:",
        "        for b in s:",
        f"            yield {memo('x_2', 'k(s)')}",
        f"    yield [{memo('x_3', 'k(s)')} for b in s]",
        f"    yield (lambda: {memo('x_4', 'k(s)')})",
        "    x_5 = []",
        "    if s:",
        "        x_6 = []"])
    out = inline_single_memos(src).split("\n")
    assert out[1] == "    pass" and out[5] == f"    if (f(')', [1])) and {memo('x_5', 'h(s)')}:"
    assert out[2:5] == ["    x_2 = []", "    x_3 = []", "    x_4 = []"]  # a loop, a
    assert out[7:11] == src.split("\n")[7:11]  # comprehension, a lambda: kept; x_5 made
    assert out[11:] == ["    if s:", "        pass"]  # after; x_6 never read


def test_a_record_built_from_a_drawn_message_is_one_object(tmp_path):
    """memo.bound_memo: `[k |-> m.t, w |-> "x"]` with m drawn from msgs is built once per
    message object: the records in every stored state's `out` are two objects (one per
    message), not one per successor that built them. The counts are a plain enumeration's."""
    body = """
    VARIABLES msgs, out
    Init == msgs = {[t |-> 1], [t |-> 2], [t |-> 3]} /\\ out = {}
    Next == \\E m \\in msgs : m.t < 3 /\\ out' = out \\cup {[k |-> m.t, w |-> "x"]}
                           /\\ UNCHANGED msgs
    """
    spec, cfg = write_spec(tmp_path, body, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n")
    model = load(spec, cfg)
    explorer = Explorer(model)
    assert explorer.run()[0] == "ok"
    assert len(explorer.states) == 4 and explorer.generated == 1 + 2 * 4
    records = [r for _, out in explorer.states for r in out]
    assert len(records) == 4 and len({id(r) for r in records}) == 2
