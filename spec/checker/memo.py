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
"""
import re

from .scope import DefB

PRIMED = re.compile(r"\bn_\d+\b")
FRESH = re.compile(r"\b([A-Za-z]\w*?)_(\d+)\b")
WORTH = re.compile(r"_rt\.|_ap\(|_isin\(|_eq\(| for |\brec_|lambda")


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
        if cx.mode == "const":
            return []
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
        if memo is None or cx.mode == "const" or not WORTH.search(code):
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
        m = memo.name
        return f"({m}[0] if {m} else _rt.once({m}, lambda: {code}))"

    def memo_locals(self, memos, cx):
        return cx.but(locals=cx.locals + tuple(m.name for m in memos)) if memos else cx

    @staticmethod
    def memo_wrap(memos, body):
        used = [m.name for m in memos if m.used]
        if not used:
            return body
        return f"(lambda {', '.join(used)}: {body})({', '.join('[]' for _ in used)})"
