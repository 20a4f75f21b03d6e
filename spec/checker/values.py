"""TLA+ values as Python objects, with TLC's equality.

Integers, booleans and strings are Python ints, bools and strs. Sets are
frozensets, or lazy set objects (Nat, SUBSET S, [S -> T], Seq(S), ...) that
answer membership without enumerating. A function whose domain is 1..n is a
Python tuple (so a tuple IS a function and `<<>>` is the empty function); any
other function, records included, is an immutable FnDict. These normal forms
make Python's `==` and `hash` coincide with TLA+ equality, so whole states can
be hashed and stored directly. Model values are interned ModelValue objects.
"""
from itertools import product

from .errors import TLAError


class ModelValue(bytes):
    """A TLC model value: equal only to itself (interned by name). It is a bytes object,
    which no other value is, so that it hashes by its name in C: a set of model values is
    iterated in the same order on every run under one hash seed (the CLI pins it), where
    an identity hash follows memory addresses."""

    _interned = {}

    def __new__(cls, name):
        found = cls._interned.get(name)
        if found is None:
            found = bytes.__new__(cls, name.encode())
            found.name = name
            found.order = len(cls._interned)
            cls._interned[name] = found
        return found

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __reduce__(self):
        return (ModelValue, (self.name,))

    def _not_a_number(self, other):
        raise TypeError(f"the model value {self.name} is neither a number nor a sequence")

    # bytes' concatenation, repetition, formatting and ordering are not TLA+'s
    __add__ = __mul__ = __rmul__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = _not_a_number


class FnDict(dict):
    """A function whose domain is not 1..n (records are FnDicts on strings): a dict that
    is never changed once built. Equality is the dict's own, in C: a Python `__eq__`
    made each level of a nested function or record a call (PaxosCommit's seen set
    compared up to 3 levels of them per state found again). Its hash is remembered;
    build one with `fn_dict(d)`, which also clears that memory (a slot read before any
    write raises, which costs more than the hash)."""

    __slots__ = ("_h",)

    def __hash__(self):
        try:
            h = self._h
        except AttributeError:  # built as FnDict(d), not fn_dict(d)
            h = None
        if h is None:
            h = self._h = hash(frozenset(self.items()))
        return h

    @property
    def d(self):
        """The function's dict: the function itself (the older spelling, kept)."""
        return self

    def __reduce__(self):
        return (fn_dict, (dict(self),))

    def __repr__(self):
        return show(self)


def fn_dict(d):
    """The function (or record) of the dict d (a copy of it)."""
    f = FnDict(d)
    f._h = None
    return f


def record(**fields):
    """The record [field |-> value, ...]."""
    return fn_dict(fields)


def make_fn(d):
    """Normalise a dict into a function value (tuple when the domain is 1..n)."""
    n = len(d)
    if n == 0:
        return ()
    if all(k.__class__ is int for k in d) and min(d) == 1 and max(d) == n:
        return tuple(d[i] for i in range(1, n + 1))
    return fn_dict(d)


class LazySet:
    """Base of sets that test membership without enumerating."""

    finite = True

    def __eq__(self, other):
        if not self.finite and isinstance(other, LazySet) and not other.finite:
            return self is other or (other.__class__ is self.__class__
                                     and self.shape() == other.shape())
        return is_set(other) and enum(self) == enum(other)  # TLC's error if one is infinite

    def __hash__(self):
        return hash(enum(self)) if self.finite else hash(self.shape())

    def shape(self):
        """What an infinite set is built from: equal shapes, equal sets."""
        return id(self)

    def enumerate(self):
        raise TLAError(f"cannot enumerate the infinite set {self.describe()}")

    def describe(self):
        return type(self).__name__

    def size(self):
        return len(enum(self))


SET_MAX = 2**31 - 1  # TLC's bound on the size of a set it enumerates


def too_many(count, what):
    """Refuse to enumerate a set beyond TLC's bound (it would exhaust the memory first)."""
    if count > SET_MAX:
        raise TLAError(f"cannot enumerate {what}: more than {SET_MAX} elements")


SEEN_MAX = 20000


def remembered(contains):
    """contains(self, x) of a record or function set, remembered per object x: type
    invariants test the same objects state after state (a message carried along in a
    set, the record of a process no step changed). The memo is keyed by id(x) and holds
    x, so an id is never reused while its entry lives; it answers only for that very
    object, never for an equal one (TRUE and 1 are equal to Python). Errors are not
    remembered. Emptied beyond SEEN_MAX entries."""
    def has(self, x):
        seen = self._seen
        hit = seen.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        value = contains(self, x)
        if len(seen) >= SEEN_MAX:
            seen.clear()
        seen[id(x)] = (x, value)
        return value
    has.__doc__ = contains.__doc__
    return has


class InfiniteSet(LazySet):
    finite = False

    def __init__(self, name, test):
        self.name = name
        self.test = test

    def contains(self, x):
        return self.test(x)

    def describe(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, InfiniteSet) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


NAT = InfiniteSet("Nat", lambda x: x.__class__ is int and x >= 0)
INT = InfiniteSet("Int", lambda x: x.__class__ is int)
STRING = InfiniteSet("STRING", lambda x: x.__class__ is str)


class FilterSet(LazySet):
    """{x \\in S : P} (or S \\ T) over an infinite or a large S: x \\in S, then P(x), as TLC
    decides it; a finite one is enumerated only when its elements are needed."""

    def __init__(self, base, pred):
        self.base = base
        self.pred = pred
        self.finite = is_finite(base)

    def contains(self, x):
        return member(x, self.base) and self.pred(x) is True

    def enumerate(self):
        if not self.finite:
            return LazySet.enumerate(self)
        return frozenset(x for x in elements(self.base) if self.pred(x) is True)

    def describe(self):
        return "a subset of " + self.base.describe()

    def __eq__(self, other):
        return LazySet.__eq__(self, other) if self.finite else self is other

    def __hash__(self):
        return LazySet.__hash__(self) if self.finite else id(self)


class SeqSet(LazySet):
    """Seq(S): finite sequences over S (membership only)."""

    finite = False

    def __init__(self, base):
        self.base = base

    def contains(self, x):
        return x.__class__ is tuple and all_in(x, self.base)

    def describe(self):
        return "Seq(...)"

    def __eq__(self, other):
        return isinstance(other, SeqSet) and other.base == self.base

    def __hash__(self):
        return hash(("Seq", self.base))


class SubsetSet(LazySet):
    """SUBSET S."""

    def __init__(self, base):
        self.base = base
        self.finite = is_finite(base)

    def shape(self):
        return ("SUBSET", self.base)

    def contains(self, x):
        if not is_set(x):
            return False
        base = self.base
        if x.__class__ is frozenset and base.__class__ is frozenset and x <= base:
            return True  # else element by element, for TLC's errors
        return all_in(enum(x), base)

    def enumerate(self):
        items = list(enum(self.base))
        too_many(2 ** len(items), f"SUBSET of a set of {len(items)} elements")
        out = []
        for mask in range(1 << len(items)):
            out.append(frozenset(items[i] for i in range(len(items)) if mask >> i & 1))
        return frozenset(out)

    def size(self):
        return 1 << size(self.base)


class FnSet(LazySet):
    """[S -> T]."""

    def __init__(self, dom, cod):
        self.dom = dom
        self.cod = cod
        self._tuple_len = None
        self._seen = {}
        self.finite = is_finite(dom) and (is_finite(cod) or not enum(dom))

    def shape(self):
        return ("->", self.dom, self.cod)

    def tuple_len(self):
        """n when the domain is 1..n (so members are tuples), else -1."""
        if self._tuple_len is None:
            dom = enum(self.dom)
            n = len(dom)
            self._tuple_len = n if dom == frozenset(range(1, n + 1)) else -1
        return self._tuple_len

    @remembered
    def contains(self, f):
        if f.__class__ is RecFn:
            f = f.value()
        if f.__class__ is tuple:
            if len(f) != self.tuple_len():
                return False
            cod = self.cod
            if cod.__class__ is frozenset:
                for v in f:
                    if v not in cod:
                        return member(v, cod)
                return True
            return all_in(f, cod)
        dom = enum(self.dom)
        if f.__class__ is FnDict:
            if f.keys() != dom:
                return False
            cod = self.cod
            if cod.__class__ is frozenset:
                for v in f.values():
                    if v not in cod:
                        return member(v, cod)
                return True
            return all_in(f.values(), cod)
        return False

    def enumerate(self):
        return frozenset(self.iterate())

    def iterate(self):
        """The functions one by one, each once (see `elements`)."""
        keys = sorted(enum(self.dom), key=sort_key)
        if not keys:
            return iter([make_fn({})])
        vals = sorted(enum(self.cod), key=sort_key)
        too_many(len(vals) ** len(keys), f"[S -> T] with {len(keys)} elements in S and "
                                          f"{len(vals)} in T")
        combos = product(vals, repeat=len(keys))
        if all(k.__class__ is int for k in keys) and keys[0] == 1 and keys[-1] == len(keys):
            return combos  # the domain is 1..n: the functions are the tuples
        return (fn_dict(zip(keys, combo, strict=True)) for combo in combos)

    def size(self):
        return size(self.cod) ** size(self.dom)


class RecSet(LazySet):
    """[a : S, b : T]."""

    def __init__(self, fields):
        self.fields = fields  # dict name -> set
        self.finite = all(is_finite(v) for v in fields.values())
        self._seen = {}

    def shape(self):
        return ("[]", tuple(sorted(self.fields.items())))

    @remembered
    def contains(self, r):
        if r.__class__ is not FnDict or r.keys() != self.fields.keys():
            return False
        for k, s in self.fields.items():
            v = r[k]
            if not (v in s if s.__class__ is frozenset else member(v, s)):
                return member(v, s)
        return True

    def enumerate(self):
        return frozenset(self.iterate())

    def iterate(self):
        """The records one by one, each once (see `elements`)."""
        names = list(self.fields)
        pools = [sorted(enum(self.fields[k]), key=sort_key) for k in names]
        return (fn_dict(zip(names, combo, strict=False)) for combo in product(*pools))


class CrossSet(LazySet):
    """S1 \\X S2 \\X ... with an infinite factor (Nat \\X S): membership only."""

    finite = False

    def __init__(self, sets):
        self.sets = sets

    def shape(self):
        return ("cross", self.sets)

    def contains(self, t):
        return t.__class__ is tuple and len(t) == len(self.sets) and all(
            member(x, s) for x, s in zip(t, self.sets, strict=True))

    def describe(self):
        return " \\X ".join(s.describe() if isinstance(s, LazySet) else show(s)
                            for s in self.sets)


class UnionSet(LazySet):
    """UNION S where some member of S is infinite: membership only."""

    finite = False

    def __init__(self, sets):
        self.sets = sets

    def contains(self, x):
        return any(member(x, s) for s in self.sets)

    def shape(self):
        return ("UNION", frozenset(self.sets))

    def describe(self):
        return "UNION of infinite sets"


def is_finite(s):
    return not isinstance(s, LazySet) or s.finite


class RecFn:
    """A recursively defined function f[x \\in S] == ..., evaluated on demand."""

    __slots__ = ("dom", "body", "memo", "_v")

    def __init__(self, dom, body):
        self.dom = dom
        self.body = body
        self.memo = {}
        self._v = None

    def __call__(self, x):
        try:
            return self.memo[x]
        except KeyError:
            pass
        if not member(x, self.dom):
            raise TLAError(f"argument {show(x)} is outside the function's domain")
        v = self.memo[x] = self.body(self, x)
        return v

    def value(self):
        """The whole function, computed once (hashing it as a memo key is then cheap)."""
        v = self._v
        if v is None:
            v = self._v = make_fn({x: self(x) for x in enum(self.dom)})
        return v

    def __eq__(self, other):
        return self.value() == other

    def __hash__(self):
        return hash(self.value())


def is_set(v):
    return v.__class__ is frozenset or isinstance(v, LazySet)


def enum(s):
    """The elements of a set as a frozenset (error for non-sets/infinite sets)."""
    if s.__class__ is frozenset:
        return s
    if isinstance(s, LazySet):  # a lazy set is immutable: enumerated once, then remembered
        got = s.__dict__.get("_elements")
        if got is None:
            got = s._elements = s.enumerate()
        return got
    raise TLAError(f"expected a set, got {show(s)}")


def elements(s):
    """The elements of a set one by one, each once: a function or record set not yet
    enumerated is walked without being built and hashed whole (a filter of it keeps a
    few, `{c \\in [a : 0..1000, b : 0..1000] : P}`)."""
    if s.__class__ in (FnSet, RecSet) and "_elements" not in s.__dict__:
        return s.iterate()
    return enum(s)


def size(s):
    if s.__class__ is frozenset:
        return len(s)
    if isinstance(s, LazySet):
        return s.size()
    raise TLAError(f"Cardinality of a non-set {show(s)}")


KINDS = {int: "integer", bool: "boolean", str: "string", tuple: "function",
         FnDict: "function", RecFn: "function", frozenset: "set"}


def kind(v):
    k = KINDS.get(v.__class__)
    if k is None:
        if isinstance(v, LazySet):
            return "set"
        if v.__class__ is ModelValue:
            return None
        return "operator"
    return k


def comparable(a, b):
    if a.__class__ is b.__class__:
        return True
    ka, kb = kind(a), kind(b)
    return ka is None or kb is None or ka == kb


def check_comparable(a, b):
    if a.__class__ is not b.__class__ and not comparable(a, b):
        raise TLAError(f"Attempted to compare {kind(a)} {show(a)} with {kind(b)} {show(b)}")


def all_in(values, s):
    """all(member(v, s) for v in values) in a plain loop (a generator of calls costs more
    than the tests): a finite set's own membership, or a lazy set's test. FnSet.contains
    keeps its own loop for a finite codomain: the call here cost MCLamportMutex 2%."""
    if s.__class__ is frozenset:
        for v in values:
            if v not in s:
                return member(v, s)
        return True
    if not isinstance(s, LazySet):
        return all(member(v, s) for v in values)
    contains = s.contains
    for v in values:
        if not contains(v):
            return False
    return True


def member(x, s):
    """x \\in s with TLC's errors for incomparable elements."""
    if s.__class__ is frozenset:
        if x in s:
            return True
        for e in s:
            check_comparable(x, e)
            break
        return False
    if isinstance(s, LazySet):
        return s.contains(x)
    raise TLAError(f"\\in applied to the non-set {show(s)}")


_SORT_KEYS = {}


def sort_key(v):
    """A total order used for CHOOSE, printing and symmetry representatives."""
    c = v.__class__
    if c is bool:
        return (0, int(v))
    if c is int:
        return (1, v)
    if c is str:
        return (2, v)
    if c is ModelValue:
        return (3, v.order)
    if c is tuple or c is FnDict or c is frozenset:  # remember the keys of compound values
        key = _SORT_KEYS.get(v)
        if key is None:
            if len(_SORT_KEYS) > 200000:
                _SORT_KEYS.clear()
            if c is tuple:
                key = (4, len(v), tuple([sort_key(e) for e in v]))
            elif c is FnDict:
                items = sorted((sort_key(k), sort_key(x)) for k, x in v.items())
                key = (5, len(items), tuple(items))
            else:
                key = (6, len(v), tuple(sorted(sort_key(e) for e in v)))
            _SORT_KEYS[v] = key
        return key
    if isinstance(v, RecFn):
        return sort_key(v.value())
    if isinstance(v, LazySet):
        return sort_key(enum(v))
    return (9, repr(v))


def show(v):
    """Render a value the way TLC prints it."""
    c = v.__class__
    if c is bool:
        return "TRUE" if v else "FALSE"
    if c is int:
        return str(v)
    if c is str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if c is ModelValue:
        return v.name
    if c is tuple:
        return "<<" + ", ".join(show(e) for e in v) + ">>"
    if c is FnDict:
        keys = sorted(v, key=sort_key)
        if keys and all(k.__class__ is str for k in keys):
            return "[" + ", ".join(f"{k} |-> {show(v[k])}" for k in keys) + "]"
        return "(" + " @@ ".join(f"{show(k)} :> {show(v[k])}" for k in keys) + ")"
    if c is frozenset:
        return "{" + ", ".join(show(e) for e in sorted(v, key=sort_key)) + "}"
    if isinstance(v, RecFn):
        return show(v.value())
    if isinstance(v, InfiniteSet):
        return v.name
    if isinstance(v, LazySet):
        try:
            return show(enum(v))
        except TLAError:
            return v.describe()
    return repr(v)
