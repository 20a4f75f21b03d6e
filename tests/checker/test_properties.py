"""Hypothesis: the evaluator agrees with Python's own semantics on sets, functions, sequences."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec.checker import evaluate, from_python

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
small_ints = st.integers(min_value=-5, max_value=9)
int_sets = st.frozensets(small_ints, max_size=5)
int_seqs = st.lists(small_ints, max_size=5)


def tla(v):
    """Python value -> TLA+ source text."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return f"({v})"
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(tla(x) for x in sorted(v)) + "}"
    if isinstance(v, (list, tuple)):
        return "<<" + ", ".join(tla(x) for x in v) + ">>"
    if isinstance(v, dict):
        if not v:
            return "<<>>"
        return "(" + " @@ ".join(f"{tla(k)} :> {tla(x)}" for k, x in v.items()) + ")"
    raise TypeError(v)


def same(model, text, expected):
    assert evaluate(model, text) == from_python(expected), text


@SETTINGS
@given(int_sets, int_sets)
def test_set_operators(expr_model, a, b):
    same(expr_model, f"{tla(a)} \\cup {tla(b)}", a | b)
    same(expr_model, f"{tla(a)} \\cap {tla(b)}", a & b)
    same(expr_model, f"{tla(a)} \\ {tla(b)}", a - b)
    same(expr_model, f"{tla(a)} \\subseteq {tla(b)}", a <= b)
    same(expr_model, f"{tla(a)} = {tla(b)}", a == b)
    same(expr_model, f"Cardinality({tla(a)} \\X {tla(b)})", len(a) * len(b))
    same(expr_model, f"Cardinality(SUBSET {tla(a)})", 2 ** len(a))
    same(expr_model, f"{{x + 1 : x \\in {tla(a)}}}", {x + 1 for x in a})
    same(expr_model, f"{{x \\in {tla(a)} : x % 2 = 0}}", {x for x in a if x % 2 == 0})
    same(expr_model, f"\\E x \\in {tla(a)} : x \\in {tla(b)}", bool(a & b))


@SETTINGS
@given(st.dictionaries(small_ints, small_ints, max_size=4), small_ints, small_ints)
def test_functions(expr_model, f, key, value):
    fn = tla(f)
    same(expr_model, f"DOMAIN {fn}", set(f))
    for k, v in f.items():
        same(expr_model, f"{fn}[{tla(k)}]", v)
    if key in f:
        changed = dict(f)
        changed[key] = value
        same(expr_model, f"[{fn} EXCEPT ![{tla(key)}] = {tla(value)}]", changed)
        same(expr_model, f"[{fn} EXCEPT ![{tla(key)}] = @ + 1][{tla(key)}]", f[key] + 1)
    same(expr_model, f"[x \\in DOMAIN {fn} |-> {fn}[x] * 2]", {k: v * 2 for k, v in f.items()})
    same(expr_model, f"({tla(key)} :> {tla(value)}) @@ {fn}", {**f, key: value})


@SETTINGS
@given(int_seqs, int_seqs, small_ints)
def test_sequences(expr_model, s, t, x):
    a, b = tla(s), tla(t)
    same(expr_model, f"Len({a})", len(s))
    same(expr_model, f"{a} \\o {b}", s + t)
    same(expr_model, f"Append({a}, {tla(x)})", s + [x])
    same(expr_model, f"{a} = [i \\in 1..{len(s)} |-> {a}[i]]", True)
    same(expr_model, f"SelectSeq({a}, LAMBDA e : e > {tla(x)})", [e for e in s if e > x])
    if s:
        same(expr_model, f"Head({a})", s[0])
        same(expr_model, f"Tail({a})", s[1:])
        m, n = 1, max(1, len(s) - 1)
        same(expr_model, f"SubSeq({a}, {m}, {n})", s[m - 1:n])
    same(expr_model, f"{a} \\in Seq({tla(set(s) | {0})})", True)
