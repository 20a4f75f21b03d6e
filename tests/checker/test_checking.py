"""Model-checking behaviour and error paths on small inline specs."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spec.checker import check, load

from .conftest import write_spec

REPO = Path(__file__).resolve().parents[2]

COUNTER = """
VARIABLE x
Init == x = 0
Next == x < 3 /\\ x' = x + 1
"""


def test_deadlock_is_reported_with_shortest_trace(run_spec):
    r = run_spec(COUNTER)
    assert (r.result, r.trace_length, r.distinct_states, r.depth) == ("deadlock", 4, 4, 4)


def test_check_deadlock_false(run_spec):
    r = run_spec(COUNTER, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.distinct_states, r.depth, r.trace_length) == ("ok", 4, 4, None)


def test_invariant_violation_trace_and_labels(run_spec):
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y \\in {0, 1}
    Inc == x' = x + 1 /\\ UNCHANGED y
    Flip == y' = 1 - y /\\ UNCHANGED <<x>>
    Next == Inc \\/ Flip
    Small == x < 2
    """
    r = run_spec(body, "INIT Init\nNEXT Next\nINVARIANT Small\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "Small", 3)
    assert [label for label, _ in r.trace] == ["Initial predicate", "Inc", "Inc"]
    assert r.trace[-1][1]["x"] == 2


def test_long_guard_lists_compile(run_spec):
    guards = "\n        /\\ ".join(f"x # {i + 1000}" for i in range(150))
    body = f"VARIABLE x\nInit == x = 0\nNext == /\\ {guards}\n        /\\ x' = (x + 1) % 5\n"
    r = run_spec(body)
    assert (r.result, r.distinct_states) == ("ok", 5), r.error


def test_self_loop_is_not_a_deadlock(run_spec):
    r = run_spec("VARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n")
    assert (r.result, r.distinct_states, r.states_generated) == ("ok", 1, 2)


def test_forall_action_over_constant_set(run_spec):
    body = """
    VARIABLE f
    Init == f = [i \\in 1..3 |-> 0]
    Next == \\A i \\in 1..3 : f' = [f EXCEPT ![i] = 1 - @] \\/ f' = f
    """
    r = run_spec(body, "INIT Init\nNEXT Next\n")
    assert (r.result, r.distinct_states) == ("ok", 1), r.error


def test_constraints_and_action_constraints(run_spec):
    body = """
    VARIABLE x
    Init == x = 0
    Next == x' = x + 1 \\/ x' = x + 2
    Small == x <= 5
    NoJump == x' - x < 2
    """
    r = run_spec(body, "INIT Init\nNEXT Next\nCONSTRAINT Small\n")
    assert (r.result, r.distinct_states) == ("ok", 6)
    r = run_spec(body, "INIT Init\nNEXT Next\nCONSTRAINT Small\nACTION_CONSTRAINT NoJump\n")
    assert (r.result, r.distinct_states, r.depth) == ("ok", 6, 6)


def test_a_state_constraint_in_the_fast_loop(run_spec):
    """A state constraint that reads only the state (bfs.Explorer.loop's fast path): a
    state outside it is neither stored nor expanded, yet its invariants are checked, as
    TLC does. Without the constraint the ring of ten is all reachable."""
    body = """
    VARIABLES x, y
    Init == x = 0 /\\ y = 0
    Next == \\/ x' = (x + 1) % 10 /\\ y' = y
            \\/ x' = (x + 3) % 10 /\\ y' = 1 - y
    Keep == x # 7
    NotSeven == x # 7
    """
    def judge():
        seen, todo = {(0, 0)}, [(0, 0)]
        while todo:
            x, y = todo.pop()
            for t in (((x + 1) % 10, y), ((x + 3) % 10, 1 - y)):
                if t[0] != 7 and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return len(seen)
    r = run_spec(body, "INIT Init\nNEXT Next\nCONSTRAINT Keep\n")
    assert (r.result, r.distinct_states) == ("ok", judge()) and judge() < 20
    r = run_spec(body, "INIT Init\nNEXT Next\n")
    assert (r.result, r.distinct_states) == ("ok", 20)
    r = run_spec(body, "INIT Init\nNEXT Next\nCONSTRAINT Keep\nINVARIANT NotSeven\n")
    assert (r.result, r.violated) == ("invariant", "NotSeven")


def test_a_state_outside_the_constraints_is_checked_again_when_its_verdict_can_change(
        run_spec):
    """The fast loop remembers a state outside the constraints as seen only when its
    invariants read nothing but the state. y = 9 is outside, generated from y = 0 to 3
    at TLC's levels 1 to 4; an invariant reading TLCGet("level") fails at the last of
    them only, so each generation is checked: TLC 2.15 too reports Late violated after
    y = 3, a trace of 5. A pure invariant failing there fails at the first."""
    body = """
    VARIABLE y
    Init == y = 0
    Next == \\/ y < 3 /\\ y' = y + 1
            \\/ y < 9 /\\ y' = 9
    Keep == y < 9
    Late == y = 9 => TLCGet("level") < 4
    NotNine == y # 9
    """
    cfg = "INIT Init\nNEXT Next\nCONSTRAINT Keep\nCHECK_DEADLOCK FALSE\n"
    r = run_spec(body, cfg)
    assert (r.result, r.distinct_states) == ("ok", 4), r.error
    r = run_spec(body, cfg + "INVARIANT Late\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "Late", 5), r.error
    r = run_spec(body, cfg + "INVARIANT NotNine\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "NotNine", 2), r.error


def test_a_part_compared_with_a_literal_keeps_tlcs_errors(run_spec, tmp_path):
    """`r.b = "x"`, `s[2] = <<>>`, `s[1] = 0` (r and s bound names: a state variable's
    parts are read into names before) are compared inline when the part is of the
    literal's class (expressions.part_equals); a part of another class still goes
    through the checked comparison: TLC 2.15 stops this spec with "Attempted to check
    equality of integer 2 with non-integer" at `r.a = "x"`, and finds 2 states with
    `r.a = 2`."""
    body = """
    VARIABLE msgs, seqs
    Init == msgs = {[a |-> 1, b |-> "x"]} /\\ seqs = {<<0, <<>>>>}
    Next == \\E r \\in msgs, s \\in seqs :
              \\/ r.b = "x" /\\ s[2] = <<>> /\\ s[1] = 0 /\\ r.a # 2
                 /\\ msgs' = {[r EXCEPT !.a = 2]} /\\ UNCHANGED seqs
              \\/ r.a = 2 /\\ r.a = CHOICE /\\ UNCHANGED <<msgs, seqs>>
    """
    cfg = "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"
    for choice, want in (('"x"', "integer 2 with string"), ("<<>>", "integer 2 with"),
                         ("2", None)):
        r = run_spec(body.replace("CHOICE", choice), cfg)
        if want is None:
            assert (r.result, r.distinct_states) == ("ok", 2), r.error
        else:
            assert r.result == "error" and want in r.error, (choice, r.error)
    for choice, part in (("s[1] = FALSE", "s[1]"), ("s[2] = 1", "s[2]")):
        r = run_spec(body.replace("r.a = CHOICE", choice), cfg)
        assert r.result == "error" and "compare" in r.error, (part, r.error)
    model = load(*write_spec(tmp_path, body.replace("CHOICE", '"x"'), cfg))
    src = "\n".join(model.compiler.sources.values())
    assert "== 'x' if" in src and "== () if" in src and "== 0 if" in src, src


def test_symmetry_and_view(run_spec):
    body = """
    CONSTANT P
    VARIABLES owner, n
    Init == owner = [p \\in P |-> FALSE] /\\ n = 0
    Next == \\E p \\in P : ~owner[p] /\\ owner' = [owner EXCEPT ![p] = TRUE] /\\ n' = n + 1
    Sym == Permutations(P)
    Owners == owner
    """
    base = "CONSTANT P = {p1, p2, p3}\nINIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"
    assert run_spec(body, base).distinct_states == 8
    assert run_spec(body, base + "SYMMETRY Sym\n").distinct_states == 4
    assert run_spec(body, base + "VIEW Owners\n").distinct_states == 8


def test_liveness_under_fairness_and_stuttering(run_spec):
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 2 /\\ x' = x + 1
    Spec == Init /\\ [][Next]_x
    Fair == Spec /\\ WF_x(Next)
    Strong == Spec /\\ SF_x(Next)
    Reach == <>(x = 2)
    Settle == <>[](x = 2)
    Lead == (x = 0) ~> (x = 2)
    Often == []<>(x = 0)
    Safe == [](x <= 2)
    """
    ok = run_spec(body, "SPECIFICATION Fair\nPROPERTIES Reach Settle Lead Safe\n"
                        "CHECK_DEADLOCK FALSE\n")
    assert ok.result == "ok", ok.error
    assert run_spec(body, "SPECIFICATION Strong\nPROPERTY Reach\nCHECK_DEADLOCK FALSE\n"
                    ).result == "ok"
    bad = run_spec(body, "SPECIFICATION Spec\nPROPERTY Reach\nCHECK_DEADLOCK FALSE\n")
    assert (bad.result, bad.violated, bad.trace_length, bad.cycle_back) == \
        ("property", "Reach", 1, "stuttering")
    often = run_spec(body, "SPECIFICATION Fair\nPROPERTY Often\nCHECK_DEADLOCK FALSE\n")
    assert (often.result, often.trace_length) == ("property", 3)


def test_strong_fairness_versus_weak(run_spec):
    body = """
    VARIABLES x, y
    vars == <<x, y>>
    Init == x = 0 /\\ y = 0
    Toggle == y' = 1 - y /\\ UNCHANGED x
    Go == y = 1 /\\ x = 0 /\\ x' = 1 /\\ UNCHANGED y
    Next == Toggle \\/ Go
    Weak == Init /\\ [][Next]_vars /\\ WF_vars(Toggle) /\\ WF_vars(Go)
    Strong == Init /\\ [][Next]_vars /\\ WF_vars(Toggle) /\\ SF_vars(Go)
    Done == <>(x = 1)
    """
    weak = run_spec(body, "SPECIFICATION Weak\nPROPERTY Done\n")
    assert (weak.result, weak.trace_length, weak.cycle_back) == ("property", 2, 1)
    assert run_spec(body, "SPECIFICATION Strong\nPROPERTY Done\n").result == "ok"


def test_fairness_as_property(run_spec):
    body = """
    VARIABLE x
    Inc == x < 2 /\\ x' = x + 1
    Reset == x = 2 /\\ x' = 0
    Next == Inc \\/ Reset
    Init == x = 0
    Spec == Init /\\ [][Next]_x
    Fair == Spec /\\ WF_x(Next)
    PWF == WF_x(Inc)
    PSF == SF_x(Reset)
    """
    assert run_spec(body, "SPECIFICATION Fair\nPROPERTIES PWF PSF\n").result == "ok"
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY PSF\n")
    assert (r.result, r.violated, r.trace_length) == ("property", "PSF", 3)


def test_eventually_always_a_step(run_spec):
    """<>[][A]_v fails on a fair behaviour with infinitely many steps that fail [A]_v; the
    lasso's cycle takes one (0 <-> 1 is a cycle too, but never steps into 2)."""
    body = """
    VARIABLE x
    Init == x = 0
    Next == \\/ x = 0 /\\ x' = 1
            \\/ x = 1 /\\ x' \\in {0, 2}
            \\/ x = 2 /\\ x' = 1
    Spec == Init /\\ [][Next]_x
    Calm == <>[][x' # 2]_x
    Settled == <>[][x' # 2]_x /\\ <>[][x' < 3]_x
    """
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY Calm\n")
    assert (r.result, r.violated) == ("property", "Calm"), r.error
    cycle = [state["x"] for _, state in r.trace[r.cycle_back - 1:]]
    assert 2 in cycle, (r.trace, r.cycle_back)
    assert run_spec(body.replace("x' \\in {0, 2}", "x' = 0"),
                    "SPECIFICATION Spec\nPROPERTY Settled\n").result == "ok"


def test_liveness_cycle_lasso(run_spec):
    body = """
    VARIABLE x
    Init == x = 0
    Next == x' = (x + 1) % 3
    Spec == Init /\\ [][Next]_x /\\ WF_x(Next)
    Never == <>(x = 5)
    Forall == \\A v \\in {0, 1, 2} : []<>(x = v)
    """
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY Never\n")
    assert (r.result, r.trace_length, r.cycle_back) == ("property", 3, 1)
    assert run_spec(body, "SPECIFICATION Spec\nPROPERTY Forall\n").result == "ok"


def test_instance_with_substitution_and_extends(tmp_path):
    (tmp_path / "Inner.tla").write_text(
        "---- MODULE Inner ----\nEXTENDS Naturals\nCONSTANT Lim\nVARIABLE v\n"
        "Step == v < Lim /\\ v' = v + 1\nTwiceV == 2 * v\n====\n")
    (tmp_path / "Base.tla").write_text(
        "---- MODULE Base ----\nEXTENDS Naturals\nHelper(k) == k + 1\n====\n")
    body = """
    VARIABLE w
    I == INSTANCE Inner WITH Lim <- 3, v <- w
    Init == w = 0
    Next == I!Step
    Inv == I!TwiceV = 2 * w /\\ Helper(w) > w
    """
    spec, cfg = write_spec(tmp_path, body, "INIT Init\nNEXT Next\nINVARIANT Inv\n"
                           "CHECK_DEADLOCK FALSE\n", extends="EXTENDS Naturals, Base\n")
    r = check(spec, cfg)
    assert (r.result, r.distinct_states) == ("ok", 4), r.error


def test_refinement_property_through_instance(tmp_path):
    (tmp_path / "Abs.tla").write_text(
        "---- MODULE Abs ----\nEXTENDS Naturals\nVARIABLE y\nInit == y = 0\n"
        "Next == y' = (y + 1) % 2\nSpec == Init /\\ [][Next]_y\n====\n")
    body = """
    VARIABLE x
    Init == x = 0
    Next == x' = (x + 1) % 4
    Good == INSTANCE Abs WITH y <- x % 2
    Bad == INSTANCE Abs WITH y <- x
    Spec == Init /\\ [][Next]_x
    """
    spec, cfg = write_spec(tmp_path, body, "SPECIFICATION Spec\nPROPERTY Good!Spec\n")
    assert check(spec, cfg).result == "ok"
    (tmp_path / "M.cfg").write_text("SPECIFICATION Spec\nPROPERTY Bad!Spec\n")
    r = check(spec, cfg)
    assert (r.result, r.violated, r.trace_length) == ("property", "Bad!Spec", 3)


LIFTED_ABS = """---- MODULE Abs ----
EXTENDS Naturals
VARIABLES y, z
Init == y = 0
Next == IF y = 0 THEN y' = 1 ELSE y' = 0 /\\ z > 0
Spec == Init /\\ [][Next]_<<y, z>>
Busy == y' = 1 - y /\\ ENABLED (y' = y)
Fussy == Init /\\ [][Busy]_<<y, z>>
====
"""


RETURN_KVM = "return Kvm_#({})"


def lifted_tests(spec, cfg):
    """How many of the action properties are tested on lifted steps, and the code that
    lifts a state to the value of each substituted variable."""
    from spec.checker import load
    from spec.checker.liveness import PropertyChecker
    model = load(spec, cfg)
    props = PropertyChecker(model)
    lifts = [re.sub(r"Kvm_\d+", "Kvm_#", src.split("\n")[-1].strip())
             for name, src in model.compiler.sources.items() if name.startswith("state_lift")]
    return sum(o.preds[0].__qualname__.startswith("lifted_step.")
               for o in props.obligations if o.kind == "action"), lifts


def test_a_refinement_property_is_tested_on_the_lifted_step(tmp_path):
    """Abs!Next reads Abs's variables only: each step is lifted to the values of y and
    z and tested once per pair of such values (model.lifted_step_test). z's
    substitution divides by x, so it fails in the state x = 0, where Next never reads
    it: the lifted test gives way there to the plain one, which, as TLC, evaluates
    substitutions only where they are read. A lift is remembered by the values of the
    variables it reads (w whole, not its part w[1]). Through ENABLED nothing is lifted."""
    (tmp_path / "Abs.tla").write_text(LIFTED_ABS)
    body = """
    VARIABLES x, w
    Init == x = 0 /\\ w = <<12>>
    Next == x' = (x + 1) % 4 /\\ w' = w
    Good == INSTANCE Abs WITH y <- x % 2, z <- w[1] \\div x
    Bad == INSTANCE Abs WITH y <- x, z <- w[1] \\div x
    Plain == INSTANCE Abs WITH y <- x, z <- 1
    Spec == Init /\\ [][Next]_<<x, w>>
    """
    spec, cfg = write_spec(tmp_path, body, "SPECIFICATION Spec\nPROPERTY Good!Spec\n")
    r = check(spec, cfg)
    assert (r.result, r.distinct_states) == ("ok", 4), r.error
    lifted, lifts = lifted_tests(spec, cfg)
    assert lifted == 1  # each lift remembered by the values of the variables it reads
    assert lifts == [RETURN_KVM.format("c_0"), RETURN_KVM.format("c_0, c_1")], lifts
    (tmp_path / "M.cfg").write_text("SPECIFICATION Spec\nPROPERTY Bad!Spec\n")
    r = check(spec, cfg)
    assert (r.result, r.violated, r.trace_length) == ("property", "Bad!Spec", 3), r.error
    (tmp_path / "M.cfg").write_text("SPECIFICATION Spec\nPROPERTY Plain!Fussy\n")
    assert lifted_tests(spec, cfg)[0] == 0
    assert check(spec, cfg).result == "property"


def test_no_step_is_lifted_where_the_instance_reads_more_than_its_own_state(tmp_path):
    """A nested module sees the variables of the module around it (w here), and a
    constant substituted by a state expression (N <- x, which TLC refuses) reads the
    state: a lifted state holds neither, so those properties keep the plain test. Lifted,
    the first read w where z lies and reported a violation of a property that holds."""
    body = """
    VARIABLES x, w
    ---- MODULE Inner ----
    VARIABLES y, z
    INext == y' = (y + 1) % 2 /\\ z' = z /\\ w = 7
    ISpec == y = 0 /\\ [][INext]_<<y, z>>
    ====
    I == INSTANCE Inner WITH y <- x % 2, z <- 0
    O == INSTANCE Outer WITH y <- x % 2, N <- 1 + (x - x)
    Init == x = 0 /\\ w = 7
    Next == x' = (x + 1) % 4 /\\ UNCHANGED w
    Spec == Init /\\ [][Next]_<<x, w>>
    """
    (tmp_path / "Outer.tla").write_text(
        "---- MODULE Outer ----\nEXTENDS Naturals\nCONSTANT N\nVARIABLE y\n"
        "ONext == y' = (y + N) % 2\nOSpec == y = 0 /\\ [][ONext]_y\n====\n")
    spec, cfg = write_spec(tmp_path, body, "SPECIFICATION Spec\nPROPERTY I!ISpec\n")
    assert lifted_tests(spec, cfg)[0] == 0
    r = check(spec, cfg)
    assert (r.result, r.distinct_states) == ("ok", 4), r.error
    (tmp_path / "M.cfg").write_text("SPECIFICATION Spec\nPROPERTY O!OSpec\n")
    assert lifted_tests(spec, cfg)[0] == 0
    assert check(spec, cfg).result == "ok"


def test_a_lifted_step_test_remembers_pairs_and_gives_way_when_few_repeat():
    from spec.checker.model import lifted_step
    plain_calls, step_calls = [], []

    def plain(s, t):
        plain_calls.append((s, t))
        return True

    def step(a, b):
        step_calls.append((a, b))
        return True
    test = lifted_step(plain, [lambda s: s[0]], step, window=8)
    for _ in range(3):
        for i in range(8):
            assert test((i % 2,), ((i + 1) % 2,)) is True
    assert (len(step_calls), plain_calls) == (2, [])  # two pairs: remembered
    test = lifted_step(plain, [lambda s: s[0]], step, window=8)
    for i in range(8 + 5):
        assert test((i,), (i + 1,)) is True
    assert len(step_calls) == 2 + 8 and len(plain_calls) == 5  # every pair new: given way
    test = lifted_step(plain, [lambda s: s[0]], lambda a, b: a < b)
    assert [test((1,), (t,)) for t in (2, 0, 2, 0)] == [True, False, True, False]
    lifted = []
    test = lifted_step(plain, [lambda s: lifted.append(s) or 1 // 0], step, window=8)
    del plain_calls[:]
    for i in range(8 + 5):
        assert test((i,), (i,)) is True
    assert len(plain_calls) == 13 and len(lifted) == 8  # a lift that raises is a miss


def test_a_step_is_tested_on_the_stored_copy_of_its_successor(tmp_path):
    """A step test sees the successor as stored, its values the explorer's own
    objects, so memos by identity (memo.var_memo) meet them again."""
    from spec.checker import load
    from spec.checker.bfs import Explorer
    body = """
    VARIABLES x, y
    Init == x = {} /\\ y = 0
    Next == \\/ y < 3 /\\ y' = y + 1 /\\ x' = x \\cup {y % 2}
            \\/ y < 3 /\\ y' = y + 1 /\\ x' = x
    """
    model = load(*write_spec(tmp_path, body, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"))
    met = []
    explorer = Explorer(model, step_tests=[("Met", lambda s, t: met.append(t) or True)])
    explorer.run()
    stored = {id(t) for t in explorer.states}
    assert len(met) > len(explorer.states) - 1  # some successors met twice
    assert all(id(t) in stored for t in met)


def test_constant_substitution_and_assume(run_spec):
    body = """
    CONSTANT N
    ASSUME N > 1
    Val == 3
    VARIABLE x
    Init == x = N
    Next == UNCHANGED x
    """
    assert run_spec(body, "CONSTANT N <- Val\nINIT Init\nNEXT Next\n").result == "ok"
    r = run_spec(body, "CONSTANT N = 1\nINIT Init\nNEXT Next\n")
    assert r.result == "error" and "Assumption" in r.error


def test_operator_constant_substitution(run_spec):
    body = """
    CONSTANT F(_)
    Dbl(k) == 2 * k
    VARIABLE x
    Init == x = 1
    Next == x < 8 /\\ x' = F(x)
    """
    r = run_spec(body, "CONSTANT F <- Dbl\nINIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.distinct_states) == ("ok", 4), r.error


def test_two_workers_agree_with_one(tmp_path):
    body = """
    VARIABLES a, b
    Init == a = 0 /\\ b = <<>>
    Next == \\/ a < 6 /\\ a' = a + 1 /\\ UNCHANGED b
            \\/ Len(b) < 3 /\\ b' = Append(b, a % 2) /\\ UNCHANGED a
    Small == a + Len(b) <= 8
    """
    spec, cfg = write_spec(tmp_path, body, "INIT Init\nNEXT Next\nCONSTRAINT Small\n"
                           "CHECK_DEADLOCK FALSE\n")
    one, two = check(spec, cfg), check(spec, cfg, workers=2)
    assert (one.result, one.distinct_states, one.depth) == \
        (two.result, two.distinct_states, two.depth)
    assert one.distinct_states > 20


def test_tlcget_level_in_constraint(run_spec, tmp_path):
    """TLCGet("level") is TLC's level of the states being made or checked, from 0: 0 in
    Init and in the initial states' invariants and constraints, k + 1 in Next from a
    state of level k and in its successors' tests. TLC 2.15 gives these very results
    (7 generated, 6 distinct, depth 6; the violation at x = 4, a trace of 5), and
    reports `x = TLCGet("level") - 1` violated by the initial state."""
    body = """
    VARIABLE x
    Init == x = 0
    Next == x' = x + 1
    Lim == TLCGet("level") <= 5
    Inv == x = TLCGet("level")
    Late == x < 4 \\/ TLCGet("level") # 4
    Shifted == x = TLCGet("level") - 1
    """
    cfg = "INIT Init\nNEXT Next\nCONSTRAINT Lim\n"
    r = run_spec(body, cfg + "INVARIANT Inv\n")
    assert (r.result, r.states_generated, r.distinct_states, r.depth) == ("ok", 7, 6, 6), r.error
    r = run_spec(body, cfg + "INVARIANT Late\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "Late", 5), r.error
    r = run_spec(body, cfg + "INVARIANT Shifted\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "Shifted", 1), r.error
    # two workers, on a Next that ends by itself: a level stuck in the workers then gives
    # a wrong answer, not a search that never ends (the constraint above reads the level)
    bounded = body.replace("Next == x' = x + 1", "Next == x < 5 /\\ x' = x + 1")
    for name, want in (("Inv", ("ok", 6)), ("Late", ("invariant", 5))):
        r = check(*write_spec(tmp_path, bounded, f"INIT Init\nNEXT Next\nINVARIANT {name}\n"
                              "CHECK_DEADLOCK FALSE\n"), workers=2)
        assert (r.result, r.distinct_states) == want, (name, r.error)


def test_print_and_tlcget(run_spec, capsys):
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 2 /\\ x' = x + 1
    Inv == PrintT(<<"x", x>>) /\\ TLCGet("level") = x
    """
    r = run_spec(body, "INIT Init\nNEXT Next\nINVARIANT Inv\nCHECK_DEADLOCK FALSE\n")
    assert r.result == "ok", r.error
    assert '<<"x", 2>>' in capsys.readouterr().out


ERROR_CASES = [
    ("VARIABLE x\nInit == x = 0\nNext == x' = x +\n", "syntax error", ":5:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = x ? 1\n", "syntax error", ":5:16"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = x /\\ []TRUE\n", "level error", ":5:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = CHOOSE y : y = 1\n", "not supported", ":5:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = Foo(x)\n", "unknown operator Foo", ":5:14"),
    ("VARIABLE x\nF(a) == a\nInit == x = 0\nNext == x' = F(x, x)\n", "expects 1 arguments", ":6:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = x\nInv == x' = x\n", "level error", ""),
    ("VARIABLE x\nInit == x = 0\nNext == x' = 1 + 2 % 3\n", "precedence", ":5:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = 8 / 4 / 2\n", "precedence", ":5:"),
    ("VARIABLE x\nASSUME TLCGet(\"config\").mode = \"bfs\"\nInit == x = 0\nNext == x' = x\n",
     "TLCGet and TLCSet in an ASSUME are not supported", ":4:8"),
    ("VARIABLE x\nASSUME x = 1\nInit == x = 0\nNext == x' = x\n", "ASSUME refers to a variable",
     ":4:8"),
    ("VARIABLE x\nA == x' = x + 1\nInit == x = 0\nNext == A \\cdot A\n",
     "\\cdot (action composition) is not supported", ":6:9"),
    ("VARIABLE x, y\nInit == x = 0 /\\ y = 0\nNext == x' = x\n", "y", ""),
    ("VARIABLE x\nInit == x \\in Nat\nNext == x' = x\n", "infinite set Nat", ""),
    ("VARIABLE x\nInit == x = 0\nNext == x' = IF 1 \\in {\"a\", 1} THEN 1 ELSE 0\n", "mixes", ""),
    ("CONSTANT C\nVARIABLE x\nInit == x = C\nNext == x' = x\n", "not assigned", ":3:"),
    ("VARIABLE x\nInit == x = 0\nNext == x' = x\nU == LET F(a) == a IN F(1, 2)\n",
     "expects 1 arguments", ":6:"),
]


def test_error_paths(run_spec):
    for body, fragment, where in ERROR_CASES:
        cfg = "INIT Init\nNEXT Next\n" + ("INVARIANT Inv\n" if "Inv ==" in body else "")
        r = run_spec(body, cfg)
        assert r.result == "error", body
        assert fragment in r.error, (body, r.error)
        assert where in r.error, (body, r.error)
        assert "Traceback" not in r.error


def test_temporal_quantifier_refused_by_name(run_spec):
    """Forms the direct checks and the tableau (ltl.py) both lack are refused by name."""
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 2 /\\ x' = x + 1
    Spec == Init /\\ [][Next]_x
    P == \\EE y : [](x = y)
    """
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY P\nCHECK_DEADLOCK FALSE\n")
    assert r.result == "error" and ":8:6: unsupported form of temporal property P" in r.error, \
        r.error


def test_json_keys_and_files(run_spec, tmp_path):
    """ToJsonObject shows number keys sorted and other keys as written (f @@ g: f's
    first), as TLC does; a LET that reads a file is evaluated where it is used, after
    the write before it, not once at the start (the file here first holds stale data);
    a file that cannot be written is an error naming it."""
    data = tmp_path / "data.ndjson"
    data.write_text("9\n")
    body = f"""
    ASSUME ToJsonObject("b" :> 1 @@ "a" :> 2) = "{{\\"b\\":1,\\"a\\":2}}"
    ASSUME ToJsonObject(2 :> "x" @@ 0 :> "y") = "{{\\"0\\":\\"y\\",\\"2\\":\\"x\\"}}"
    RoundTrip == LET out == <<1, 2>>
                 IN /\\ ndJsonSerialize("{data}", out)
                    /\\ LET back == ndJsonDeserialize("{data}") IN back = out
    ASSUME RoundTrip
    """
    r = run_spec(body, "", extends="EXTENDS Naturals, Sequences, TLC, Json\n")
    assert r.result == "ok", r.error
    missing = tmp_path / "no" / "such.json"
    r = run_spec(f'ASSUME JsonSerialize("{missing}", <<1>>)\n', "",
                 extends="EXTENDS Naturals, Sequences, Json\n")
    assert r.result == "error" and f"JsonSerialize('{missing}'): No such file" in r.error, \
        r.error


def test_property_through_an_instance_operator_with_an_operator_argument(tmp_path):
    """L!Always(NotThree, s), Always(P(_), x) == [](P(x)) in the instanced module: the
    first state with s = 3 breaks it, after 0, 1, 2 (the shortest trace, as an invariant)."""
    specs = Path(__file__).resolve().parent / "specs"
    cfg = tmp_path / "fails.cfg"
    cfg.write_text("SPECIFICATION Spec\nPROPERTY Fails\n")
    r = check(str(specs / "InstOpArg.tla"), str(cfg))
    assert (r.violated, r.trace_length) == ("Fails", 4), r.error
    assert r.result in ("invariant", "property")


def test_tlcext_operators(run_spec):
    """TLCNoOp and TLCCache are their first argument and AssertEq is equality; the other
    TLCExt operators are refused by name where they are evaluated (a definition that is
    never evaluated, as a trace ALIAS, costs nothing)."""
    body = """
    VARIABLE x
    Init == x = TLCNoOp(0)
    Next == x < 2 /\\ x' = TLCCache(x + 1, {x})
    Inv == AssertEq(x, x) /\\ ~AssertEq(x, x + 1)
    Shown == CounterExample
    """
    extends = "EXTENDS Naturals, TLCExt\n"
    r = run_spec(body, "INIT Init\nNEXT Next\nINVARIANT Inv\nCHECK_DEADLOCK FALSE\n",
                 extends=extends)
    assert (r.result, r.distinct_states) == ("ok", 3), r.error
    r = run_spec(body.replace("Init == x = TLCNoOp(0)", "Init == x = 0 /\\ Shown = Shown"),
                 "INIT Init\nNEXT Next\n", extends=extends)
    assert r.result == "error" and ":8:10: CounterExample (TLCExt) is not supported" in r.error, \
        r.error


def test_postconditions(run_spec):
    """POSTCONDITIONs are evaluated once the search has ended, TLCGet giving its counts;
    a false one is an error (it was once read and ignored). TLC's _POSSIBLE is refused."""
    body = """
    VARIABLE x
    Init == x = 0
    Next == x < 3 /\\ x' = x + 1
    Counts == TLCGet("distinct") = 4 /\\ TLCGet("generated") = 4 /\\ TLCGet("diameter") = 4
    Five == TLCGet("distinct") = 5
    """
    cfg = "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\nPOSTCONDITIONS Counts"
    assert run_spec(body, cfg + "\n").result == "ok"
    r = run_spec(body, cfg + " Five\n")
    assert (r.result, r.distinct_states) == ("error", 4) and ":8:1: postcondition Five is false" \
        in r.error, r.error
    r = run_spec(body, cfg + "\n_POSSIBLE Five\n")
    assert r.result == "error" and ":5:1: _POSSIBLE" in r.error and "not supported" in r.error


def test_sets_too_large_to_enumerate(run_spec, monkeypatch):
    """Beyond TLC's bound on an enumerated set (2^31 - 1 elements, here lowered to 1000)
    SUBSET and [S -> T] are refused with their sizes, instead of filling the memory."""
    from spec.checker import values
    monkeypatch.setattr(values, "SET_MAX", 1000)
    for big, what in (("SUBSET (1..10)", "SUBSET of a set of 10 elements"),
                      ("[1..7 -> 1..3]", "[S -> T] with 7 elements in S and 3 in T")):
        r = run_spec(f"VARIABLE x\nInit == x \\in {big}\nNext == x' = x\n")
        assert r.result == "error" and f"cannot enumerate {what}: more than 1000" in r.error, \
            r.error
    assert run_spec("VARIABLE x\nInit == x \\in SUBSET (1..9)\nNext == x' = x\n",
                    "INIT Init\nNEXT Next\n").distinct_states == 512


def test_standard_operator_without_extends(run_spec):
    body = "VARIABLE x\nInit == x = <<>>\nNext == x' = Append(x, 1)\n"
    r = run_spec(body, extends="EXTENDS Naturals\n")
    assert r.result == "error" and "Append" in r.error and "Sequences" in r.error
    r = run_spec("VARIABLE x\nInit == x = 0\nNext == x' = x + 1\n", extends="")
    assert r.result == "error" and "unknown operator +" in r.error


def test_cfg_naming_undefined_operator(run_spec):
    r = run_spec(COUNTER, "INIT Init\nNEXT Next\nINVARIANT Missing\n")
    assert r.result == "error" and "Missing" in r.error and "not defined" in r.error


def test_cfg_constant_operator_value_by_value_refused(run_spec):
    r = run_spec("CONSTANT F(_)\nVARIABLE x\nInit == x = 0\nNext == x' = F(x)\n",
                 "INIT Init\nNEXT Next\nCONSTANT\n  F(0) = 1\n")
    assert r.result == "error" and "M.cfg:4:3: a constant operator given value by value" \
        in r.error and "not supported" in r.error, r.error


def test_tabs_and_unicode_free_synonyms(run_spec):
    body = "VARIABLE x\nInit ==\tx = 0\nNext == \\exists k \\in {1} : x' = x + k /\\ x < 2\n"
    r = run_spec(body, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.distinct_states) == ("ok", 3), r.error


def test_cli_json_and_exit_codes(tmp_path):
    spec, cfg = write_spec(tmp_path, COUNTER, "INIT Init\nNEXT Next\n")
    proc = subprocess.run([sys.executable, "-m", "spec.checker", spec, "-config", cfg, "--json"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 11
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["result"] == "deadlock" and out["trace_length"] == 4 and len(out["trace"]) == 4
    proc = subprocess.run([sys.executable, "-m", "spec.checker", "--bogus"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 254
    proc = subprocess.run([sys.executable, "-m", "spec.checker", "--help"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and "Exit codes" in proc.stdout
    bad = tmp_path / "Bad.tla"
    bad.write_text("---- MODULE Bad ----\nVARIABLE x\nInit == x = \n====\n")
    (tmp_path / "Bad.cfg").write_text("INIT Init\nNEXT Init\n")
    proc = subprocess.run([sys.executable, "-m", "spec.checker", str(bad), "--json"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 150
    out = json.loads(proc.stdout)
    assert out["result"] == "error" and "Bad.tla:" in out["error"]
    assert "Traceback" not in proc.stderr


def test_community_modules_are_refused_by_name(run_spec, tmp_path):
    # a community module not beside the spec: refused as such, with the EXTENDS position
    body = "VARIABLE x\nInit == x = 0\nNext == x' = x\n"
    r = run_spec(body, extends="EXTENDS Naturals, Functions\n")
    assert r.result == "error" and "Functions (a community module) is not supported" in r.error
    assert ":1:1:" in r.error and "Traceback" not in r.error
    # an operator of SequencesExt (known, not implemented): a refusal naming it
    body = "VARIABLE x\nInit == x = 0\nNext == x' = Max({x, 1})\n"
    r = run_spec(body, extends="EXTENDS Naturals, SequencesExt\n")
    assert r.result == "error" and "unknown operator Max" in r.error
    assert "SequencesExt, whose operators are not supported" in r.error and ":5:14" in r.error
    # a copy of it beside the spec is read instead
    (tmp_path / "SequencesExt.tla").write_text(
        "---- MODULE SequencesExt ----\nMax(S) == CHOOSE m \\in S : \\A n \\in S : n <= m\n"
        "====\n")
    body = "VARIABLE x\nInit == x = 0\nNext == x < 3 /\\ x' = Max({x + 1, 1})\n"
    r = run_spec(body, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n",
                 extends="EXTENDS Naturals, SequencesExt\n")
    assert r.result == "ok" and r.distinct_states == 4, r.error


def test_an_unimplemented_operator_in_an_instanced_module_is_refused_by_name(tmp_path):
    # the module that extends SequencesExt is instanced, not extended: still a refusal
    (tmp_path / "Lib.tla").write_text(
        "---- MODULE Lib ----\nEXTENDS Naturals, SequencesExt\nVARIABLE v\n"
        "Grow == v' = Max({v, 1})\n====\n")
    body = "VARIABLE x\nL == INSTANCE Lib WITH v <- x\nInit == x = 0\nNext == L!Grow\n"
    spec, cfg = write_spec(tmp_path, body, "INIT Init\nNEXT Next\n",
                           extends="EXTENDS Naturals\n")
    r = check(spec, cfg)
    assert r.result == "error" and "unknown operator Max" in r.error, r.error
    assert "SequencesExt, whose operators are not supported" in r.error, r.error
    assert "Lib.tla:4:14" in r.error, r.error


def test_a_tlaps_theorem_module_is_read_as_empty(run_spec):
    # its theorems are for the prover; Integers' operators come through it, as in TLAPS
    body = "VARIABLE x\nInit == x = -1\nNext == x < 1 /\\ x' = x + 1\n"
    r = run_spec(body, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n",
                 extends="EXTENDS NaturalsInduction, TLAPS\n")
    assert (r.result, r.distinct_states) == ("ok", 3), r.error
    # one of its own operators is not provided: a refusal that names the module
    body = "VARIABLE x\nInit == x = 0\nNext == x' = x /\\ FiniteSubsetsOf({x}) # {}\n"
    r = run_spec(body, extends="EXTENDS Naturals, FiniteSetTheorems\n")
    assert r.result == "error" and "unknown operator FiniteSubsetsOf" in r.error, r.error
    assert "FiniteSetTheorems, whose operators are not supported" in r.error, r.error


def test_a_label_selector_is_refused_by_name(run_spec):
    # the parser keeps no labels, so A!P0 cannot be found; positional selectors can
    body = "VARIABLE x\nA == P0:: x >= 0\nInit == x = 0\nNext == x' = x /\\ A!P0\n"
    r = run_spec(body)
    assert r.result == "error" and "subexpression reference A!P0 is not supported" in r.error, \
        r.error
    assert "M.tla:6:19:" in r.error, r.error
    r = run_spec(body.replace("A!P0", "A!3"))  # x >= 0 has two operands
    assert r.result == "error" and "A!3 is not supported (selector 3 of" in r.error, r.error


def test_a_spec_that_is_not_utf8_is_named_as_such(tmp_path):
    spec = tmp_path / "Latin.tla"
    spec.write_bytes(b"---- MODULE Latin ----\n\\* caf\xe9\nVARIABLE x\n====\n")
    (tmp_path / "Latin.cfg").write_text("INIT Init\nNEXT Init\n")
    r = check(str(spec), str(tmp_path / "Latin.cfg"))
    assert r.result == "error" and "not UTF-8 text (byte 30, line 2)" in r.error, r.error


def test_state_level_sequences_and_record_fields_keep_their_values(run_spec):
    # [i \in 1..n |-> e] with n read from the state is built as a tuple in order, and a
    # field of a record literal (through operator arguments) is read without the record
    body = ("VARIABLE n\nInit == n = 0\n"
            "Next == n < 3 /\\ n' = n + 1\n"
            "Pair(k) == [a |-> k, b |-> k + 1]\nSecond(r) == r.b\n"
            "Inv == /\\ [i \\in 1..n |-> i * 10] = SubSeq(<<10, 20, 30>>, 1, n)\n"
            "       /\\ Second(Pair(n)) = n + 1 /\\ Pair(n).a = n\n"
            "       /\\ Len([i \\in 1..n |-> i]) = n\n")
    r = run_spec(body, cfg="INIT Init\nNEXT Next\nINVARIANT Inv\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.distinct_states) == ("ok", 4), (r.result, r.error)


@pytest.mark.parametrize("step, prop, length", [
    # the bad step (+5) is each state's second successor
    ("x < 6 /\\ (x' = x + 1 \\/ x' = x + 5)", "x' - x < 3", 2),
    # the only bad step, 2 -> 0, leads back to the initial state: the explorer tests
    # steps as it generates them, so one into a state already found is tested as well
    ("x' = (x + 1) % 3", "x' > x", 4),
])
def test_an_action_property_is_tested_on_every_step(run_spec, step, prop, length):
    # with and without SYMMETRY (under it a step leads to the state of its class)
    body = ("CONSTANTS a, b\nVARIABLES x, z\nInit == x = 0 /\\ z = a\n"
            f"Next == {step} /\\ z' = z\n"
            f"Prop == [][{prop}]_x\nSym == Permutations({{a, b}})\n")
    cfg = "CONSTANTS a = a  b = b\nINIT Init\nNEXT Next\nPROPERTY Prop\nCHECK_DEADLOCK FALSE\n"
    for extra in ("", "SYMMETRY Sym\n"):
        r = run_spec(body, cfg=cfg + extra)
        assert (r.result, r.violated, r.trace_length) == ("property", "Prop", length), \
            (extra, r.result, r.error)


def test_parts_of_a_function_on_zero_based_numbers_are_read_from_its_dict(tmp_path):
    # x has domain 0..2, so it is held as a dict, not a tuple: the units read x[0], x[1]
    # and x[2] through hoisted names all the same (compiler.hoist_prologue's dict tests)
    from spec.checker import load
    body = ("VARIABLE x\nInit == x = [i \\in 0..2 |-> i * 10]\n"
            "Next == x[1] = 10 /\\ x' = [x EXCEPT ![1] = x[2] + 1]\n"
            "Inv == x[1] \\in {10, 21} /\\ x[2] = 20 /\\ x[0] = 0\n")
    cfg = "INIT Init\nNEXT Next\nINVARIANT Inv\nCHECK_DEADLOCK FALSE\n"
    r = check(*write_spec(tmp_path, body, cfg))
    assert (r.result, r.distinct_states) == ("ok", 2), r.error
    model = load(*write_spec(tmp_path, body, cfg))
    model.invariant_all()
    assert any("elif c_0.__class__ is _FnDict and 1 in c_0 and 2 in c_0:" in src
               for src in model.compiler.sources.values())
    # Inv reads x[0] too: no tuple has that part, so x is read as a dict only
    assert any("if c_0.__class__ is not _FnDict or 0 not in c_0 or 1 not in c_0 or 2 not"
               " in c_0:" in src for src in model.compiler.sources.values())
    r = check(*write_spec(tmp_path, body.replace("{10, 21}", "{10, 20}"), cfg))
    assert (r.result, r.violated, r.distinct_states) == ("invariant", "Inv", 2)


def test_a_unit_whose_parts_are_missing_runs_its_plain_version_made_when_first_needed(
        tmp_path):
    # x[1] and x[2] are hoisted; in <<>> and <<0>> they are missing, so Next and Inv run
    # their plain versions there, compiled on that first call (eight states worked out
    # by hand); from <<0, 1>> on every state has both parts: no plain version is made
    from spec.checker import load
    from spec.checker.bfs import Explorer
    body = ("VARIABLE x\nInit == x = INIT\n"
            "Next == \\/ Len(x) < 3 /\\ x' = Append(x, Len(x))\n"
            "        \\/ Len(x) >= 2 /\\ x[2] = 1 /\\ x[1] < 2\n"
            "           /\\ x' = [x EXCEPT ![1] = x[1] + 1]\n"
            "Inv == Len(x) < 2 \\/ x[2] = 1\n")
    cfg = "INIT Init\nNEXT Next\nINVARIANT Inv\nCHECK_DEADLOCK FALSE\n"
    for init, states, plain in (("<<>>", 8, True), ("<<0, 1>>", 6, False)):
        spec = write_spec(tmp_path, body.replace("INIT", init), cfg)
        r = check(*spec)
        assert (r.result, r.distinct_states) == ("ok", states), (init, r.error)
        model = load(*spec)
        explorer = Explorer(model)
        assert (explorer.run()[0], len(explorer.states)) == ("ok", states), init
        made = [n for n in model.compiler.sources if n.endswith("_plain")]
        assert bool(made) == plain, (init, made)
        # nor is Next with action labels compiled: no trace was asked for
        assert model.next_labeled == model.next_labeled_on_first_call


@pytest.mark.parametrize("next_", ["\\E w \\in Words : x' = w", "x' \\in Words",
                                   "\\E w \\in Words, n \\in {1, 2} : x' = w"])
@pytest.mark.parametrize("bad, found", [('"a"', 2), ('"c"', 4)])
def test_a_constant_set_is_met_in_tlc_order_where_a_violation_is_found(run_spec, next_, bad,
                                                                       found):
    # TLC generates the successors of a state in its order of the set's elements ("a",
    # "b", "c", ...) and tests each new state as it comes: the counts at the violation
    # tell that order from Python's (twelve elements: too many to unroll)
    body = ('VARIABLE x\nWords == {"l", "k", "j", "i", "h", "g", "f", "e", "d", "c", "b", "a"}\n'
            f'Init == x = ""\nNext == {next_}\nSafe == x # {bad}\n')
    r = run_spec(body, cfg="INIT Init\nNEXT Next\nINVARIANT Safe\n")
    assert (r.result, r.distinct_states) == ("invariant", found), (r.result, r.error)


def test_constant_false_invariant_or_property_is_an_error_as_in_tlc(run_spec):
    """TLC evaluates a constant-level invariant or property before the search and stops
    unless it is TRUE; a state-level one false at the start is a violation. (Found by the
    differential test against TLC, spec.checker.difftest.)"""
    body = ("VARIABLE x\nInit == x = 0\nNext == x' = 1 - x\nSpec == Init /\\ [][Next]_x\n"
            "Const == 1 > 2\nNum == 1 + 1\nState == x > 0\nSure == 2 > 1\n")
    r = run_spec(body, "SPECIFICATION Spec\nINVARIANT Const\n")
    assert r.result == "error" and "The invariant of Const is equal to FALSE" in r.error, r
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY Num\n")
    assert r.result == "error" and "The property of Num is equal to 2" in r.error, r
    r = run_spec(body, "SPECIFICATION Spec\nINVARIANT State\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "State", 1), r
    r = run_spec(body, "SPECIFICATION Spec\nINVARIANT Sure\nPROPERTY Sure\n")
    assert (r.result, r.distinct_states) == ("ok", 2), r


def test_infinite_bound_of_a_temporal_quantifier_is_named_with_its_position(run_spec):
    body = ("VARIABLE x\nInit == x = 0\nNext == x' = (x + 1) % 3\n"
            "Spec == Init /\\ [][Next]_x /\\ WF_x(Next)\nP == \\A n \\in Nat : <>(x = n)\n")
    r = run_spec(body, "SPECIFICATION Spec\nPROPERTY P\n")
    assert r.result == "error" and ":7:15: cannot enumerate the infinite set Nat" in r.error, r


def test_state_predicate_property_is_tested_on_initial_states_first_as_in_tlc(run_spec):
    """TLC tests a PROPERTY's state predicate on each initial state right after the
    invariants, before the search, and on an initial state the constraint excludes too.
    (Both found by the differential test against TLC.)"""
    body = ("VARIABLE x\nInit == x = 0\nNext == x' = x + 1\nSpec == Init /\\ [][Next]_x\n"
            "Q == x # 0\nInv == x < 2\nCon == x # 0\n")
    r = run_spec(body, "SPECIFICATION Spec\nINVARIANT Inv\nPROPERTY Q\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated, r.trace_length) == ("property", "Q", 1), r
    r = run_spec(body, "SPECIFICATION Spec\nCONSTRAINT Con\nPROPERTY Q\nCHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated, r.distinct_states) == ("property", "Q", 0), r


def test_a_name_bound_again_inside_its_binder_is_an_error_as_in_sany(run_spec):
    """`\\A e \\in S : WF(..) /\\ \\A e \\in T : ...` binds e inside e's own scope: SANY's
    "multiply-defined symbol". A LET name reused by a CHOOSE in its own definition, or a
    LAMBDA's parameter named like a LET, stays legal (both occur in tlaplus/Examples)."""
    body = ("VARIABLE x\nInit == x = 0\nNext == x' = 1 - x\n"
            "Bad == \\E e \\in {1} : \\A e \\in {2} : x = e\n"
            "Apply(F(_), v) == F(v)\n"
            "Good == LET y == CHOOSE y \\in {1, 2} : TRUE IN "
            "LET z == Apply(LAMBDA z : z + 1, y) IN y + z > 0\n")
    r = run_spec(body, "INIT Init\nNEXT Next\nINVARIANT Good\n")
    assert r.result == "error" and ":6:23:" in r.error and "multiply-defined symbol e" in r.error, r
    r = run_spec(body.replace("\\A e \\in {2} : x = e", "\\A f \\in {2} : x = f"),
                 "INIT Init\nNEXT Next\nINVARIANT Good\n")
    assert (r.result, r.distinct_states) == ("ok", 2), r


def test_action_property_is_tested_on_every_step_and_stops_the_search_as_in_tlc(run_spec):
    """TLC tests `[][A]_v` on each step as it is generated, a step into a state the
    CONSTRAINT leaves out too, and stops at the first failure: an invariant that fails
    deeper is not reached. (Both found by the differential test against TLC.)"""
    body = ("VARIABLE x\nInit == x = 0\nNext == x' = x + 1\nSpec == Init /\\ [][Next]_x\n"
            "Step == [][x' < 1]_x\nInv == x < 3\nCon == x < 1\n")
    r = run_spec(body, "SPECIFICATION Spec\nINVARIANT Inv\nPROPERTY Step\n"
                       "CHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated, r.trace_length) == ("property", "Step", 2), r
    r = run_spec(body, "SPECIFICATION Spec\nCONSTRAINT Con\nPROPERTY Step\n"
                       "CHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated, r.trace_length, r.distinct_states) \
        == ("property", "Step", 2, 1), r
    r = run_spec(body.replace("x' < 1", "x' < 9"),  # the step holds: the state's invariant
                 "SPECIFICATION Spec\nCONSTRAINT Con\nPROPERTY Step\nINVARIANT Inv\n"
                 "CHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated) == ("ok", None), r
    r = run_spec(body.replace("x' < 1", "x' < 9").replace("x < 3", "x < 1"),
                 "SPECIFICATION Spec\nCONSTRAINT Con\nPROPERTY Step\nINVARIANT Inv\n"
                 "CHECK_DEADLOCK FALSE\n")
    assert (r.result, r.violated, r.trace_length) == ("invariant", "Inv", 2), r
