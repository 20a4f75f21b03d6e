"""Symmetry representatives: one key per orbit of the SYMMETRY group.

The group is the SYMMETRY set closed under composition (model.group_closure). When it is
every permutation of each of its orbits (`Permutations(A) \\cup Permutations(B)`, the usual
case), the representative is found by sorting instead of by trying every permutation: each
symmetric model value gets a signature that no renaming can change (the hash of the state
with that value marked and every other symmetric value anonymised), each orbit's values are
renamed in signature order onto the orbit's values in their fixed order, and only values
with equal signatures are tried in every order (in none, when swapping them leaves the state
unchanged). The representative is the candidate with the smallest hash, ties broken by the
value order. The candidates of g(s) are the images of those of s, so every state of an orbit
gets the same representative and counts equal those of the try-everything form, which other
groups still use.
"""
from itertools import groupby, permutations, product
from math import factorial, prod

from .values import FnDict, ModelValue, fn_dict, sort_key


def representative(maps):
    """rep(state) for the group `maps` (a list of dicts, identity included), or None."""
    if not maps:
        return None
    classes = orbits(maps)
    if len(maps) != prod(factorial(len(c)) for c in classes):
        return smallest([permuter(m) for m in maps])
    return sorting(classes)


def orbits(maps):
    """The orbits of more than one value, each sorted in the value order."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) is not x:
            x = parent[x]
        return x
    for m in maps:
        for k, v in m.items():
            parent[find(k)] = find(v)
    groups = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    return sorted((sorted(g, key=sort_key) for g in groups.values() if len(g) > 1),
                  key=lambda g: sort_key(g[0]))


def smallest(perms):
    """rep(state): of the images under `perms`, the smallest hash (ties: value order)."""
    def rep(state):
        best, best_hash = None, None
        for perm in perms:
            cand = perm(state)
            h = hash(cand)
            if best is None or h < best_hash or (
                    h == best_hash and cand != best and sort_key(cand) < sort_key(best)):
                best, best_hash = cand, h
        return best
    return rep


def sorting(classes):
    """rep(state) for the full symmetric group of each class, by signature order.

    What a renaming does to one variable's value is remembered per value object (states
    share them): its signature vector per class, its images and whether swaps fix it."""
    anon = {v: ModelValue(f" anon{i}") for i, c in enumerate(classes) for v in c}
    marks = [[renamer({**anon, v: ModelValue(f" mark{i}")}, merging=True) for v in c]
             for i, c in enumerate(classes)]
    renamers = {}
    facts = {}

    def fact(x):  # (x, [per class: tuple of the signature of each value], {key: image})
        f = facts.get(id(x))
        if f is None or f[0] is not x:
            f = facts[id(x)] = (x, [tuple([hash(mk(x)) for mk in row]) for row in marks], {})
        return f

    def image(f, key):  # key: ("swap", a, b) or the values mapped onto the classes in order
        got = f[2].get(key)
        if got is None:
            fn = renamers.get(key)
            if fn is None:
                if key[:1] == ("swap",):
                    mapping = {key[1]: key[2], key[2]: key[1]}
                else:
                    flat = [v for c in classes for v in c]
                    mapping = dict(zip(key, flat, strict=True))
                fn = renamers[key] = renamer(mapping)
            got = f[2][key] = fn(f[0])
        return got

    def fixed(group, fs):  # do swaps of neighbours in `group` leave every value as is?
        return all(image(f, ("swap", a, b)) == f[0]
                   for a, b in zip(group, group[1:], strict=False) for f in fs)

    def orders(ci, c, fs):  # the orders of c's values that signatures allow
        keyed = sorted(zip(zip(*[f[1][ci] for f in fs], strict=True), range(len(c))))
        out = [()]
        for _, grp in groupby(keyed, key=lambda x: x[0]):
            group = tuple(c[j] for _, j in grp)
            options = [group] if len(group) == 1 or fixed(group, fs) \
                else list(permutations(group))
            out = [o + opt for o in out for opt in options]
        return out

    def rep(state):
        fs = [fact(x) for x in state]
        keys = [sum(combo, ()) for combo in
                product(*[orders(ci, c, fs) for ci, c in enumerate(classes)])]
        if len(keys) == 1:
            return tuple([image(f, keys[0]) for f in fs])
        return smallest([lambda _, k=k: tuple([image(f, k) for f in fs]) for k in keys])(state)
    return rep


def permuter(m):
    """perm(state): the state with model values renamed by m. States are shared (one
    object per distinct variable value), so each variable's value is renamed once and
    remembered by identity (the memo keeps the object alive, so ids are not reused)."""
    memo = {}
    deep = renamer(m)

    def perm(state):
        out = []
        for v in state:
            hit = memo.get(id(v))
            if hit is None or hit[0] is not v:
                hit = memo[id(v)] = (v, deep(v))
            out.append(hit[1])
        return tuple(out)
    return perm


def renamer(m, merging=False):
    """deep(value): the value with model values renamed by m. A map that merges values
    (signatures) turns functions into sets of pairs, so that two keys renamed alike cannot
    make the result depend on the order of a dict."""
    inner = {}  # sets and functions by value: their hashes are cached
    mine = {}   # ... and by identity, cheaper still (parts of a set are shared objects)

    def deep(v):
        c = v.__class__
        if c is ModelValue:
            return m.get(v, v)
        if c is tuple:
            return tuple([deep(e) for e in v])
        if c is frozenset or c is FnDict:
            hit = mine.get(id(v))
            if hit is not None and hit[0] is v:
                return hit[1]
            r = inner.get(v)
            if r is None:
                if c is frozenset:
                    r = frozenset([deep(e) for e in v])
                elif merging:
                    r = frozenset([(deep(k), deep(x)) for k, x in v.items()])
                else:
                    r = fn_dict({deep(k): deep(x) for k, x in v.items()})
                inner[v] = r
            mine[id(v)] = (v, r)
            return r
        return v
    return deep
