"""LET definitions evaluated at most once per evaluation of their LET, as TLC does.

Operators are inlined (substitution semantics), so `LET a == e IN ... a ... a`
used to compute e at every mention of a. Now each zero-arity LET definition
gets a memo: a fresh Python list `x_<k>`, empty until the first mention
evaluates e and appends its value; later mentions read it. The list is made
where the LET is evaluated (`(lambda x_k: body)([])` for an expression, a
statement `x_k = []` in an action), so it never outlives the values of the
bound variables e may mention. A mention uses the memo only when it compiles
to the same code as the first one (the same primed variables assigned, no
prime added at the use), e is not trivially cheap, and, inside an action,
when e reads no primed variable (those change as the action's loops run).
Constant definitions keep being folded at compile time instead.

The same goes for every state-level subexpression of a compiled unit (an
invariant, the next-state relation, a property's action): one whose only free
names are the current state's variables (and, in a function of a step s -> t,
the next state's) is the same value wherever it occurs in one call. Each such
expression that occurs twice or more (up to renaming of the names it binds, so
two inlined copies of one definition count as the same) gets a memo made at
the top of the unit (`unit_memo`, `memo_body`); one that occurs once is left
as it was.

A subexpression whose only free names are locals bound to elements of constant sets
(`\\E b \\in Ballot, ac \\in MS` with MS an element of the constant Majority, say) is
the same value whenever those locals hold the same objects, in every state: it becomes a
function of them, remembered per site by their identities (`const_memo`, rt.by_identity).
Those objects are the constant sets' own elements, alive for the whole run, so a record
built and hashed once answers every membership test of it afterwards.

A subexpression that loops and reads nothing but some of the variables (or hoisted
parts of them) of one state (c_<i>, or n_<i> in a function of a step) is remembered
across calls the same way, by the identities of the variables' values (`var_memo`): the
explorer stores one object per distinct value of each variable (bfs.sharer), so every
state with the same `msgs` answers `{m \\in msgs : m.type = "2b"}` from one entry. The
copies over c_<i> and over n_<i> share one memo: what a step computed for its next
state is found again when that state is expanded. A memo that rarely hits (values that
seldom repeat) gives way to the plain function (rt.by_identity).

The value an action gives a variable, `x' = e`, is remembered the same way by the
identities of what e reads (state values, locals bound to the elements of a set, primed
variables assigned before; `next_memo`), also when e is a unit memo already, and the
value remembered is the object the explorer stores for that value of x when it has one
(its pool, bfs.sharer): a successor then holds the very objects a stored state holds, so
the seen set compares it by identity and its hash is known (MCKVSSafetySmall's snapshot
functions were built, hashed and compared anew in each of its 56 million successors).

A branch of the next-state action (a statement of its unit that emits successors) that
reads some of the variables but not all, such as `\\E t \\in tx : Add(t)` reading tx,
snapshotStore and written, gives the same successors' new values whenever those values
are the same objects: its successors are remembered as a list by their identities (and
those of the bound names it reads; `block_memos`), the variables it only copies taken from
the state at hand. Adjacent branches reading the same variables share one memo; a loop
reading them all is looked into. A branch with one guarded successor and no loop is left
alone (a look-up costs about what it saves), and a memo that serves fewer successors than
it has entries gives way to the branch as it was, kept beside it (`if Kon_<k>: ... else:`).
This remembering Next is built only once a search has expanded BRANCH_MEMOS_AFTER states
(bfs.py; the unit's `with_branch_memos`): a short run never pays for building it.

A conjunct of the invariants that reads one variable is remembered as TRUE per value
of that variable, in a dict from the value's id to the value, tested inline
(`conjunct_memo`): never emptied, since a variable has at most as many distinct values as
there are stored states, so a type invariant is decided once per distinct value.

Inside a recursive operator, a subexpression that loops and reads some of the
parameters but not all is remembered the same way, by the identities of their values
(`param_memo`): `Sum(f, S)` with f made anew in each state answers `S \\ {x}` from the
memo, so the next call's S is the memo's own object and is found again.
"""
import contextlib
import re
from collections import Counter
from itertools import groupby

from .codegen import LOCAL_NAME, local_scope
from .rt import by_identity, state_memo
from .scope import DefB

IMPURE_CALL = re.compile(r"_rt\.(tlc_print|random|fail|\w*json)|tlcget|_tlc_level")
PRIMED = re.compile(r"\bn_\d+\b")
FRESH = re.compile(r"\b([A-Za-z]\w*?)_(\d+)\b")
WORTH = re.compile(r"_rt\.|_ap\(|_isin\(|_eq\(| for |\brec_|lambda")
# the slow branch of an inlined lookup or comparison of plain names (codegen.apply_code,
# ex_Field, =, \in a constant set): code that is nothing more is not worth a memo
_ATOM = r"(?:\w+|'[^'\\]*'|-?\d+)"
CHEAP_FALLBACK = re.compile(rf"else _ap\(\w+, {_ATOM}\)|else _eq\({_ATOM}, {_ATOM}\)"
                            rf"|or _isin\({_ATOM}, \w+\)")


_WORTH = {}


def worth(code):
    """Is evaluating code more than a lookup or a comparison (so a memo pays)?
    Remembered per code while a unit is compiled (memo_body): ex() asks it of every
    foldable node's code up to three times (unit, constant and LET memos), and inlined
    copies of one definition repeat codes."""
    got = _WORTH.get(code)
    if got is None:
        got = WORTH.search(CHEAP_FALLBACK.sub("", code)) is not None
        if len(_WORTH) > 50000:  # asked outside any unit (constant and init code)
            _WORTH.clear()
        _WORTH[code] = got
    return got



LOOP_WORTH = re.compile(r"_rt\.| for |\brec_|lambda|\benabled_")  # more than a lookup
BUILT = re.compile(r"_rt\.(rec|mkset)\(|frozenset\(\(|_rt\.fn\(")  # a new value is built
BOUND_NAME = re.compile(r"b_\w+_\d+$")  # a name bound by \\E, \\A, CHOOSE, {x \\in S : P}...
MEMO_USE = re.compile(r"\(x_(\d+)\[0\] if x_\1 else \(x_\1\.append\(.*\) or x_\1\[0\]\)\)$", re.S)
STATE_NAME = re.compile(r"(c_\d+|p_\d+_\w+)$")
NEXT_NAME = re.compile(r"n_\d+$")
# worth a memo of state values: a loop (membership in a record or function set has its
# own memo per object: values.remembered)
VAR_WORTH = re.compile(r" for ")
VAR_INDEX = re.compile(r"[cnp]_(\d+)")  # the variable of a name STATE_NAME or NEXT_NAME takes
# a string literal of generated code (left alone), or a variable of either state, or a name
_LITERAL = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
LITERAL_OR_VAR = re.compile(_LITERAL + r"|\b[cn]_(\d+)\b")
LITERAL_OR_NAME = re.compile(_LITERAL + r"|\b([A-Za-z_]\w*)\b")


def parent_shortcut(code, n):
    """code, a conjunct of the invariants, tested on a successor s (variables c_<i>) of a
    state p (q_<i>) that satisfies all of them: TRUE at once when each variable code reads
    is p's very object (a step leaves most variables alone, and the explorer hands them on
    as they were). Only for code that reads nothing but the state, and a memo list only
    through its expression (memo_code); any other name (TLCGet's level) keeps it as it is.
    n: how many variables; `s` itself stands for all."""
    free, _ = local_scope(code)
    if IMPURE_CALL.search(code) or not all(
            name == "s" or STATE_NAME.match(name) or MEMO_NAME.fullmatch(name) for name in free):
        return code
    read = range(n) if "s" in free else sorted({int(VAR_INDEX.match(name).group(1))
                                                 for name in free if STATE_NAME.match(name)})
    if not read:
        return code
    same = " and ".join(f"c_{i} is q_{i}" for i in read)
    return f"({same} or {code})"


def as_vars(code):
    """code with each variable of either state, c_<i> or n_<i>, named v_<i>."""
    return LITERAL_OR_VAR.sub(lambda m: m.group(1) or f"v_{m.group(2)}", code)


class UnitMemos:
    """The state-level subexpressions met while one unit is compiled."""

    def __init__(self, next_fixed):
        self.next_fixed = next_fixed  # n_<i> never change during a call (a step s -> t)
        self.entries = {}             # shape -> [name, code, count, memo code]
        self.names = set()            # the entries' names: lists made at the unit's top
        self.named = {}               # name -> its entry (next_memo finds a use's entry)
        self.rewrites = {}            # memo code -> its new memo code (next_memo)


class Memo:
    __slots__ = ("name", "code", "used", "statement")

    def __init__(self, name, statement):
        self.name = name
        self.code = None
        self.used = False
        self.statement = statement  # the list is made by a statement (inside an action)


class LetMemo:
    """Mixin of Compiler."""

    def let_memos(self, node, env, cx, statement):
        """Attach a Memo to each zero-arity definition of the LET node (already in env)."""
        memos = []
        for d in node.definitions:
            b = env.get(getattr(d, "name", None))
            if isinstance(b, DefB) and b.node is d and not b.params and not d.function \
                    and not b.recursive:
                b.memo = Memo(self.fresh("x"), statement)
                memos.append(b.memo)
        return memos

    def memo_use(self, binding, code, cx, start):
        """The code of a mention of binding: through its memo when that is safe.
        Names made fresh while compiling this mention (counter above start) are
        renamed by order of appearance before two mentions' codes are compared."""
        memo = getattr(binding, "memo", None)
        if memo is None or not worth(code):
            return code
        if memo.statement and PRIMED.search(code):
            return code
        names = {}

        def rename(m):
            if int(m.group(2)) <= start:
                return m.group(0)
            return names.setdefault(m.group(0), f"{m.group(1)}_#{len(names)}")
        shape = FRESH.sub(rename, code)
        if memo.code is None:
            memo.code = shape
        elif memo.code != shape:
            return code
        memo.used = True
        return memo_code(memo.name, code)

    def memo_locals(self, memos, cx):
        return cx.but(locals=cx.locals + tuple(m.name for m in memos)) if memos else cx

    @staticmethod
    def memo_wrap(memos, body):
        used = [m.name for m in memos if m.used]
        if not used:
            return body
        return f"(lambda {', '.join(used)}: {body})({', '.join('[]' for _ in used)})"

    # --- state-level subexpressions of a unit -------------------------------------
    def unit_memo(self, code, cx):
        stack = getattr(self, "memo_units", None)
        if not stack or stack[-1] is None or cx.mode not in ("state", "action"):
            return code
        reg = stack[-1]
        if code.isidentifier() or not worth(code) or "_rt.random" in code:
            return code
        free, bound = local_scope(code)
        if not free or not all(STATE_NAME.match(n) or (reg.next_fixed and NEXT_NAME.match(n))
                               or n in reg.names for n in free):
            return code
        shape = unit_shape(code, bound)
        entry = reg.entries.get(shape)
        if entry is None:
            name = self.fresh("x")
            reg.names.add(name)
            entry = reg.entries[shape] = reg.named[name] = [
                name, code, 0, memo_code(name, code)]
        entry[2] += 2 if getattr(self, "frames", None) else 1  # kept if inside a binder
        return entry[3]

    def memo_body(self, compile_body, params):
        """compile_body() with the unit's repeated state-level subexpressions memoised."""
        if not hasattr(self, "memo_units"):
            self.memo_units = []
        reg = UnitMemos(next_fixed=params == "s, t")
        self.memo_units.append(reg)
        try:
            lines = compile_body()
        finally:
            self.memo_units.pop()
            if not self.memo_units:  # the outermost unit is done: its codes die with it
                _WORTH.clear()
                _SHAPES.clear()
        if not reg.entries:
            return lines
        text = "\n".join(lines)
        for old, new in reg.rewrites.items():  # next_memo's, inside other memos' codes too
            text = text.replace(old, new)
            for entry in reg.entries.values():
                entry[1], entry[3] = entry[1].replace(old, new), entry[3].replace(old, new)
        names = []
        for name, code, count, memo in reversed(list(reg.entries.values())):
            if count < 2:
                text = text.replace(memo, code)
            elif name in text:
                names.append(name)
        return place_inits(text.split("\n"), names)

    def no_unit_memos(self):
        """Push a barrier: code compiled now is not part of the enclosing unit's body."""
        if not hasattr(self, "memo_units"):
            self.memo_units = []
        self.memo_units.append(None)

    # --- subexpressions of one state's variables only ----------------------------------
    def var_memo(self, code, cx, always=False):
        """code through a memo keyed by the identities of the values of the variables (or
        hoisted parts of them) it reads, when it reads nothing else and loops (see the
        module's doc). The unit's memos of such expressions that code uses become lists
        of the memo's own function. Copies of one expression over the current and the
        next state (c_<i>, n_<i>) share one memo. Outside a step, an expression of every
        variable is left alone: each state is met once. always: whether it loops or
        not, and whatever it reads (a state met several times: Model.lift_fn)."""
        stack = getattr(self, "memo_units", None)
        if not stack or stack[-1] is None or cx.mode not in ("state", "action") \
                or not (always or VAR_WORTH.search(code)) or IMPURE_CALL.search(code):
            return code
        reg = stack[-1]
        free, bound = local_scope(code)
        lists = free & reg.names  # a memo's use holds its code: its reads are in free
        reads = free - lists
        step = reg.next_fixed
        if not reads or not (all(STATE_NAME.match(n) for n in reads) or (
                step and all(NEXT_NAME.match(n) for n in reads))) \
                or (not step and not always
                    and len({VAR_INDEX.match(n).group(1) for n in reads}) == len(self.var_names)):
            return code
        args = sorted(reads)
        shape = as_vars(unit_shape(code, bound))
        if lists:  # named in order of appearance, as the bound names are
            canon = {}
            shape = LITERAL_OR_NAME.sub(
                lambda m: m.group(1) or (canon.setdefault(m.group(2), f"x_#{len(canon)}")
                                         if m.group(2) in lists else m.group(2)), shape)
        fn = self.var_memos.get(shape)
        if fn is None:
            name = self.fresh("vmemo")
            src = f"def {name}({', '.join(map(as_vars, args))}):\n{made_lists(lists)}" \
                  f"    return {as_vars(code)}\n"
            fn = self.fresh("Kvm")
            self.ns[fn] = state_memo(self.build(src, name), len(args), self.ns, fn,
                                      room=self.memo_room)
            self.var_memos[shape] = fn
        return f"{fn}({', '.join(args)})"

    # --- conjuncts of the invariants ------------------------------------------------
    def conjunct_memo(self, code, cx):
        """A conjunct of the invariants that reads one variable (or hoisted parts of it),
        remembered as TRUE per value of it: a dict from the id of the value to the value
        (so the id is not reused while the entry lives), tested inline, filled by a
        function that evaluates the conjunct. Never emptied: a variable has at most as
        many distinct values as the states that are stored, and the explorer stores one
        object per distinct value (bfs.sharer), so `msgs \\in SUBSET Message` is decided
        once per distinct value of msgs. Any other conjunct goes to var_memo."""
        stack = getattr(self, "memo_units", None)
        free, bound = local_scope(code)
        lists = free & stack[-1].names if stack and stack[-1] is not None else set()
        reads = free - lists  # the lists of unit memos code uses are made in its function
        variables = {VAR_INDEX.match(n).group(1) for n in reads if STATE_NAME.match(n)}
        if len(variables) != 1 or not all(STATE_NAME.match(n) for n in reads) \
                or IMPURE_CALL.search(code) or not (worth(code) or ".contains(" in code):
            return self.var_memo(code, cx)
        var = f"c_{variables.pop()}"
        args = sorted(reads | {var})
        shape = as_vars(code)
        found = self.conjunct_memos.get(shape)
        if found is None:
            name, ok = self.fresh("okmemo"), self.fresh("Kok")
            self.ns[ok] = {}
            src = f"def {name}({', '.join(map(as_vars, args))}):\n{made_lists(lists)}" \
                  f"    r = {as_vars(code)}\n" \
                  f"    if r is True:\n        {ok}[id({as_vars(var)})] = {as_vars(var)}\n" \
                  f"    return r\n"
            self.build(src, name)
            found = self.conjunct_memos[shape] = (name, ok)
        name, ok = found
        return f"({ok}.get(id({var})) is {var} or {name}({', '.join(args)}))"

    # --- subexpressions of constant-bound locals only ---------------------------------
    def note_const_bound(self, py, set_code):
        """py is bound to the elements of set_code: constant-bound when that set is a
        constant frozenset or itself a constant-bound local (whose elements are then
        parts of a constant value). Other constant sets (intervals, lazy sets) may make
        new objects for their elements at each enumeration: not counted."""
        if isinstance(self.ns.get(set_code), frozenset) or set_code in self.const_bound:
            self.const_bound.add(py)

    def const_memo(self, code, cx):
        """code through a memo keyed by the identities of the values of its free names,
        when those are all constant-bound locals (see the module's doc)."""
        if cx.mode not in ("state", "action", "init") or not self.const_bound \
                or code.isidentifier() or not worth(code):
            return code
        free, _ = local_scope(code)  # remembered: cheaper than the search below
        if not free or not free <= self.const_bound or IMPURE_CALL.search(code):
            return code
        return self.identity_memo(code, free, "cm")

    def bound_memo(self, code, cx):
        """A record, set or function built from bound names only (`[type |-> "2b", acc |-> a,
        bal |-> m.bal]` with m drawn from msgs), remembered by the identities of their
        values: the same message drawn in state after state gives the very same object,
        whose hash is known and which the sets holding it compare by identity. Given up
        for the plain code when it rarely hits (rt.by_identity)."""
        if cx.mode not in ("state", "action", "init") or code.isidentifier() \
                or not BUILT.search(code) or IMPURE_CALL.search(code):
            return code
        free, _ = local_scope(code)
        if not free or not all(BOUND_NAME.match(n) for n in free) or free <= self.const_bound:
            return code
        return self.identity_memo(code, free, "bv", give_way=True)

    def identity_memo(self, code, free, tag, give_way=False, canon=None, lists=()):
        """A call of code as a function of its free names, remembered by their values'
        identities (rt.by_identity); with give_way, rt.state_memo's (dropped for the plain
        function when it rarely hits); canon(value, value): the value remembered instead
        of value. `lists`: memo lists code uses, made anew."""
        args = ", ".join(sorted(free))
        name = self.fresh(f"{tag}memo")
        fn = self.build(f"def {name}({args}):\n{made_lists(lists)}    return {code}\n", name)
        key = self.fresh(f"K{tag}")
        self.ns[key] = state_memo(fn, len(free), self.ns, key, canon, self.memo_room) \
            if give_way else by_identity(fn, len(free))
        return f"{key}({args})"

    # --- the values an action gives the next state -------------------------------------
    def next_memo(self, code, cx, target):
        """x' = e: e through a memo keyed by the identities of the values of the names it
        reads, its value the stored object of x when one is equal (see the module's doc).
        An e the unit remembers already (unit_memo) is remembered so in every use."""
        stack = getattr(self, "memo_units", None)
        if not stack or stack[-1] is None or cx.mode != "action" or code.isidentifier():
            return code
        reg = stack[-1]
        entry = None
        use = MEMO_USE.match(code)
        if use:
            entry = reg.named.get(f"x_{use.group(1)}")
            if entry is None or entry[3] != code:
                return code
            inner = entry[1]
        else:
            inner = code
        if not worth(inner) or IMPURE_CALL.search(inner):
            return code
        free, _ = local_scope(inner)
        # the memo lists inner uses (the unit's, a LET's, a binder's): made in the memo's
        # function, where each first use computes its value again (memo_code)
        lists = {n for n in free if MEMO_NAME.fullmatch(n)}
        free -= lists
        if not free or not all(STATE_NAME.match(n) or NEXT_NAME.match(n)
                               or n in self.value_bound for n in free):
            return code
        canon = None  # the values of an instance's variables are not stored as such
        if self.var_names is self.own_var_names:
            canon = self.value_pools.setdefault(self.var_names[target], {}).get
        remembered = self.identity_memo(inner, free, "nm", give_way=True, canon=canon,
                                        lists=lists)
        if entry is None:
            return remembered
        entry[1], entry[3] = remembered, memo_code(entry[0], remembered)
        reg.rewrites[code] = entry[3]
        return entry[3]

    # --- subexpressions of some parameters of a recursive operator ------------------
    def param_memo(self, code):
        """code through a memo keyed by the identities of the values of the parameters it
        reads, inside the body of a recursive operator, when it reads some of them but not
        all (all of them: the operator's own memo, memo_wrapper) and no other local name,
        and loops or calls the runtime. `Sum(f, S)` over a set S built once per caller (a
        constant set, or one remembered by const_memo) and a function f made anew in each
        state answers `CHOOSE x \\in S : TRUE` and `S \\ {x}` from the memo: the sets of
        the recursion are the memo's own objects, so they are the same ones at the next
        call. A memo that rarely hits gives way to the plain function (rt.by_identity)."""
        params = self.rec_params[-1] if self.rec_params else None
        if not params or code.isidentifier() or not LOOP_WORTH.search(code) \
                or IMPURE_CALL.search(code):
            return code
        free, _ = local_scope(code)
        if not free < params or not free:
            return code
        return self.identity_memo(code, free, "pm", give_way=True)

    # --- loop-invariant subexpressions of a binder ---------------------------------
    @contextlib.contextmanager
    def binder(self, cx):
        """Compile the body of a binder (\\A, \\E, CHOOSE, {x \\in S : P}, ...) in a frame
        that collects its loop-invariant subexpressions (see framed)."""
        frame = Frame(frozenset(cx.locals))
        self.frames.append(frame)
        try:
            yield frame
        finally:
            self.frames.pop()

    @staticmethod
    def framed(frame, code):
        """The binder's code, with a memo list made around it for each subexpression of
        its body hoisted there (dropped again if the code binds a name it reads)."""
        if not frame.memos:
            return code
        inside = local_scope(code)[1]
        names = []
        for sub, name in frame.memos.items():
            if local_scope(sub)[0] & inside:
                code = code.replace(memo_code(name, sub), sub)
            elif name in code:
                names.append(name)
        if not names:
            return code
        return f"(lambda {', '.join(names)}: {code})({', '.join('[]' for _ in names)})"

    def loop_memo(self, code, cx):
        """A subexpression met in a binder's body that does not read the names the binder
        (or one inside it) binds: evaluated at most once per evaluation of the outermost
        binder it does not depend on, on its first use there, so it raises exactly where
        and when it did before."""
        frames = self.frames
        if not frames or code.isidentifier() or not LOOP_WORTH.search(code) \
                or "_rt.random" in code or "tlc_print" in code or MEMO_USE.match(code):
            return code
        mine = local_scope(code)[0].intersection(cx.locals)
        for frame in frames:
            if mine <= frame.outer:
                break
        else:
            return code
        name = frame.memos.get(code)
        if name is None:
            name = frame.memos[code] = self.fresh("x")
        return memo_code(name, code)

    @contextlib.contextmanager
    def frame_barrier(self):
        """Code compiled meanwhile goes into another Python function: no enclosing binder."""
        saved, self.frames = self.frames, []
        try:
            yield
        finally:
            self.frames = saved


class Frame:
    __slots__ = ("outer", "memos")

    def __init__(self, outer):
        self.outer = outer  # the locals live where the binder's expression is evaluated
        self.memos = {}     # hoisted subexpression code -> name of its memo list


_SHAPES = {}


def unit_shape(code, bound):
    """code with the names it binds renamed _#0, _#1, ... in order of first mention, so
    two inlined copies of one definition have one shape; remembered per code while a
    unit is compiled (the renaming calls back into Python at every local name of code)."""
    if not bound:
        return code
    shape = _SHAPES.get(code)
    if shape is None:
        canon = {}
        shape = LOCAL_NAME.sub(lambda m: canon.setdefault(m.group(0), f"_#{len(canon)}")
                               if m.group(0) in bound else m.group(0), code)
        _SHAPES[code] = shape
    return shape


def made_lists(lists):
    """The lines of a generated function that make the memo lists its code uses."""
    return "".join(f"    {x} = []\n" for x in sorted(lists))


MADE_LIST = re.compile(r"\s*(x_\d+) = \[\]$")
LOOP_HEADER = re.compile(r"(for|while|def|async|class)\b")


def inline_single_memos(src):
    """src with each memo read at one place only, on a line outside any loop (and with no
    lambda or comprehension in that line), replaced by its expression: evaluated at most
    once there anyway, it needs no list (the unrolled `\\A p, q \\in Proc :
    Len(network[p][q]) <= 3` made 19 of them per call). Its `x = []` becomes `pass` (a
    block may hold nothing else), as does that of a list no line reads: a LET's whose
    every use went into a next-state memo's function (next_memo), made there."""
    counts = Counter(MEMO_NAME.findall(src))
    once = 1 + memo_code("x_0", "").count("x_0")  # made, then read at one place
    single = [x for x, n in counts.items() if n in (1, once)]
    if not single:
        return src
    lines = src.split("\n")
    made_at = {m.group(1): i for i, m in enumerate(map(MADE_LIST.match, lines)) if m}
    for x in single:
        if counts[x] == 1:
            if x in made_at:
                lines[made_at[x]] = lines[made_at[x]].replace(f"{x} = []", "pass")
            continue
        start = made_at.get(x)
        head, tail = memo_code(x, "\0").split("\0")  # around the expression
        use = next((i for i in range(start + 1, len(lines)) if head in lines[i]), None) \
            if start is not None else None
        if use is None or "lambda" in lines[use] or " for " in lines[use] \
                or in_loop(lines, start, use):
            continue
        line = lines[use]
        begin = line.index(head) + len(head)
        end = closing(line, begin - 1)
        if end is None or not line.startswith(tail, end):
            continue
        lines[use] = f"{line[:begin - len(head)]}({line[begin:end]}){line[end + len(tail):]}"
        lines[start] = lines[start].replace(f"{x} = []", "pass")
    return "\n".join(lines)


def in_loop(lines, start, use):
    """Is line `use` inside a loop (or a function) that line `start` is not inside?"""
    depth, floor = indent_of(lines[use]), indent_of(lines[start])
    for line in reversed(lines[start + 1:use]):
        indent = indent_of(line)
        if floor < indent < depth:  # a header enclosing `use`
            depth = indent
            if LOOP_HEADER.match(line.lstrip(" ")):
                return True
    return False


def closing(text, at):
    """The index of the bracket closing the one at text[at] (strings skipped), or None."""
    depth, i, quote = 0, at, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def memo_code(name, code):
    """A mention of a memoised expression: its list's value, or the first evaluation
    (appended, then read back: no function call of its own)."""
    return f"({name}[0] if {name} else ({name}.append({code}) or {name}[0]))"


MEMO_NAME = re.compile(r"\bx_\d+\b")
BRANCH = re.compile(r"(if|elif|else)\b")
CONTINUED = re.compile(r"(elif|else|except|finally)\b")


def place_inits(lines, names):
    """lines (a unit's body, one statement per line) with `x = []` made for each memo
    name x just before the statement, in the innermost block holding all of its uses,
    that first uses it: an action's branches that never run make no lists (MCNano's
    Next made 585 of them per state, a quarter of its time). A block inside a loop is
    not entered (a list made there would be made again each time round), nor is a
    statement that itself reads the memo (an `if` whose test reads it)."""
    if not names:
        return lines
    wanted = set(names)
    paths, stack = [], []  # stack: (indent, index) of the headers enclosing a line
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        paths.append([h for _, h in stack] + [i])
        if line.rstrip().endswith(":"):
            stack.append((indent, i))
    uses = {}
    for i, line in enumerate(lines):
        for name in set(MEMO_NAME.findall(line)) & wanted:
            uses.setdefault(name, []).append(i)
    before = {}
    for name in names:
        found = uses.get(name)
        if not found:
            continue
        common = paths[found[0]]
        for i in found[1:]:
            common = [a for a, b in zip(common, paths[i]) if a == b]
        depth = 0  # the headers whose body may hold the list
        while depth < len(common) and common[depth] not in found \
                and BRANCH.match(lines[common[depth]].lstrip()):
            depth += 1
        anchor = paths[found[0]][depth]
        indent = len(lines[anchor]) - len(lines[anchor].lstrip(" "))
        while CONTINUED.match(lines[anchor].lstrip()):  # the start of its if-chain
            anchor -= 1
            while len(lines[anchor]) - len(lines[anchor].lstrip(" ")) != indent:
                anchor -= 1
        before.setdefault(anchor, []).append(" " * indent + f"{name} = []")
    out = []
    for i, line in enumerate(lines):
        out.extend(before.get(i, ()))
        out.append(line)
    return out


# --- whole branches of the next-state action -----------------------------------------
# IMPURE_CALL but for `fail`: an error is raised again on each call, never remembered
BLOCK_IMPURE = re.compile(r"_rt[._](tlc_print|random|\w*json|tlcget)|_tlc_level")
# a next-state variable a statement assigns: `n_1 = ...` or `for n_1 in ...`
ASSIGNED = re.compile(r"^\s*(?:for )?(n_\d+)(?: = | in )")
BLOCK_FREE = re.compile(r"[cpbnx]_\w+")
BLOCK_MEMO_MAX = 1 << 16
# a branch's memo is dropped when it serves fewer successors than it has entries (a
# hit saves the branch's guards and the next-state memos of each successor; a miss costs
# the branch and a look-up), asked at 4096 entries and at each doubling
BLOCK_SAVED, BLOCK_CHECK = 1, 4096


def statements(lines):
    """lines (one statement or header per line, none indented less than the first) split
    into the statements at the first line's indentation, each with its nested lines and
    its elif/else/except/finally parts."""
    out = []
    top = indent_of(lines[0]) if lines else 0
    for line in lines:
        if indent_of(line) == top and not (out and CONTINUED.match(line.lstrip())):
            out.append([line])
        else:
            out[-1].append(line)
    return out


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def body_lines(body, emits, outputs):
    """body (statements at indentation 0) as a function's body that appends the tuple of
    outputs where an emit was."""
    return ["    " + (" " * indent_of(line) + f"_out.append(({outputs}))" if emit else line)
            for line, emit in zip(body, emits)]


def compiled_function(body, emits, outputs):
    """The code object of body_lines as a function, or None if it is not Python."""
    src = "def _probe():\n    _out = []\n" + "\n".join(body_lines(body, emits, outputs))
    try:
        return compile(src.replace("_rt.", "_rt_"), "<probe>", "exec").co_consts[0]
    except SyntaxError:
        return None


def global_names(code):
    """The names a code object, or a function inside it, reads as globals or attributes
    (a name bound in one comprehension is still free where the block reads it outside)."""
    names, todo = set(), [code]
    while todo:
        co = todo.pop()
        names.update(co.co_names)
        todo.extend(c for c in co.co_consts if hasattr(c, "co_code"))
    return names


class BlockPlan:
    """What a remembered run of statements reads (args, sorted), what it gives the next
    state (outputs, `n_i, ` each), what it leaves as it was (kept: the n_i it only ever
    copies from c_i), its body as a function's (inner, lists, heads), and the emit of
    each of its successors (emit)."""
    __slots__ = ("pad", "args", "outputs", "kept", "inner", "lists", "heads", "emit")

    def sig(self):
        return self.args, self.outputs, self.kept


class BlockMemo:
    """Mixin of Compiler."""

    def block_memos(self, lines, found, emit_line):
        """The body of a next-state unit where each run of statements that emit
        successors and read the same part of the variables (the branches of Next such
        as `\\E t \\in tx : Add(t)`) is replaced by a loop over its successors' new values,
        remembered by the identities of what it reads (rt.by_identity). A loop that reads
        every variable (`\\E p \\in Proc : A(p) \\/ B(p)`) is looked into. emit_line: the
        unit's `emit(...)` of its full tuple; found: its hoisted parts of variables."""
        planned = [(stmt, self.block_plan(stmt, found, emit_line)
                    if any("emit(" in line for line in stmt) else None)
                   for stmt in statements(lines)]
        out = []
        for _, run in groupby(planned, key=lambda sp: sp[1].sig() if sp[1] else id(sp)):
            run = list(run)
            stmt, plan = run[0]
            if plan is not None:
                joined = [line for each, _ in run for line in each]
                if len(run) > 1:
                    plan = self.block_plan(joined, found, emit_line)
                out.extend(joined if plan is None else self.block_build(plan, joined))
            elif stmt[0].lstrip().startswith("for ") and len(stmt) > 1 \
                    and not any(indent_of(line) == indent_of(stmt[0]) for line in stmt[1:]):
                out.append(stmt[0])
                out.extend(self.block_memos(stmt[1:], found, emit_line))
            else:
                out.extend(stmt)
        return out

    def block_plan(self, stmts, found, emit_line):
        """The BlockPlan of statements stmts (see block_memos), or None where no memo is
        safe or worth it: an emit of another form, a return, something impure, a name
        read that is neither a state's nor a bound one, every variable read, or a single
        successor with no loop."""
        pad = " " * indent_of(stmts[0])
        body = [line[len(pad):] for line in stmts]
        if BLOCK_IMPURE.search("\n".join(body)) or any(
                ("emit" in line and line.strip() != emit_line)
                or line.lstrip().startswith(("return", "yield")) for line in body):
            return None
        emits = [line.strip() == emit_line for line in body]
        if sum(emits) < 2 and not any(line.lstrip().startswith("for ") for line in body):
            return None  # one guarded successor: a look-up costs about what it saves
        assigned = {n for line in body for n in ASSIGNED.findall(line)}
        # n_i that the statements only ever copy from c_i: emitted as c_i itself
        kept = frozenset(n for n in assigned if all(
            emit or line.strip() == f"{n} = c_{n[2:]}" or not re.search(rf"\b{n}\b", line)
            for line, emit in zip(body, emits)))
        outputs = "".join(f"{n}, " for n in sorted(assigned - kept, key=lambda n: int(n[2:])))
        copies = {f"{n} = c_{n[2:]}" for n in kept}
        inner = [" " * indent_of(line) + "pass" if line.strip() in copies else line
                 for line in body]
        code = compiled_function(inner, emits, outputs)
        if code is None:
            return None
        inner = "\n".join(body_lines(inner, emits, outputs))
        if {n for n in code.co_varnames if NEXT_NAME.match(n)} != assigned - kept:
            return None  # assigned otherwise than ASSIGNED finds
        free = {n for n in global_names(code) if LOCAL_NAME.fullmatch(n) and n not in self.ns}
        if not all(BLOCK_FREE.fullmatch(n) for n in free):
            return None
        lists = {n for n in free if MEMO_NAME.fullmatch(n)}  # made again inside
        parts = {n for n in free if n.startswith("p_")}        # taken again from c_i
        slots = {name: slot for slot, name in (found or {}).items()}
        if not parts <= set(slots):
            return None
        args = tuple(sorted((free - lists - parts) | {f"c_{slots[p][0]}" for p in parts}))
        if not args or len({a for a in args if a.startswith("c_")}) == len(self.var_names):
            return None
        plan = BlockPlan()
        plan.pad, plan.args, plan.outputs, plan.kept = pad, args, outputs, kept
        plan.inner, plan.lists, plan.heads = inner, lists, []
        plan.emit = emit_line
        for n in kept:
            plan.emit = re.sub(rf"\b{n}\b", f"c_{n[2:]}", plan.emit)
        for p in sorted(parts):
            i, k = slots[p]
            plan.heads.append(f"    {p} = c_{i}[{k - 1}] if c_{i}.__class__ is tuple "
                              f"else c_{i}[{k!r}]\n" if k.__class__ is int and k > 0
                              else f"    {p} = c_{i}[{k!r}]\n")
        return plan

    def block_build(self, plan, lines):
        """The lines that replace a planned run of statements (lines): a loop over the
        values its function gives the next state, remembered by the identities of its
        arguments, while the memo hits often enough; the statements as they were after."""
        name = self.fresh("bmemo")
        self.build(f"def {name}({', '.join(plan.args)}):\n" + "".join(plan.heads)
                   + made_lists(plan.lists) + f"    _out = []\n{plan.inner}\n"
                   "    return _out\n", name)
        key, on = self.fresh("Kbm"), self.fresh("Kon")
        self.ns[on] = True
        self.ns[key] = by_identity(self.ns[name], len(plan.args), BLOCK_MEMO_MAX, self.ns, on,
                                   hits_per_entry=BLOCK_SAVED, first_check=BLOCK_CHECK,
                                   gone=False, weight=len)
        pad = plan.pad
        return [f"{pad}if {on}:",
                f"{pad}    for ({plan.outputs}) in {key}({', '.join(plan.args)}):",
                f"{pad}        {plan.emit}",
                f"{pad}else:"] + ["    " + line for line in lines]
