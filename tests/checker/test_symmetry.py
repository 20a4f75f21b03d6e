"""SYMMETRY counts orbits exactly: judged by brute force, not by the checker's own renaming.

The spec's states are explored without reduction; the test renames every state by every
permutation of its own making and counts the orbits; the checker must find that many
states under each SYMMETRY, and its representative must be one per orbit. The spec has
functions that map several symmetric values alike, sets of tuples, values of two sets that
only a joint renaming relates, and states fixed by some swaps, the cases sorting must get right.
"""
from itertools import permutations

import pytest

from spec.checker import check, explore, load
from spec.checker.bfs import canonicaliser
from spec.checker.values import FnDict, ModelValue

from .conftest import write_spec

BODY = """
CONSTANTS r1, r2, r3, v1, v2, None
R == {r1, r2, r3}
V == {v1, v2}
VARIABLES val, msgs, hold
Init == val = [r \\in R |-> None] /\\ msgs = {} /\\ hold = None
Pick(r, v) == val[r] = None /\\ val' = [val EXCEPT ![r] = v] /\\ msgs' = msgs \\cup {<<r, v>>}
              /\\ UNCHANGED hold
Copy(r, s) == val[r] = None /\\ val[s] # None /\\ val' = [val EXCEPT ![r] = val[s]]
              /\\ UNCHANGED <<msgs, hold>>
Drop(r) == val[r] # None /\\ val' = [val EXCEPT ![r] = None] /\\ UNCHANGED <<msgs, hold>>
Take(r) == hold = None /\\ <<r, val[r]>> \\in msgs /\\ hold' = r /\\ UNCHANGED <<val, msgs>>
Next == \\E r, s \\in R, v \\in V : Pick(r, v) \\/ Copy(r, s) \\/ Drop(r) \\/ Take(r)
Both == Permutations(R) \\cup Permutations(V)
OnlyR == Permutations(R)
OneSwap == {(r1 :> r2 @@ r2 :> r1 @@ r3 :> r3)}
"""
R = [ModelValue(n) for n in ("r1", "r2", "r3")]
V = [ModelValue(n) for n in ("v1", "v2")]


def cfg(symmetry):
    return ("CONSTANTS r1 = r1  r2 = r2  r3 = r3  v1 = v1  v2 = v2  None = None\n"
            "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"
            f"SYMMETRY {symmetry}\n")


def group(symmetry):
    """The renamings, as plain dicts built here."""
    rs = [dict(zip(R, p, strict=True)) for p in permutations(R)]
    vs = [dict(zip(V, p, strict=True)) for p in permutations(V)]
    if symmetry == "Both":
        return [{**a, **b} for a in rs for b in vs]
    if symmetry == "OnlyR":
        return rs
    return [{}, {R[0]: R[1], R[1]: R[0]}]


def rename(v, g):
    if isinstance(v, ModelValue):
        return g.get(v, v)
    if isinstance(v, tuple):
        return tuple(rename(x, g) for x in v)
    if isinstance(v, frozenset):
        return frozenset(rename(x, g) for x in v)
    if isinstance(v, FnDict):
        return FnDict({rename(k, g): rename(x, g) for k, x in v.d.items()})
    return v


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    """{symmetry: (spec path, cfg path)}"""
    folder = tmp_path_factory.mktemp("sym")
    tla = write_spec(folder, BODY, cfg("Both"), name="Sym")[0]
    paths = {}
    for sym in ("Both", "OnlyR", "OneSwap"):
        (folder / f"{sym}.cfg").write_text(cfg(sym))
        paths[sym] = tla, str(folder / f"{sym}.cfg")
    return paths


@pytest.mark.parametrize("symmetry", ["Both", "OnlyR", "OneSwap"])
def test_symmetry_finds_one_state_per_orbit(spec, symmetry):
    tla, cfg_path = spec[symmetry]
    model = load(tla, cfg_path)
    states = explore(model).states
    g = group(symmetry)
    orbit_of = {s: frozenset(tuple(rename(x, p) for x in s) for p in g) for s in states}
    orbits = set(orbit_of.values())
    assert len(orbits) < len(states)
    assert check(tla, cfg_path).distinct_states == len(orbits)
    rep = canonicaliser(model)
    reps = {}
    for s in states:
        for p in g:
            assert rep(tuple(rename(x, p) for x in s)) == rep(s), (symmetry, s, p)
        reps.setdefault(rep(s), set()).add(orbit_of[s])
    assert all(len(o) == 1 for o in reps.values()) and len(reps) == len(orbits)
