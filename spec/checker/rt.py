"""Runtime helpers called by the generated Python code.

The compiler turns TLA+ expressions into Python source that calls these small
functions for everything that is not a plain Python operator: equality with
TLC's kind checks, function application, EXCEPT, set construction, the
standard-module operators. Every failure raises TLAError.
"""
from itertools import permutations as _perms
from itertools import product

from .errors import TLAError
from .values import (
    CrossSet,
    FilterSet,
    FnDict,
    FnSet,
    LazySet,
    ModelValue,
    RecFn,
    RecSet,
    SeqSet,
    SubsetSet,
    UnionSet,
    check_comparable,
    enum,
    fn_dict,
    is_finite,
    is_set,
    kind,
    make_fn,
    member,
    show,
    size,
    sort_key,
)


def eq(a, b):
    c = a.__class__
    if c is b.__class__:
        return a == b
    if c is not ModelValue and b.__class__ is not ModelValue:  # else always comparable
        check_comparable(a, b)
    return a == b


def neq(a, b):
    return not eq(a, b)


def isin(x, s):
    if s.__class__ is frozenset:
        if x in s:
            return True
        for e in s:  # TLC's error when x cannot be compared with the elements
            if e.__class__ is not x.__class__:
                check_comparable(x, e)
            break
        return False
    return member(x, s)


def mkset(items):
    s = frozenset(items)
    c = items.__class__
    if (c is tuple or c is list) and len(s) < len(items) and (True in s or False in s):
        # TRUE is 1 and FALSE is 0 to Python: {TRUE, 1} would silently become {TRUE}
        first = {e.__class__: e for e in reversed(items)}
        if bool in first and int in first:
            check_comparable(first[bool], first[int])
    if len(s) < 2 or len(set(map(type, s))) == 1:  # one class: one kind
        return s
    it = iter(s)
    first = next(it, None)
    if first is not None:
        k0 = kind(first)
        for e in it:
            k = kind(e)
            if k != k0 and k is not None and k0 is not None:
                raise TLAError(f"set mixes incomparable values {show(first)} and {show(e)}")
            if k0 is None:
                k0 = k
    return s


def union(a, b):
    if a.__class__ is frozenset and b.__class__ is frozenset:
        if a and b:
            check_comparable(next(iter(a)), next(iter(b)))
        r = a | b
        # nothing added: a itself (r holds a's very elements), whose hash is known and
        # which an EXCEPT or the seen set then finds unchanged by identity
        return a if len(r) == len(a) else r
    if not (is_finite(a) and is_finite(b)):
        return UnionSet((a, b))
    return mkset(enum(a) | enum(b))


def inter(a, b):
    if a.__class__ is frozenset and b.__class__ is frozenset:
        return a & b
    if isinstance(a, LazySet) and not a.finite and isinstance(b, LazySet) and not b.finite:
        return FilterSet(a, lambda x: member(x, b))
    if a.__class__ is not frozenset and b.__class__ is frozenset:
        a, b = b, a
    if b.__class__ is not frozenset and a.__class__ is frozenset:
        return frozenset(x for x in a if member(x, b))
    return enum(a) & enum(b)


def filter_set(s, pred):
    return FilterSet(s, pred)


LAZY_FILTER_MIN = 4096


def filtered(s, pred):
    """{x \\in s : pred(x)} over a lazy set (SUBSET S, a function set): built now when s is
    small, else kept lazy (membership is x \\in s /\\ pred(x); enumerated when needed)."""
    if isinstance(s, LazySet) and "_elements" not in s.__dict__:
        base = s
        while base.__class__ is FilterSet and "_elements" not in base.__dict__:
            base = base.base  # a filter is at most as large as what it filters
        if not s.finite or isinstance(base, LazySet) and type(base).size is not LazySet.size \
                and size(base) > LAZY_FILTER_MIN:
            return FilterSet(s, pred)
    return FilterSet(s, pred).enumerate()


def diff(a, b):
    if a.__class__ is frozenset and b.__class__ is frozenset:
        r = a - b
        return a if len(r) == len(a) else r  # nothing taken away: a itself, as in union
    if isinstance(a, LazySet) and not a.finite:
        return FilterSet(a, lambda x: not member(x, b))
    if b.__class__ is not frozenset:
        return frozenset(x for x in enum(a) if not member(x, b))
    return enum(a) - b


def subseteq(a, b):
    if a.__class__ is frozenset and b.__class__ is frozenset:
        return a <= b
    return all(member(x, b) for x in enum(a))


def setunion(s):
    members = enum(s)
    if all(e.__class__ is frozenset for e in members):
        out = frozenset().union(*members)
        first = next((next(iter(e)) for e in members if e), None)
        if first is not None:  # TLC's error for elements of different kinds
            for e in members:
                for x in e:
                    check_comparable(first, x)
                    break
        return out
    if any(isinstance(e, LazySet) and not e.finite for e in members):
        return UnionSet(members)
    out = frozenset()
    for e in members:
        out = union(out, e)
    return out


def subset(s):
    return SubsetSet(s)


def cross(*sets):
    if not all(is_finite(s) for s in sets):
        return CrossSet(sets)
    pools = [sorted(enum(s), key=sort_key) for s in sets]
    out = [()]
    for pool in pools:
        out = [t + (x,) for t in out for x in pool]
    return frozenset(out)


def interval(a, b):
    need_ints("..", a, b)
    return frozenset(range(a, b + 1))


def in_interval(x, a, b):
    """x \\in a..b, the interval not built."""
    if x.__class__ is int and a.__class__ is int and b.__class__ is int:
        return a <= x <= b
    return isin(x, interval(a, b))


def irange(a, b):
    """Iteration over a..b without building the set."""
    if a.__class__ is int and b.__class__ is int:
        return range(a, b + 1)
    check_int(a)
    check_int(b)
    return range(a, b + 1)


def check_int(v):
    if v.__class__ is not int:
        raise TLAError(f"expected an integer, got {show(v)}")
    return v


def ints(*vs):
    for v in vs:
        if v.__class__ is not int:
            raise TLAError(f"arithmetic on the non-integer {show(v)}")


ORDINALS = ("first", "second")


def not_int(op, a, b=0, where=None):
    """TLC's error for an integer operator (+, <, ...) applied to a non-integer: Python
    would add TRUE to 1, concatenate strings or sequences, or compare sets by inclusion."""
    for i, v in enumerate((a, b) if b is not None else (a,)):
        if v.__class__ is not int:
            which = "argument" if b is None else ORDINALS[i] + " argument"
            raise TLAError(f"The {which} of {op} should be an integer, but instead it is: "
                           f"{show(v)}", where)
    raise TLAError(f"internal: {op} applied to integers reported as an error", where)


def need_ints(op, a, b):
    if a.__class__ is not int or b.__class__ is not int:
        not_int(op, a, b)


def plus(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a + b
    not_int("+", a, b, where)


def minus(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a - b
    not_int("-", a, b, where)


def times(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a * b
    not_int("*", a, b, where)


def lt(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a < b
    not_int("<", a, b, where)


def gt(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a > b
    not_int(">", a, b, where)


def le(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a <= b
    not_int("<=", a, b, where)


def ge(a, b, where=None):
    if a.__class__ is int and b.__class__ is int:
        return a >= b
    not_int(">=", a, b, where)


def neg(a, where=None):
    if a.__class__ is int:
        return -a
    not_int("-", a, None, where)


def idiv(a, b):
    if a.__class__ is int and b.__class__ is int and b > 0:
        return a // b
    need_ints("\\div", a, b)
    if b == 0:
        raise TLAError("division by zero (\\div)")
    return a // b


def imod(a, b):
    if a.__class__ is int and b.__class__ is int and b > 0:
        return a % b
    need_ints("%", a, b)
    if b <= 0:
        raise TLAError(f"The second argument of % should be a positive number, not {b}")
    return a % b


def ipow(a, b):
    need_ints("^", a, b)
    if b < 0:
        raise TLAError("negative exponent in ^")
    return a ** b


def ap(f, x):
    c = f.__class__
    if c is tuple:
        if x.__class__ is int and 0 < x <= len(f):
            return f[x - 1]
    elif c is FnDict:
        try:
            return f[x]
        except KeyError:
            pass
        except TypeError:
            raise TLAError(f"cannot apply a function to {show(x)}") from None
    elif c is RecFn:
        return f(x)
    else:
        raise TLAError(f"applied the non-function {show(f)} to {show(x)}")
    raise TLAError(f"{show(x)} is not in the domain of the function {show(f)}")


def domain(f):
    c = f.__class__
    if c is tuple:
        return frozenset(range(1, len(f) + 1))
    if c is FnDict:
        return frozenset(f)
    if c is RecFn:
        return enum(f.dom)
    raise TLAError(f"DOMAIN of the non-function {show(f)}")


def in_dom(x, f):
    """x \\in DOMAIN f without building the domain (the same answers and errors)."""
    c = f.__class__
    if c is FnDict:
        if x in f:
            return True
        for e in f:  # as isin: TLC's error when x cannot be compared with the keys
            if e.__class__ is not x.__class__:
                check_comparable(x, e)
            break
        return False
    if c is tuple and x.__class__ is int:
        return 0 < x <= len(f)
    return isin(x, domain(f))


def fn(keys, body):
    """[x \\in S |-> body(x)] with keys already enumerated."""
    return make_fn({k: body(k) for k in keys})


def rec(pairs):
    return fn_dict(pairs)


def in_domain(f, k):
    c = f.__class__
    if c is tuple:
        return k.__class__ is int and 0 < k <= len(f)
    if c is FnDict:
        return k in f
    if c is RecFn:
        return member(k, f.dom)
    raise TLAError(f"EXCEPT applied to the non-function {show(f)}")


def except_(f, path, update):
    """[f EXCEPT ![k1][k2]... = update(@)]; keys outside the domain leave f unchanged."""
    k = path[0]
    c = f.__class__
    if c is FnDict:  # the common case first, without the general helpers
        if k not in f:
            return f
        old = f[k]
        new = update(old) if len(path) == 1 else except_(old, path[1:], update)
        if new is old:  # the very value: f itself (no copy, and its hash is known)
            return f
        f = fn_dict(f)
        f[k] = new
        return f
    if c is tuple and k.__class__ is int and 0 < k <= len(f):  # a sequence, k in its domain
        old = f[k - 1]
        new = update(old) if len(path) == 1 else except_(old, path[1:], update)
        return f if new is old else f[:k - 1] + (new,) + f[k:]
    if not in_domain(f, k):
        return f
    old = ap(f, k)
    new = update(old) if len(path) == 1 else except_(old, path[1:], update)
    if new is old and f.__class__ is not RecFn:
        return f
    if f.__class__ is tuple:
        lst = list(f)
        lst[k - 1] = new
        return tuple(lst)
    if f.__class__ is RecFn:
        f = make_fn({x: f(x) for x in enum(f.dom)})
        return except_(f, path, lambda _: new)
    f = fn_dict(f)
    f[k] = new
    return f


IDENTITY_MAX = 20000


# a memo of state values (memo.var_memo, identity_memo with give_way) is asked whether it
# pays at VAR_MEMO_CHECK entries and at each doubling, and holds up to VAR_MEMO_MAX: emptied
# at 4,096, MCLamportMutex's next-state memos missed for networks met a level before
# (22 -> 19 s, +230 MB). Beyond their first check, all of them together hold at most
# STATE_MEMO_ROOM entries (a few hundred bytes each): a spec with a thousand memos that
# pay does not run out of memory for them
VAR_MEMO_CHECK = 4096
VAR_MEMO_MAX = 1 << 16
STATE_MEMO_ROOM = 1 << 22


def by_identity(fn, n, size=IDENTITY_MAX, ns=None, name=None, canon=None, hits_per_entry=0.5,
                first_check=None, gone=None, weight=None, room=None):
    """fn (of n arguments), remembered by the identities of its arguments: an entry holds
    the argument objects themselves, so an id is never reused while it lives, and answers
    only for those very objects, never for equal ones (TRUE and 1 are equal to Python).
    Errors are not remembered. Emptied beyond `size` entries; when it is called through
    the global `name` of namespace ns (memo.var_memo) and fewer than size // 2 calls hit
    since it was last emptied (values that rarely repeat), `name` is rebound to fn
    itself, so later calls skip the keying. With first_check, that is asked already at
    first_check entries and again at each doubling, with hits_per_entry hits wanted for
    each entry (a memo that costs more than it saves when it misses); gone: what `name`
    is rebound to then, if not fn. weight(value): what a hit saves, in units of a
    look-up (1 without weight); hits are counted at the mean weight of the values stored.
    room: a one-element list shared by several memos, the entries they may still take
    beyond their first check; one that finds too little left is emptied instead of
    growing, and one that gives way hands its share back."""
    seen = {}
    hits = 0
    tally = [0]  # the hits of `many`, counted where a nonlocal cannot be
    check = first_check or size
    mass = 0  # the weights of the values stored since the last emptying
    held = 0  # taken from room

    def store(key, args, value):
        nonlocal hits, check, mass, held
        if canon is not None:
            value = canon(value, value)
        if len(seen) >= check:
            saved = (hits + tally[0]) * (mass / len(seen) if weight is not None else 1)
            grow = min(2 * check, size) - check
            if ns is not None and saved < hits_per_entry * len(seen):
                ns[name] = gone if gone is not None else fn
                grow = 0  # no longer called: what it holds goes with it
            elif room is not None and grow:
                if room[0] < grow:
                    grow = 0
                else:
                    room[0] -= grow
                    held += grow
            if grow:
                check += grow
            else:
                seen.clear()
                hits = tally[0] = mass = 0
                check = first_check or size
                if room is not None:
                    room[0] += held
                    held = 0
        if weight is not None:
            mass += weight(value)
        seen[key] = (args, value)
        return value

    if n == 1:
        def one(a):
            nonlocal hits
            hit = seen.get(id(a))
            if hit is not None and hit[0] is a:
                hits += 1
                return hit[1]
            return store(id(a), a, fn(a))
        return one

    if n == 2:
        def two(a, b):
            nonlocal hits
            key = (id(a), id(b))
            hit = seen.get(key)
            if hit is not None and hit[0][0] is a and hit[0][1] is b:
                hits += 1
                return hit[1]
            return store(key, (a, b), fn(a, b))
        return two

    # n arguments spelt out: no packing of *args, no map over them (one and two above are
    # the same by hand: a nonlocal count is faster than the list a generated
    # function must count in, 5-10% in a micro-benchmark)
    params = ", ".join(f"a{i}" for i in range(n))
    same = " and ".join(f"args[{i}] is a{i}" for i in range(n)) or "True"
    packed = f"({params},)" if n else "()"
    src = (f"def many({params}):\n"
           f"    key = ({''.join(f'id(a{i}), ' for i in range(n))})\n"
           f"    hit = seen.get(key)\n"
           f"    if hit is not None:\n"
           f"        args = hit[0]\n"
           f"        if {same}:\n"
           f"            tally[0] += 1\n"
           f"            return hit[1]\n"
           f"    return store(key, {packed}, fn({params}))\n")

    scope = {"seen": seen, "store": store, "fn": fn, "tally": tally}
    exec(src, scope)
    return scope["many"]


def state_memo(fn, n, ns, name, canon=None, room=None):
    """by_identity for a memo of state values called through ns[name]: it gives way when
    it hits fewer times than half its entries at VAR_MEMO_CHECK entries or a doubling of
    them, and is emptied at VAR_MEMO_MAX, or sooner when the memos sharing room (a
    model's: memo.LetMemo) have taken STATE_MEMO_ROOM entries beyond their first check."""
    return by_identity(fn, n, VAR_MEMO_MAX, ns, name, canon, first_check=VAR_MEMO_CHECK,
                       room=room)


def except_many(f, prefix, lasts):
    """[f EXCEPT !p!l1 = u1(@), !p!l2 = u2(@), ...] for clauses sharing the key path p
    (a tuple of keys): one walk down p and one copy of each function on it, the updates
    applied in order to one copy of the innermost function, where except_ would copy
    the whole path once per clause. lasts: ((l1, u1), (l2, u2), ...). Any level that is
    not an FnDict holding its key is left to except_, clause by clause (the same answer:
    EXCEPT never changes a domain, so every clause walks the same path)."""
    chain = []
    g = f
    for k in prefix:
        if g.__class__ is not FnDict or k not in g:
            break
        chain.append(g)
        g = g[k]
    else:
        if g.__class__ is FnDict:
            new = None
            for k, update in lasts:
                if k in g:  # as except_: a key outside the domain changes nothing
                    old = g[k] if new is None else new[k]
                    changed = update(old)
                    if changed is old:  # the very value: nothing to copy
                        continue
                    if new is None:
                        new = fn_dict(g)
                    new[k] = changed
            if new is None:
                return f
            for parent, k in zip(reversed(chain), reversed(prefix)):
                parent = fn_dict(parent)
                parent[k] = new
                new = parent
            return new
    for k, update in lasts:
        f = except_(f, prefix + (k,), update)
    return f


def at_put2(f, k1, k2, new):
    """[f EXCEPT ![k1][k2] = new]: at_put one level down, without except_'s closure."""
    c = f.__class__
    if c is FnDict:
        if k1 in f:
            inner = f[k1]
            changed = at_put(inner, k2, new)
            if changed is inner:
                return f
            f = fn_dict(f)
            f[k1] = changed
            return f
    elif c is tuple and k1.__class__ is int and 0 < k1 <= len(f):
        inner = f[k1 - 1]
        changed = at_put(inner, k2, new)
        return f if changed is inner else f[:k1 - 1] + (changed,) + f[k1:]
    return except_(f, (k1, k2), lambda _: new)


def at_put(f, k, new):
    """[f EXCEPT ![k] = new] for one key."""
    if f.__class__ is tuple:
        if k.__class__ is int and 0 < k <= len(f):
            if f[k - 1] is new:  # the very value: f itself
                return f
            return f[:k - 1] + (new,) + f[k:]
    elif f.__class__ is FnDict:
        if k in f:
            if f[k] is new:  # the very value: f itself (no copy, and its hash is known)
                return f
            f = fn_dict(f)
            f[k] = new
            return f
    else:
        return except_(f, (k,), lambda _: new)
    in_domain(f, k)
    return f


def fnset(a, b):
    return FnSet(a, b)


def recset(pairs):
    return RecSet(dict(pairs))


def choose(s, pred):
    """CHOOSE x \\in s : pred, the first element in TLC's order that satisfies pred.
    The elements are tested unsorted first: when one satisfies it, it is the answer
    without sorting; when several do, the least of them; if a test fails on an element
    TLC would not have reached, the sorted scan decides (and fails only where TLC does)."""
    items = enum(s)
    try:
        found = [x for x in items if pred(x) is True]
    except (TLAError, TypeError, KeyError, IndexError, ValueError, ZeroDivisionError):
        found = None
    if found:
        return found[0] if len(found) == 1 else least(found)
    if found is None:
        for x in sorted(items, key=sort_key):
            if pred(x):
                return x
    raise TLAError("Attempted to compute the value of an expression of form CHOOSE x \\in S: P, "
                   "but no element of S satisfied P")


def least(items):
    """The least of a non-empty collection in TLC's order (values.sort_key). Python's own
    order agrees with it on integers, on strings, and on tuples of one length whose
    components are integers or booleans (TLC compares components position by position,
    so a position holding booleans in one and integers in another is an error in TLC
    wherever it decides the order). sum() fails on any other component."""
    try:
        m = min(items)
    except TypeError:
        return min(items, key=sort_key)
    c = m.__class__
    if c is int or c is str:
        return m
    if c is tuple and len(set(map(len, items))) == 1:
        try:
            sum(map(sum, items))
            return m
        except TypeError:
            pass
    return min(items, key=sort_key)


def choose_least(s):
    """CHOOSE x \\in s : TRUE: the least element of s in TLC's order."""
    items = s if s.__class__ is frozenset else enum(s)
    if len(items) == 1:
        for x in items:
            return x
    if not items:
        return choose(items, lambda x: True)  # TLC's error for the empty set
    return least(items)


def case_fail(where):
    raise TLAError(f"Attempted to evaluate a CASE with no conditions true ({where})")


def fail(msg):
    raise TLAError(msg)


def not_bool(v, what, where=None):
    k = kind(v) or "model value"
    raise TLAError(f"A non-boolean expression ({k} {show(v)}) was used as {what}", where)


def need_bool(v, what, where=None):
    if v is True or v is False:
        return v
    not_bool(v, what, where)


def boolean(v):
    if v is True or v is False:
        return v
    raise TLAError(f"expected a boolean, got {show(v)}")


# --- Sequences -------------------------------------------------------------

def seq(v, op):
    if v.__class__ is not tuple:
        raise TLAError(f"{op} applied to the non-sequence {show(v)}")
    return v


def length(s):
    if s.__class__ is tuple or s.__class__ is str:
        return len(s)
    return len(seq(s, "Len"))


def append(s, x):
    return seq(s, "Append") + (x,)


def head(s):
    if not seq(s, "Head"):
        raise TLAError("Head of the empty sequence")
    return s[0]


def tail(s):
    if not seq(s, "Tail"):
        raise TLAError("Tail of the empty sequence")
    return s[1:]


def concat(a, b):
    if a.__class__ is str and b.__class__ is str:
        return a + b
    return seq(a, "\\o") + seq(b, "\\o")


def subseq(s, m, n):
    if s.__class__ is tuple and m.__class__ is int and n.__class__ is int:
        if m > n:
            return ()
        if 1 <= m and n <= len(s):
            return s[m - 1:n]
    seq(s, "SubSeq")
    ints(m, n)
    if m > n:
        return ()
    if m < 1 or n > len(s):
        raise TLAError(f"SubSeq indices {m}..{n} out of range for a sequence of length {len(s)}")
    return s[m - 1:n]


def selectseq(s, test):
    return tuple(x for x in seq(s, "SelectSeq") if test(x))


def seqset(s):
    return SeqSet(s)


# --- FiniteSets, TLC --------------------------------------------------------

def cardinality(s):
    return size(s)


def isfinite(s):
    return is_set(s) and getattr(s, "finite", True)


def colon_gt(a, b):
    return make_fn({a: b})


def double_at(f, g):
    """f @@ g: f's keys first and in their order, then g's others (the order ToJson
    shows: TLC's, for keys met in this order)."""
    d = {}
    for part in (f, g):
        if part.__class__ is tuple:
            items = enumerate(part, 1)
        elif part.__class__ is FnDict:
            items = part.items()
        else:
            raise TLAError(f"@@ applied to the non-function {show(part)}")
        for k, v in items:
            d.setdefault(k, v)
    return make_fn(d)


def permutations(s):
    items = sorted(enum(s), key=sort_key)
    return frozenset(make_fn(dict(zip(items, p, strict=False))) for p in _perms(items))


def tlc_print(out, val):
    print(show(out), show(val))
    return val


def tlc_printt(out):
    print(show(out))
    return True


def tlc_assert(cond, out):
    if cond is not True:
        raise TLAError(f"The first argument of Assert evaluated to FALSE; the second argument was: "
                       f"{show(out)}")
    return True


def to_string(v):
    return show(v)


def sortseq(s, less):
    from functools import cmp_to_key

    def order(a, b):
        return -1 if less(a, b) else (1 if less(b, a) else 0)
    return tuple(sorted(seq(s, "SortSeq"), key=cmp_to_key(order)))


def model_value(name):
    return ModelValue(name)


def recfn(dom, body):
    return RecFn(dom, body)


# --- Bags (functions from elements to positive counts) ----------------------

def bag_items(b):
    if b.__class__ is tuple:
        return dict(enumerate(b, 1))
    if b.__class__ is FnDict:
        return dict(b)
    raise TLAError(f"expected a bag, got {show(b)}")


def is_bag(b):
    try:
        return all(v.__class__ is int and v > 0 for v in bag_items(b).values())
    except TLAError:
        return False


def set_to_bag(s):
    return make_fn({e: 1 for e in enum(s)})


def bag_in(e, b):
    return e in bag_items(b)


def copies_in(e, b):
    return bag_items(b).get(e, 0)


def bag_add(a, b):
    out = bag_items(a)
    for e, n in bag_items(b).items():
        out[e] = out.get(e, 0) + n
    return make_fn(out)


def bag_sub(a, b):
    out = bag_items(a)
    for e, n in bag_items(b).items():
        if e in out:
            out[e] -= n
    return make_fn({e: n for e, n in out.items() if n > 0})


def bag_leq(a, b):
    bb = bag_items(b)
    return all(n <= bb.get(e, 0) for e, n in bag_items(a).items())


def bag_cardinality(b):
    return sum(bag_items(b).values())


def bag_union(s):
    out = ()
    for b in enum(s):
        out = bag_add(out, b)
    return out


def sub_bags(b):
    """SubBag(B): every bag that has at most B's copies of each element."""
    items = list(bag_items(b).items())
    choices = product(*(range(n + 1) for _, n in items))
    return frozenset(make_fn({e: k for (e, _), k in zip(items, counts) if k})
                     for counts in choices)


def bag_of_all(b, f):
    """BagOfAll(F, B): the bag of F(x), with the copies of every x of B that F maps there."""
    out = {}
    for e, n in bag_items(b).items():
        y = f(e)
        out[y] = out.get(y, 0) + n
    return make_fn(out)


# --- Randomization (and TLC's RandomElement): one generator with a fixed seed ------
# TLC draws fresh random numbers on each run; we draw from RANDOM_SEED so that every
# run explores the same model (the seed is printed in the checker's text output).

RANDOM_SEED = 0
_random = __import__("random").Random(RANDOM_SEED)


def random_element(s):
    items = sorted(enum(s), key=sort_key)
    if not items:
        raise TLAError("RandomElement of the empty set")
    return items[_random.randrange(len(items))]


def random_subset(k, s):
    items = sorted(enum(s), key=sort_key)
    check_int(k)
    if not 0 <= k <= len(items):
        raise TLAError(f"RandomSubset: {k} is not between 0 and the size of the set")
    return frozenset(_random.sample(items, k))


def random_set_of_subsets(k, n, s):
    """k draws of subsets of s in which each element is kept with probability n / |s|."""
    items = sorted(enum(s), key=sort_key)
    check_int(k)
    check_int(n)
    p = n / len(items) if items else 0
    return frozenset(frozenset(e for e in items if _random.random() < p) for _ in range(k))


def random_subset_set(k, prob, s):
    items = sorted(enum(s), key=sort_key)
    p = float(prob)
    return frozenset(frozenset(e for e in items if _random.random() < p) for _ in range(k))


# --- Json ----------------------------------------------------------------------------

def to_json_value(v):
    """A TLA+ value as a JSON-ready Python value: sequences become arrays, records and
    other functions objects (keys shown as strings), sets arrays in the value order."""
    if v.__class__ in (bool, int, str):
        return v
    if v.__class__ is tuple:
        return [to_json_value(e) for e in v]
    if v.__class__ is FnDict:  # keys in TLC's order: numbers sorted, strings as met
        items = v.items()
        if all(k.__class__ is int for k in v):
            items = sorted(items)
        return {k if k.__class__ is str else show(k): to_json_value(x) for k, x in items}
    if v.__class__ is ModelValue:
        return str(v)
    if is_set(v):
        return [to_json_value(e) for e in sorted(enum(v), key=sort_key)]
    return show(v)


def from_json_value(v):
    if isinstance(v, list):
        return tuple(from_json_value(e) for e in v)
    if isinstance(v, dict):
        return make_fn({k: from_json_value(x) for k, x in v.items()})
    if isinstance(v, float):
        raise TLAError("JSON numbers must be integers")
    return v


def to_json(v):
    import json
    return json.dumps(to_json_value(v), separators=(",", ":"))


def json_serialize(path, v):
    import json
    text = json.dumps(to_json_value(v))
    return write_file("JsonSerialize", path, text)


def ndjson_serialize(path, v):
    import json
    text = "".join(json.dumps(to_json_value(e)) + "\n" for e in seq(v, "ndJsonSerialize"))
    return write_file("ndJsonSerialize", path, text)


def write_file(who, path, text):
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise TLAError(f"{who}({path!r}): {exc.strerror}") from None
    return True


def json_deserialize(path):
    import json
    try:
        with open(path, encoding="utf-8") as fh:
            return from_json_value(json.load(fh))
    except (OSError, ValueError) as exc:
        raise TLAError(f"JsonDeserialize({path!r}): {exc}") from None


def ndjson_deserialize(path):
    import json
    try:
        with open(path, encoding="utf-8") as fh:
            return tuple(from_json_value(json.loads(line)) for line in fh if line.strip())
    except (OSError, ValueError) as exc:
        raise TLAError(f"ndJsonDeserialize({path!r}): {exc}") from None
