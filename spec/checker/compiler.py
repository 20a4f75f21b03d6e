"""Compile TLA+ expressions and actions into Python source, then into functions.

Expressions become Python expressions over locals: `c_<i>` is variable i in
the current state, `n_<i>` its primed value, bound variables are fresh
`b_<name>_<k>` locals. Non-recursive operators are inlined with their
arguments passed by name (TLA+'s substitution semantics); RECURSIVE operators
become module-level functions. Actions are compiled in continuation-passing
style into nested `for`/`if` statements: `x' = e` assigns n_x the first time
and compares afterwards, `x' \\in S` loops, `\\E` loops, `\\/` emits each
branch, and the innermost continuation hands the finished successor tuple to
`emit`. Which primed variables are assigned is known statically at each
point, so no runtime bookkeeping is needed. Zero-arity definitions that do
not depend on the state are evaluated once and injected as constants.
"""
import ast
import contextlib
import re

from . import rt
from .errors import TLAError
from .frontend import canonical_op, pos
from .scope import ArgB, BuiltinB, ConstB, DefB, InstB, LambdaB, LazyRefB, LocalB, OpRefB, VarB
from .values import INT, NAT, STRING, FnDict, FnSet, LazySet, ModelValue

BOOLEAN_SET = frozenset([False, True])


FOLDABLE = {"OperatorApplication", "SetEnumeration", "SetOfFunctions", "SetOfRecords",
            "Function", "SetComprehension", "SetSlice", "Record", "Except", "If",
            "Cases", "FunctionApplication", "Field", "Quantification", "Choose"}
LOCAL_NAME = re.compile(r"\b(s|c_\d+|n_\d+|b_\w+|at_\d+|tup_\d+|self_\w+|key_\d+|p_\w+|x_\d+"
                        r"|chg_\d+|_rt_tlcget|_tlc_level|tlc_print\w*|enabled_\d+|rec_\w+)\b")


SIMPLE_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$|-?\d+$|'[^'\\\\]*'$|\(\)$")


UNROLL_BUDGET = 128  # at most this many copies of a body through nested unrolled quantifiers
NOV = object()  # "no value": a hoisted application that must be redone by _ap


class NeedsState(Exception):
    """Raised while compiling in constant mode when the state is referenced."""


class Cx:
    """Compilation context: mode, statically assigned primed vars, live locals."""

    __slots__ = ("mode", "assigned", "locals", "label", "open", "primed")

    def __init__(self, mode, assigned=frozenset(), locals_=(), label=None, open_=True,
                 primed=False):
        self.mode = mode          # "state" | "action" | "init" | "const"
        self.assigned = assigned
        self.locals = locals_
        self.label = label
        self.open = open_
        self.primed = primed

    def but(self, **kw):
        new = Cx(self.mode, self.assigned, self.locals, self.label, self.open, self.primed)
        for k, v in kw.items():
            setattr(new, k, v)
        return new


VAR_CODE = re.compile(r"c_\d+$")


def at_put_code(f, key, value):
    """[f EXCEPT ![key] = value] with the tuple case inlined for a name and a literal key."""
    if f.isidentifier() and key.isdigit() and int(key) > 0:
        k = int(key)
        return f"({f}[:{k - 1}] + ({value},) + {f}[{k}:] if {f}.__class__ is tuple and " \
               f"len({f}) >= {k} else _rt.at_put({f}, {key}, {value}))"
    return f"_rt.at_put({f}, {key}, {value})"


def guarded_block(cond, lines):
    """`if cond:` around lines; when lines are one bare `if c2:` block, merge the tests
    (long conjunction lists would otherwise nest past Python's indentation limit)."""
    if lines and lines[0].startswith("if ") and lines[0].endswith(":") and \
            all(line.startswith("    ") for line in lines[1:]):
        return [f"if ({cond}) and ({lines[0][3:-1]}):"] + lines[1:]
    return [f"if {cond}:"] + indent(lines or ["pass"])


def class_code(code, ns=None):
    if code == "()":
        return "tuple"
    if code.isidentifier():
        value = ns.get(code) if ns is not None and code.startswith("K") else None
        if value.__class__ in (int, str, bool, tuple, frozenset):
            return value.__class__.__name__
        return f"{code}.__class__"
    return "str" if code.startswith("'") else "int"


INLINE_SEQ = {
    "Len": "(len({0}) if {0}.__class__ is tuple else _rt.length({0}))",
    "Head": "({0}[0] if {0}.__class__ is tuple and {0} else _rt.head({0}))",
    "Tail": "({0}[1:] if {0}.__class__ is tuple and {0} else _rt.tail({0}))",
    "Append": "({0} + ({1},) if {0}.__class__ is tuple else _rt.append({0}, {1}))",
}


def apply_code(f, key):
    """f[key], with the common tuple case inlined when both are plain names."""
    if f.isidentifier() and key.isdigit() and int(key) > 0:
        return f"({f}[{int(key) - 1}] if {f}.__class__ is tuple and len({f}) >= {key} " \
               f"else _ap({f}, {key}))"
    if f.isidentifier() and SIMPLE_CODE.match(key) and not key.startswith("'"):
        return f"({f}[{key} - 1] if {f}.__class__ is tuple and 0 < {key} <= len({f}) " \
               f"else _ap({f}, {key}))"
    return f"_ap({f}, {key})"


def name_of(node):
    return type(node).__name__


def indent(lines):
    return ["    " + line for line in lines]


SIMPLE_BINARY = {
    "+": "({} + {})", "-": "({} - {})", "*": "({} * {})", "<": "({} < {})", ">": "({} > {})",
    "<=": "({} <= {})", ">=": "({} >= {})", "\\div": "_rt.idiv({}, {})", "%": "_rt.imod({}, {})",
    "^": "_rt.ipow({}, {})", "..": "_rt.interval({}, {})", "=": "_eq({}, {})",
    "#": "(not _eq({}, {}))", "\\in": "_isin({}, {})", "\\notin": "(not _isin({}, {}))",
    "\\cup": "_rt.union({}, {})", "\\cap": "_rt.inter({}, {})", "\\": "_rt.diff({}, {})",
    "\\subseteq": "_rt.subseteq({}, {})", "/\\": "({} and {})", "\\/": "({} or {})",
    "=>": "((not {}) or {})", "<=>": "({} == {})", "\\o": "_rt.concat({}, {})",
    ":>": "_rt.colon_gt({}, {})", "@@": "_rt.double_at({}, {})",
    "\\subset": "(lambda _a, _b: _rt.subseteq(_a, _b) and _a != _b)({}, {})",
    "\\supseteq": "_rt.subseteq({1}, {0})",
    "\\supset": "(lambda _a, _b: _rt.subseteq(_b, _a) and _a != _b)({}, {})",
    "(+)": "_rt.bag_add({}, {})", "(-)": "_rt.bag_sub({}, {})",
    "\\sqsubseteq": "_rt.bag_leq({}, {})",
}
SIMPLE_PREFIX = {"~": "(not {})", "-": "(-{})", "-.": "(-{})", "SUBSET": "_rt.subset({})",
                 "UNION": "_rt.setunion({})", "DOMAIN": "_rt.domain({})"}
BUILTIN_FUNCS = {
    "Len": ("_rt.length", 1), "Append": ("_rt.append", 2), "Head": ("_rt.head", 1),
    "Tail": ("_rt.tail", 1), "SubSeq": ("_rt.subseq", 3), "Seq": ("_rt.seqset", 1),
    "Cardinality": ("_rt.cardinality", 1), "IsFiniteSet": ("_rt.isfinite", 1),
    "Print": ("_rt.tlc_print", 2), "PrintT": ("_rt.tlc_printt", 1),
    "Assert": ("_rt.tlc_assert", 2), "Permutations": ("_rt.permutations", 1),
    "ToString": ("_rt.to_string", 1), "TLCEval": ("", 1),
    "IsABag": ("_rt.is_bag", 1), "BagToSet": ("_rt.domain", 1), "SetToBag": ("_rt.set_to_bag", 1),
    "BagIn": ("_rt.bag_in", 2), "CopiesIn": ("_rt.copies_in", 2),
    "BagCardinality": ("_rt.bag_cardinality", 1), "BagUnion": ("_rt.bag_union", 1),
}
BUILTIN_HIGHER = {"SelectSeq": "_rt.selectseq", "SortSeq": "_rt.sortseq"}
BUILTIN_VALUES = {"Nat": NAT, "Int": INT, "BOOLEAN": BOOLEAN_SET, "STRING": STRING,
                  "EmptyBag": ()}
TEMPORAL = {"[]", "<>", "~>", "-+->", "\\cdot"}


class Compiler:
    """Owns the generated code's global namespace and compiles units into it."""

    def __init__(self, var_names):
        self.var_names = var_names
        self.ns = {"_rt": rt, "_FnDict": FnDict, "_eq": rt.eq, "_isin": rt.isin, "_ap": rt.ap,
                   "_enum": enum_fast, "_TLAError": TLAError, "TLCGet": None}
        self.counter = 0
        self.const_cache = {}
        self.rec_ops = {}
        self.inline_depth = 0
        self.tlc_level = [0]
        self.keepalive = []
        self.fold_cache = {}
        self.hoists = []
        self.unroll_factor = 1
        self.ns["_NOV"] = NOV
        for fname in dir(rt):
            if not fname.startswith("_"):
                self.ns["_rt_" + fname] = getattr(rt, fname)
        self.ns["_rt_tlcget"] = tlc_get
        self.ns["_tlc_level"] = self.tlc_level

    # --- helpers ----------------------------------------------------------
    def fresh(self, base):
        self.counter += 1
        base = "".join(ch if ch.isalnum() else "_" for ch in base)
        return f"{base}_{self.counter}"

    def inject(self, value, base="k"):
        name = self.fresh("K" + base)
        self.ns[name] = value
        return name

    def err(self, msg, node, env):
        return TLAError(msg, pos(node, env.get(" path", "?")))

    def build(self, src, name):
        try:
            code = compile(src.replace("_rt.", "_rt_"), f"<tla:{name}>", "exec")
        except SyntaxError as exc:  # a bug in the generator, reported plainly
            raise TLAError(f"internal code generation error in {name}: {exc}") from None
        exec(code, self.ns)
        return self.ns[name]

    def unpack(self, hoist=True):
        n = len(self.var_names)
        if not n:
            return []
        names = ", ".join(f"c_{i}" for i in range(n))
        return [f"{names}{',' if n == 1 else ''} = s"]

    def unit(self, fname, params, compile_body, head):
        """Build `def fname(params)`: head lines, then the compiled body.

        The body is compiled with applications `v[k]` of state variables to literal
        keys hoisted into locals, guarded by one test that each such v is a long
        enough tuple; when the test fails a plain version of the unit runs instead.
        """
        self.hoists.append({})
        try:
            lines = compile_body()
        finally:
            found = self.hoists.pop()
        prologue = []
        if found:
            self.hoists.append(None)
            try:
                slow_lines = compile_body()
            finally:
                self.hoists.pop()
            slow = fname + "_plain"
            self.build("\n".join([f"def {slow}({params}):"] + indent(head + slow_lines)), slow)
            need = {}
            for i, k in found:
                need[i] = max(need.get(i, 0), k)
            test = " or ".join(f"c_{i}.__class__ is not tuple or len(c_{i}) < {k}"
                               for i, k in sorted(need.items()))
            prologue = [f"if {test}:", f"    return {slow}({params})"]
            prologue += [f"{name} = c_{i}[{k - 1}]" for (i, k), name in sorted(found.items())]
        src = "\n".join([f"def {fname}({params}):"] + indent(head + prologue + lines))
        return self.build(src, fname)

    def at_put_code(self, f, key, value):
        """[f EXCEPT ![key] = value]; no test needed when f is a hoisted state tuple."""
        found = self.hoists[-1] if self.hoists else None
        if found is not None and VAR_CODE.match(f) and key.isdigit() and 0 < int(key) < 64:
            k = int(key)
            found.setdefault((int(f[2:]), k), f"p_{f[2:]}_{k}")
            head = f"{f}[:{k - 1}] + " if k > 1 else ""
            return f"({head}({value},) + {f}[{k}:])"
        return at_put_code(f, key, value)

    def apply_code(self, f, key):
        """f[key], with the common tuple case inlined (and hoisted for state variables)."""
        found = self.hoists[-1] if self.hoists else None
        if found is not None and VAR_CODE.match(f) and key.isdigit() and 0 < int(key) < 64:
            slot = (int(f[2:]), int(key))
            return found.setdefault(slot, f"p_{slot[0]}_{slot[1]}")
        return apply_code(f, key)

    # --- units ------------------------------------------------------------
    def state_function(self, node, env, what="expression"):
        """def f(s): return <node>  (a state predicate or state function)."""
        fname = self.fresh("state_" + what)
        return self.unit(fname, "s", lambda: [f"return {self.ex(node, env, Cx('state'))}"],
                         self.unpack())

    def transition_function(self, node, env, what="action_constraint"):
        """def f(s, t): return <node>  with primed variables taken from t."""
        fname = self.fresh(what)
        n = len(self.var_names)
        assigned = frozenset(range(n))
        head = self.unpack()
        if n:
            names = ", ".join(f"n_{i}" for i in range(n))
            head.append(f"{names}{',' if n == 1 else ''} = t")
        return self.unit(fname, "s, t", lambda: [
            f"return {self.ex(node, env, Cx('action', assigned=assigned))}"], head)

    def constant_value(self, node, env):
        """Evaluate a constant-level expression now (NeedsState if it is not)."""
        self.hoists.append(None)
        try:
            code = self.ex(node, env, Cx("const"))
        finally:
            self.hoists.pop()
        fname = self.fresh("const")
        fn = self.build(f"def {fname}():\n    return {code}", fname)
        return fn()

    def action_function(self, node, env, mode, labels=False, what="next"):
        """def f(s, emit): enumerate successors (mode "action") or initial states ("init")."""
        fname = self.fresh(what)
        n = len(self.var_names)

        def final(cx):
            missing = [self.var_names[i] for i in range(n) if i not in cx.assigned]
            if missing:
                msg = (f"the {'initial' if mode == 'init' else 'successor'} state is not "
                       f"completely specified: no value for {', '.join(missing)}")
                return [f"_rt.fail({msg!r})"]
            tup = "(" + "".join(f"n_{i}, " for i in range(n)) + ")"
            if labels:
                return [f"emit({tup}, {cx.label or 'Next'!r})"]
            return [f"emit({tup})"]

        head = self.unpack() if mode != "init" else ["s = None"]
        return self.unit(fname, "s, emit",
                         lambda: self.act(node, env, Cx(mode), final) + ["return None"], head)

    # --- actions ----------------------------------------------------------
    def act(self, node, env, cx, k):
        kind = name_of(node)
        if kind == "Parentheses":
            return self.act(node.expression, env, cx, k)
        if kind == "VerticalList":
            items = [it.expression for it in node.arguments]
            if node.operator == "/\\":
                return self.conj(items, env, cx.but(open=False), k)
            return self.disj(items, env, cx, k)
        if kind == "VerticalItem":
            return self.act(node.expression, env, cx, k)
        if kind == "Quantification" and node.quantifier == "\\E":
            return self.act_exists(node, env, cx, k)
        if kind == "Quantification" and node.quantifier == "\\A":
            unrolled = self.unroll(node.declarations, env, cx, limit=64)
            if unrolled is not None:
                with self.unrolling(unrolled):
                    return self.conj_envs(node.predicate, unrolled, cx.but(open=False), k)
            if self.mentions_prime(node):
                raise self.err("unsupported: \\A over a non-constant or large set in an action "
                               "that assigns primed variables", node, env)
        if kind == "If":
            c = self.ex(node.predicate, env, cx)
            return ([f"if {c}:"] + indent(self.act(node.then, env, cx, k) or ["pass"])
                    + ["else:"] + indent(self.act(node.else_, env, cx, k) or ["pass"]))
        if kind == "Cases":
            return self.act_case(node, env, cx, k)
        if kind == "Let":
            return self.act(node.expression, self.let_env(node, env), cx, k)
        if kind == "SubscriptedAction":
            return self.act_subscripted(node, env, cx, k)
        if kind == "OperatorApplication":
            return self.act_opapp(node, env, cx, k)
        if kind == "SubexpressionReference":
            target, args, tenv = self.resolve_subexpr(node, env)
            return self.act_apply(target, args, env, node, cx, k, tenv)
        if kind == "BooleanLiteral" and node.value == "TRUE":
            return k(cx)
        return self.guard(node, env, cx, k)

    def guard(self, node, env, cx, k):
        code = self.ex(node, env, cx)
        if code == "True":
            return k(cx)
        if code == "False":
            return []
        return guarded_block(code, k(cx))

    def conj_envs(self, node, envs, cx, k):
        if not envs:
            return k(cx)
        return self.act(node, envs[0], cx,
                        lambda cx2: self.conj_envs(node, envs[1:], cx2, k))

    @staticmethod
    def mentions_prime(node):
        """Syntactic test: does node contain ' or UNCHANGED (not through definitions)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, list):
                stack.extend(n)
            elif hasattr(n, "symbol"):
                if name_of(n) == "OperatorApplication" and n.operator in ("'", "UNCHANGED"):
                    return True
                stack.extend(getattr(n, f) for f in n._fields if f not in ("symbol", "start",
                                                                           "end"))
            elif isinstance(n, tuple):
                stack.extend(n)
        return False

    def conj(self, items, env, cx, k):
        if not items:
            return k(cx)
        return self.act(items[0], env, cx.but(open=False),
                        lambda cx2: self.conj(items[1:], env, cx2, k))

    def disj(self, items, env, cx, k):
        out = []
        for item in items:
            out += self.act(item, env, cx, k)
        return out

    def act_exists(self, node, env, cx, k):
        unrolled = self.unroll(node.declarations, env, cx)
        if unrolled is not None:
            out = []
            with self.unrolling(unrolled):
                for env2 in unrolled:
                    out += self.act(node.predicate, env2, cx, k)
            return out
        loops, env2, cx2 = self.bind_decls(node.declarations, env, cx)
        inner = self.act(node.predicate, env2, cx2, k) or ["pass"]
        for header in reversed(loops):
            inner = [header + ":"] + indent(inner)
        return inner

    def act_case(self, node, env, cx, k):
        out = []
        for i, item in enumerate(node.cases):
            c = self.ex(item.predicate, env, cx)
            out += [f"{'if' if i == 0 else 'elif'} {c}:"]
            out += indent(self.act(item.expression, env, cx, k) or ["pass"])
        out.append("else:")
        if node.other is not None:
            out += indent(self.act(node.other, env, cx, k) or ["pass"])
        else:
            where = "{}:{}:{}".format(*pos(node, env.get(" path", "?")))
            out += indent([f"_rt.case_fail({where!r})"])
        return out

    def act_subscripted(self, node, env, cx, k):
        if node.operator == "[":
            return (self.act(node.action, env, cx, k)
                    + self.act_unchanged(node.subscript, env, cx, k, node))
        changed = self.fresh("chg")

        def after(cx2):
            cur = self.ex(node.subscript, env, cx2)
            new = self.ex(node.subscript, env, cx2.but(primed=True))
            return [f"{changed} = not _eq({new}, {cur})", f"if {changed}:"] + indent(
                k(cx2) or ["pass"])
        return self.act(node.action, env, cx, after)

    def act_opapp(self, node, env, cx, k):
        op = canonical_op(node.operator)
        args = node.arguments or []
        if op == "/\\" and len(args) == 2 and not node.nonfix:
            return self.conj(list(args), env, cx.but(open=False), k)
        if op == "\\/" and len(args) == 2 and not node.nonfix:
            return self.disj(list(args), env, cx, k)
        if op == "UNCHANGED":
            return self.act_unchanged(args[0], env, cx, k, node)
        if op == "=" and len(args) == 2:
            target = self.assignable(args[0], env, cx)
            if target is not None and target not in cx.assigned:
                value = self.ex(args[1], env, cx)
                return [f"n_{target} = {value}"] + k(cx.but(assigned=cx.assigned | {target}))
        if op == "\\in" and len(args) == 2:
            target = self.assignable(args[0], env, cx)
            if target is not None and target not in cx.assigned:
                s = self.ex(args[1], env, cx)
                return [f"for n_{target} in _enum({s}):"] + indent(
                    k(cx.but(assigned=cx.assigned | {target})) or ["pass"])
        if op in SIMPLE_BINARY or op in SIMPLE_PREFIX or op in TEMPORAL or op in ("ENABLED", "'"):
            return self.guard(node, env, cx, k)
        binding = self.lookup(node.operator, env, node)
        return self.act_apply(binding, args, env, node, cx, k, env)

    def act_apply(self, binding, args, env, node, cx, k, def_env):
        if isinstance(binding, ArgB) and not args:
            return self.act(binding.node, binding.env, cx, k)
        if isinstance(binding, OpRefB):
            binding = binding.target
        if isinstance(binding, LazyRefB):
            binding = self.lookup(binding.name, binding.env, node)
        if isinstance(binding, (DefB, LambdaB)) and not getattr(binding, "recursive", False) \
                and not (isinstance(binding, DefB) and binding.node.function):
            params = binding.params
            if len(params) != len(args):
                raise self.err(f"operator {node_name(node)} expects {len(params)} arguments, "
                               f"got {len(args)}", node, env)
            body_env = self.param_env(binding, args, env)
            body = binding.node.definiens if isinstance(binding, DefB) else binding.node.expression
            if isinstance(binding, DefB) and cx.open:
                cx = cx.but(label=binding.node.name)
            self.enter_inline(node, env)
            try:
                return self.act(body, body_env, cx, k)
            finally:
                self.inline_depth -= 1
        return self.guard(node, env, cx, k)

    def act_unchanged(self, node, env, cx, k, where):
        targets = self.unchanged_vars(node, env, where)
        out_k = k
        for index in reversed(targets):
            out_k = self.make_unchanged_k(index, out_k)
        return out_k(cx)

    def make_unchanged_k(self, index, k):
        def step(cx):
            if index in cx.assigned:
                return [f"if n_{index} == c_{index}:"] + indent(k(cx) or ["pass"])
            return [f"n_{index} = c_{index}"] + k(cx.but(assigned=cx.assigned | {index}))
        return step

    def unchanged_vars(self, node, env, where):
        kind = name_of(node)
        if kind == "Parentheses":
            return self.unchanged_vars(node.expression, env, where)
        if kind == "Tuple":
            out = []
            for item in node.items:
                out += self.unchanged_vars(item, env, where)
            return out
        if kind == "OperatorApplication" and not node.arguments:
            b = self.lookup(node.operator, env, node)
            if isinstance(b, VarB):
                return [b.index]
            if isinstance(b, DefB) and not b.params:
                return self.unchanged_vars(b.node.definiens, b.env, where)
            if isinstance(b, ArgB):
                return self.unchanged_vars(b.node, b.env, where)
            if isinstance(b, (ConstB, LocalB)):
                return []
        raise self.err("UNCHANGED expects variables or tuples of variables (unsupported form)",
                       node, env)

    def assignable(self, node, env, cx):
        """The variable index if node is `x'` (action mode) or `x` (init mode)."""
        kind = name_of(node)
        if cx.mode == "action" and kind == "OperatorApplication" and node.operator == "'":
            inner = node.arguments[0]
            if name_of(inner) == "OperatorApplication" and not inner.arguments:
                b = self.lookup(inner.operator, env, inner)
                while isinstance(b, ArgB) and name_of(b.node) == "OperatorApplication" \
                        and not b.node.arguments:
                    b = self.lookup(b.node.operator, b.env, b.node)
                if isinstance(b, VarB):
                    return b.index
        if cx.mode == "init" and kind == "OperatorApplication" and not node.arguments:
            b = self.lookup(node.operator, env, node)
            while isinstance(b, ArgB) and name_of(b.node) == "OperatorApplication" \
                    and not b.node.arguments:
                b = self.lookup(b.node.operator, b.env, b.node)
            if isinstance(b, VarB):
                return b.index
        return None

    # --- name resolution ----------------------------------------------------
    def lookup(self, name, env, node):
        b = env.get(name)
        if b is not None:
            return b
        if name in BUILTIN_FUNCS or name in BUILTIN_HIGHER or name in BUILTIN_VALUES \
                or name in ("TLCGet", "JavaTime", "TLCSet", "Any"):
            return BuiltinB(name)
        raise self.err(f"unknown operator {name}", node, env)

    def param_env(self, binding, args, caller_env):
        env = dict(binding.env)
        for param, arg in zip(binding.params, args, strict=False):
            pname = param.operator if hasattr(param, "operator") else param
            is_op = bool(getattr(param, "arguments", None))
            if is_op:
                env[pname] = self.op_ref(arg, caller_env)
            else:
                env[pname] = ArgB(arg, caller_env)
        return env

    def op_ref(self, arg, env):
        kind = name_of(arg)
        if kind == "Lambda":
            return LambdaB(arg, env)
        if kind == "Parentheses":
            return self.op_ref(arg.expression, env)
        if kind == "OperatorApplication" and not arg.arguments:
            b = self.lookup(arg.operator, env, arg)
            if isinstance(b, ArgB):
                return self.op_ref(b.node, b.env)
            if isinstance(b, LazyRefB):
                return OpRefB(self.lookup(b.name, b.env, arg))
            return OpRefB(b)
        if kind == "OperatorApplication" and arg.arguments is not None:
            pass
        raise self.err("expected an operator name or LAMBDA as argument", arg, env)

    def enter_inline(self, node, env):
        self.inline_depth += 1
        if self.inline_depth > 200:
            self.inline_depth = 0
            raise self.err("operator expansion too deep (a recursive operator must be "
                           "declared RECURSIVE)", node, env)

    def let_env(self, node, env):
        env = dict(env)
        for d in node.definitions:
            if name_of(d) == "OperatorDefinition":
                env[d.name] = DefB(d, env)
            elif name_of(d) == "RecursiveOperators":
                pass
            else:
                raise self.err(f"unsupported LET definition {name_of(d)}", d, env)
        for d in node.definitions:
            if name_of(d) == "RecursiveOperators":
                for n in d.names:
                    b = env.get(n.operator)
                    if isinstance(b, DefB):
                        b.recursive = True
        return env

    # --- expressions ----------------------------------------------------------
    def ex(self, node, env, cx):
        if isinstance(node, str):
            if node == "@":
                b = env.get("@")
                if b is None:
                    raise TLAError("@ used outside EXCEPT")
                return b.pyname
            raise TLAError(f"unsupported syntax {node!r}")
        kind = name_of(node)
        method = getattr(self, "ex_" + kind, None)
        if method is None:
            raise self.err(f"unsupported construct {kind}", node, env)
        code = method(node, env, cx)
        if kind in FOLDABLE and cx.mode != "const":
            return self.fold_code(code)
        return code

    def fold_code(self, code):
        """Evaluate a generated expression that mentions no local name once, now."""
        if code in self.fold_cache:
            return self.fold_cache[code]
        result = code
        if not LOCAL_NAME.search(code) and not code.isidentifier():
            try:
                value = eval(compile(code.replace("_rt.", "_rt_"), "<fold>", "eval"), self.ns)
                result = self.literal(value)
            except Exception:  # errors stay where TLC would raise them: at run time
                result = code
        self.fold_cache[code] = result
        return result

    def ex_Parentheses(self, node, env, cx):
        return self.ex(node.expression, env, cx)

    def ex_IntegralNumeral(self, node, env, cx):
        return str(int(node.value))

    def ex_StringLiteral(self, node, env, cx):
        return repr(ast.literal_eval(node.value))

    def ex_BooleanLiteral(self, node, env, cx):
        return "True" if node.value == "TRUE" else "False"

    def ex_SetOfBooleans(self, node, env, cx):
        return self.inject(BOOLEAN_SET, "BOOLEAN")

    def ex_SetOfStrings(self, node, env, cx):
        return self.inject(STRING, "STRING")

    def ex_Tuple(self, node, env, cx):
        items = [self.ex(i, env, cx) for i in node.items]
        return "(" + "".join(i + ", " for i in items) + ")"

    def ex_SetEnumeration(self, node, env, cx):
        items = [self.ex(i, env, cx) for i in node.items]
        if not items:
            return "frozenset()"
        return "_rt.mkset((" + "".join(i + ", " for i in items) + "))"

    def ex_VerticalList(self, node, env, cx):
        joiner = " and " if node.operator == "/\\" else " or "
        return "(" + joiner.join(self.ex(it.expression, env, cx) for it in node.arguments) + ")"

    def ex_VerticalItem(self, node, env, cx):
        return self.ex(node.expression, env, cx)

    def ex_If(self, node, env, cx):
        c, t, e = (self.ex(n, env, cx) for n in (node.predicate, node.then, node.else_))
        return f"({t} if {c} else {e})"

    def ex_Cases(self, node, env, cx):
        if node.other is not None:
            out = self.ex(node.other, env, cx)
        else:
            where = "{}:{}:{}".format(*pos(node, env.get(" path", "?")))
            out = f"_rt.case_fail({where!r})"
        for item in reversed(node.cases):
            c = self.ex(item.predicate, env, cx)
            e = self.ex(item.expression, env, cx)
            out = f"({e} if {c} else {out})"
        return out

    def ex_Let(self, node, env, cx):
        return self.ex(node.expression, self.let_env(node, env), cx)

    def ex_Field(self, node, env, cx):
        r = self.ex(node.expression, env, cx)
        if r.isidentifier():
            key = repr(node.name)
            return f"({r}.d[{key}] if {r}.__class__ is _FnDict and {key} in {r}.d " \
                   f"else _ap({r}, {key}))"
        return f"_ap({r}, {node.name!r})"

    def ex_FunctionApplication(self, node, env, cx):
        f = self.ex(node.function, env, cx)
        args = [self.ex(a, env, cx) for a in node.arguments]
        key = args[0] if len(args) == 1 else "(" + ", ".join(args) + ",)"
        return self.apply_code(f, key)

    def ex_Record(self, node, env, cx):
        pairs = ", ".join(f"({k!r}, {self.ex(v, env, cx)})" for k, v in node.key_values)
        return f"_rt.rec(({pairs},))"

    def ex_SetOfRecords(self, node, env, cx):
        pairs = ", ".join(f"({kb.name!r}, {self.ex(kb.bound, env, cx)})"
                          for kb in node.key_bounds)
        return f"_rt.recset(({pairs},))"

    def ex_SetOfFunctions(self, node, env, cx):
        return f"_rt.fnset({self.ex(node.domain, env, cx)}, {self.ex(node.codomain, env, cx)})"

    def ex_Except(self, node, env, cx):
        code = self.ex(node.function, env, cx)
        for change in node.changes:
            keys = []
            for item in change.item:
                if isinstance(item, str):
                    keys.append(repr(item))
                else:
                    parts = [self.ex(a, env, cx) for a in item]
                    keys.append(parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ",)")
            at = self.fresh("at")
            env2 = dict(env)
            simple = len(keys) == 1 and SIMPLE_CODE.match(code) and SIMPLE_CODE.match(keys[0])
            env2["@"] = LocalB(self.apply_code(code, keys[0]) if simple else at)
            value = self.ex(change.expression, env2, cx.but(locals=cx.locals + (at,)))
            if len(keys) == 1 and at not in value:
                code = self.at_put_code(code, keys[0], value)
            else:
                code = f"_rt.except_({code}, ({', '.join(keys)},), lambda {at}: {value})"
        return code

    def literal(self, value):
        """Python source for a constant value (a literal when possible)."""
        if value.__class__ in (int, bool, str):
            return repr(value) if not (value.__class__ is int and value < 0) else f"({value})"
        return self.inject(value, "f")

    def unroll(self, decls, env, cx, limit=27):
        """Environments for each binding when every bound set is a small constant set."""
        if cx.mode == "const":
            return None
        envs = [env]
        pending = []
        for d in decls:
            if not (name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments):
                if name_of(d) != "OperatorApplication" or d.arguments:
                    return None
                pending.append(d)
                continue
            target, set_node = d.arguments
            if name_of(target) != "OperatorApplication":
                return None
            code = self.ex(set_node, env, cx)
            value = self.ns.get(code)
            if value.__class__ is not frozenset or len(value) > 8:
                return None
            from .values import sort_key
            items = [self.literal(v) for v in sorted(value, key=sort_key)]
            for t in pending + [target]:
                envs = [dict(e, **{t.operator: ConstB(item)}) for e in envs for item in items]
                if len(envs) > limit:
                    return None
            pending = []
        if pending or len(envs) * self.unroll_factor > UNROLL_BUDGET:
            return None
        return envs

    @contextlib.contextmanager
    def unrolling(self, envs):
        """Track how many copies nested unrolling makes (kept under UNROLL_BUDGET)."""
        factor = max(1, len(envs))
        self.unroll_factor *= factor
        try:
            yield
        finally:
            self.unroll_factor //= factor

    def bind_decls(self, decls, env, cx):
        """Bounded declarations -> for-clause headers, extended env and context."""
        env = dict(env)
        pending = []
        headers = []
        locals_ = cx.locals
        for d in decls:
            if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
                target, set_node = d.arguments
                s = self.ex(set_node, env_for_sets(env, pending), cx)
                names = pending + [target]
                pending = []
                for t in names:
                    if name_of(t) == "Tuple":
                        tmp = self.fresh("tup")
                        pys = [self.fresh("b_" + i.operator) for i in t.items]
                        headers.append(f"for {tmp} in _enum({s})")
                        headers.append(f"for ({', '.join(pys)},) in ({tmp},)")
                        for i, py in zip(t.items, pys, strict=False):
                            env[i.operator] = LocalB(py)
                        locals_ += tuple(pys) + (tmp,)
                    else:
                        py = self.fresh("b_" + t.operator)
                        it = s if isinstance(self.ns.get(s), frozenset) else f"_enum({s})"
                        if s.startswith("_rt.interval("):
                            it = "_rt.irange(" + s[len("_rt.interval("):]
                        headers.append(f"for {py} in {it}")
                        env[t.operator] = LocalB(py)
                        locals_ += (py,)
            elif name_of(d) == "OperatorApplication" and not d.arguments:
                pending.append(d)
            elif name_of(d) == "Tuple":
                pending.append(d)
            else:
                raise self.err("unbounded quantifier or unsupported declaration", d, env)
        if pending:
            raise self.err("unbounded quantification is not supported (use \\in S)",
                           pending[0], env)
        return headers, env, cx.but(locals=locals_)

    def ex_Quantification(self, node, env, cx):
        unrolled = self.unroll(node.declarations, env, cx)
        if unrolled is not None:
            joiner = " and " if node.quantifier == "\\A" else " or "
            with self.unrolling(unrolled):
                parts = [self.ex(node.predicate, e, cx) for e in unrolled]
            if not parts:
                return "True" if node.quantifier == "\\A" else "False"
            return "(" + joiner.join(parts) + ")"
        headers, env2, cx2 = self.bind_decls(node.declarations, env, cx)
        body = self.ex(node.predicate, env2, cx2)
        fn = "all" if node.quantifier == "\\A" else "any"
        return f"{fn}({body} {' '.join(headers)})"

    def ex_SetSlice(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls([node.declaration], env, cx)
        target = node.declaration.arguments[0]
        if name_of(target) == "Tuple":
            elem = headers[0].split()[1]
        else:
            elem = env2[target.operator].pyname
        body = self.ex(node.predicate, env2, cx2)
        eager = f"frozenset([{elem} {' '.join(headers)} if {body}])"
        set_code = self.ex(node.declaration.arguments[1], env, cx)
        value = self.ns.get(set_code)
        if name_of(target) != "Tuple" and isinstance(value, LazySet) and not value.finite:
            return f"_rt.filter_set({set_code}, lambda {elem}: {body})"
        return eager

    def ex_SetComprehension(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls(node.declarations, env, cx)
        body = self.ex(node.item, env2, cx2)
        return f"_rt.mkset([{body} {' '.join(headers)}])"

    def ex_Function(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls(node.declaration, env, cx)
        key = self.decl_key(node.declaration, env2, headers)
        body = self.ex(node.value, env2, cx2)
        return f"_rt.make_fn({{{key}: {body} {' '.join(headers)}}})"

    def decl_key(self, decls, env2, headers):
        names = []
        for d in decls:
            if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
                names.append(d.arguments[0])
            else:
                names.append(d)
        parts = []
        for t in names:
            if name_of(t) == "Tuple":
                parts.append("(" + "".join(env2[i.operator].pyname + ", " for i in t.items) + ")")
            else:
                parts.append(env2[t.operator].pyname)
        return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ",)"

    def ex_Choose(self, node, env, cx):
        decl = node.declaration
        if not (name_of(decl) == "OperatorApplication" and decl.operator == "\\in"):
            raise self.err("unbounded CHOOSE is not supported", node, env)
        target, set_node = decl.arguments
        s = self.ex(set_node, env, cx)
        env2 = dict(env)
        if name_of(target) == "Tuple":
            tmp = self.fresh("tup")
            pys = [self.fresh("b_" + i.operator) for i in target.items]
            for i, py in zip(target.items, pys, strict=False):
                env2[i.operator] = LocalB(py)
            body = self.ex(node.predicate, env2, cx.but(locals=cx.locals + tuple(pys)))
            pred = f"lambda {tmp}: [{body} for ({', '.join(pys)},) in ({tmp},)][0]"
        else:
            py = self.fresh("b_" + target.operator)
            env2[target.operator] = LocalB(py)
            body = self.ex(node.predicate, env2, cx.but(locals=cx.locals + (py,)))
            pred = f"lambda {py}: {body}"
        return f"_rt.choose({s}, {pred})"

    def ex_SubscriptedAction(self, node, env, cx):
        if cx.mode != "action":
            raise self.err("action expression used where a state expression is required "
                           "(level error)", node, env)
        action = self.ex(node.action, env, cx)
        cur = self.ex(node.subscript, env, cx)
        new = self.ex(node.subscript, env, cx.but(primed=True))
        if node.operator == "[":
            return f"({action} or _eq({new}, {cur}))"
        return f"({action} and not _eq({new}, {cur}))"

    def ex_Lambda(self, node, env, cx):
        raise self.err("LAMBDA is only supported as an operator argument", node, env)

    def ex_Fairness(self, node, env, cx):
        raise self.err("fairness formula used inside an expression (level error)", node, env)

    def ex_SubexpressionReference(self, node, env, cx):
        target, args, tenv = self.resolve_subexpr(node, env)
        return self.apply(target, args, env, node, cx)

    def resolve_subexpr(self, node, env):
        items = node.items
        cur_env = env
        for item in items[:-1]:
            name = item if isinstance(item, str) else item.operator
            b = self.lookup(name, cur_env, node)
            if not isinstance(b, InstB):
                raise self.err(f"{name} is not an instance (unsupported subexpression reference)",
                               node, env)
            cur_env = b.env
        last = items[-1]
        if isinstance(last, str):
            return self.lookup(last, cur_env, node), [], cur_env
        if name_of(last) != "OperatorApplication":
            raise self.err("unsupported subexpression reference", node, env)
        b = self.lookup(last.operator, cur_env, last)
        return b, last.arguments or [], cur_env

    def ex_OperatorApplication(self, node, env, cx):
        op = canonical_op(node.operator)
        args = node.arguments or []
        user = env.get(node.operator)
        if isinstance(user, DefB) and not node.operator.isidentifier():
            return self.apply(user, args, env, node, cx)
        if args and not node.nonfix or (node.nonfix and op in SIMPLE_BINARY):
            code = self.ex_builtin_op(op, node, args, env, cx)
            if code is not None:
                return code
        binding = self.lookup(node.operator, env, node)
        return self.apply(binding, args, env, node, cx)

    def ex_builtin_op(self, op, node, args, env, cx):
        if op in TEMPORAL:
            raise self.err(f"temporal operator {op} used inside an expression (level error)",
                           node, env)
        if len(args) == 2 and op in SIMPLE_BINARY:
            if op == "\\X":
                pass
            a, b = (self.ex(x, env, cx) for x in args)
            if op in ("=", "#") and SIMPLE_CODE.match(a) and SIMPLE_CODE.match(b):
                ca, cb = class_code(a, self.ns), class_code(b, self.ns)
                test = f"({a} == {b} if {ca} is {cb} else _eq({a}, {b}))"
                return test if op == "=" else f"(not {test})"
            if op in ("\\in", "\\notin") and isinstance(self.ns.get(b), frozenset):
                test = f"({a} in {b} or _isin({a}, {b}))"
                return test if op == "\\in" else f"(not {test})"
            if op in ("\\in", "\\notin") and isinstance(self.ns.get(b), LazySet):
                test = self.fnset_member_code(a, b) or f"{b}.contains({a})"
                return test if op == "\\in" else f"(not {test})"
            return SIMPLE_BINARY[op].format(a, b)
        if op == "\\X":
            parts = flatten_cross(node)
            return "_rt.cross(" + ", ".join(self.ex(p, env, cx) for p in parts) + ")"
        if len(args) == 1 and op in SIMPLE_PREFIX:
            return SIMPLE_PREFIX[op].format(self.ex(args[0], env, cx))
        if op == "'":
            return self.ex(args[0], env, self.prime_cx(node, env, cx))
        if op == "ENABLED":
            return self.ex_enabled(args[0], env, cx, node)
        if op == "UNCHANGED":
            if cx.mode != "action":
                raise self.err("UNCHANGED used outside an action (level error)", node, env)
            idx = self.unchanged_vars(args[0], env, node)
            for i in idx:
                if i not in cx.assigned:
                    msg = f"primed variable {self.var_names[i]} is unassigned"
                    return f"_rt.fail({msg!r})"
            return "(" + " and ".join([f"n_{i} == c_{i}" for i in idx] or ["True"]) + ")"
        return None

    def fnset_member_code(self, a, b):
        """x \\in [1..n -> C] for a constant function set: an unrolled tuple test."""
        value = self.ns[b]
        if not (a.isidentifier() and isinstance(value, FnSet)) or \
                value.cod.__class__ is not frozenset:
            return None
        try:
            n = value.tuple_len()
        except TLAError:
            return None
        if not 0 < n <= 8:
            return None
        cod = self.inject(value.cod, "cod")
        items = " and ".join(f"{a}[{i}] in {cod}" for i in range(n))
        return f"(({a}.__class__ is tuple and len({a}) == {n} and {items}) or {b}.contains({a}))"

    def prime_cx(self, node, env, cx):
        if cx.mode != "action":
            raise self.err("primed expression where none is allowed (level error)", node, env)
        if cx.primed:
            raise self.err("double prime is not allowed (level error)", node, env)
        return cx.but(primed=True)

    def ex_enabled(self, action, env, cx, node):
        if cx.mode not in ("state", "action"):
            raise self.err("ENABLED used outside a state context", node, env)
        fname = self.fresh("enabled")
        params = ", ".join(("s",) + cx.locals)
        self.unit(fname, params, lambda: self.act(
            action, env, Cx("action", locals_=cx.locals), lambda c: ["return True"])
            + ["return False"], self.unpack())
        return f"{fname}({params})"

    def apply(self, binding, args, env, node, cx):
        if isinstance(binding, VarB):
            if args:
                raise self.err(f"variable {binding.name} takes no arguments", node, env)
            return self.var_code(binding, node, env, cx)
        if isinstance(binding, LocalB):
            if args:
                raise self.err("bound variable takes no arguments", node, env)
            if cx.mode == "const" and binding.pyname not in cx.locals:
                raise NeedsState()
            return binding.pyname
        if isinstance(binding, ConstB):
            if args:
                raise self.err("constant takes no arguments", node, env)
            return binding.pyname
        if isinstance(binding, ArgB):
            if args:
                raise self.err("argument takes no arguments", node, env)
            return self.ex(binding.node, binding.env, cx)
        if isinstance(binding, OpRefB):
            return self.apply(binding.target, args, env, node, cx)
        if isinstance(binding, LazyRefB):
            return self.apply(self.lookup(binding.name, binding.env, node), args, env, node, cx)
        if isinstance(binding, BuiltinB):
            return self.apply_builtin(binding.name, args, env, node, cx)
        if isinstance(binding, InstB):
            raise self.err("an instance is not a value", node, env)
        if isinstance(binding, LambdaB):
            return self.inline(binding, args, env, node, cx)
        if isinstance(binding, DefB):
            if binding.node.function:
                if args:
                    raise self.err("function definitions are applied with [ ]", node, env)
                return self.recursive_function(binding, env, cx)
            if binding.recursive:
                return self.recursive_call(binding, args, env, node, cx)
            if not binding.params and not args:
                folded = self.try_fold(binding)
                if folded is not None:
                    return folded
            return self.inline(binding, args, env, node, cx)
        raise self.err("cannot apply this name", node, env)

    def var_code(self, binding, node, env, cx):
        i = binding.index
        if cx.mode == "const":
            raise NeedsState()
        if cx.mode == "init":
            if i in cx.assigned:
                return f"n_{i}"
            return f"_rt.fail({'variable ' + binding.name + ' is read before it is assigned'!r})"
        if cx.primed:
            if i in cx.assigned:
                return f"n_{i}"
            msg = f"primed variable {binding.name}' is read before it is assigned"
            return f"_rt.fail({msg!r})"
        return f"c_{i}"

    def inline(self, binding, args, env, node, cx):
        params = binding.params
        if len(params) != len(args):
            raise self.err(f"operator {node_name(node)} expects {len(params)} arguments, "
                           f"got {len(args)}", node, env)
        body_env = self.param_env(binding, args, env)
        body = binding.node.definiens if isinstance(binding, DefB) else binding.node.expression
        self.enter_inline(node, env)
        try:
            return self.ex(body, body_env, cx)
        finally:
            self.inline_depth -= 1

    def try_fold(self, binding):
        key = id(binding)
        if key in self.const_cache:
            entry = self.const_cache[key]
            return entry[1] if entry else None
        self.const_cache[key] = None
        self.keepalive.append(binding)
        try:
            value = self.constant_value(binding.node.definiens, binding.env)
        except (NeedsState, TLAError, RecursionError, TypeError, ValueError, KeyError,
                IndexError, ZeroDivisionError, NameError, AttributeError):
            return None
        name = self.inject(value, binding.node.name)
        self.const_cache[key] = (binding, name)
        return name

    def recursive_function(self, binding, env, cx):
        """fib[i \\in S] == body  ->  a RecFn value evaluated on demand."""
        key = ("rf", id(binding))
        if key not in self.const_cache:
            self.const_cache[key] = None
            self.keepalive.append(binding)
            try:
                code = self.recfn_code(binding, Cx("const"))
                fname = self.fresh("rfconst")
                value = self.build(f"def {fname}():\n    return {code}", fname)()
                self.const_cache[key] = self.inject(value, binding.node.name)
            except (NeedsState, TLAError):
                pass
        if self.const_cache[key] is not None:
            return self.const_cache[key]
        return self.recfn_code(binding, cx)

    def recfn_code(self, binding, cx):
        fn = binding.node.definiens
        name = binding.node.name
        self_name = self.fresh("self_" + name)
        sets, names, pending = [], [], []
        for d in fn.declaration:
            if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
                target, set_node = d.arguments
                code = self.ex(set_node, binding.env, cx)
                for t in pending + [target]:
                    if name_of(t) != "OperatorApplication":
                        raise self.err("tuple patterns in recursive function definitions "
                                       "are not supported", t, binding.env)
                    names.append(t.operator)
                    sets.append(code)
                pending = []
            else:
                pending.append(d)
        env = dict(binding.env)
        env[name] = LocalB(self_name)
        pys = []
        for n in names:
            py = self.fresh("b_" + n)
            env[n] = LocalB(py)
            pys.append(py)
        body = self.ex(fn.value, env, cx.but(locals=cx.locals + (self_name,) + tuple(pys)))
        dom = sets[0] if len(sets) == 1 else "_rt.cross(" + ", ".join(sets) + ")"
        if len(pys) == 1:
            lam = f"lambda {self_name}, {pys[0]}: {body}"
        else:
            karg = self.fresh("key")
            lam = f"lambda {self_name}, {karg}: [{body} for ({', '.join(pys)},) in ({karg},)][0]"
        return f"_rt.recfn({dom}, {lam})"

    def recursive_call(self, binding, args, env, node, cx):
        params = binding.params
        if len(params) != len(args):
            raise self.err(f"operator {node_name(node)} expects {len(params)} arguments, "
                           f"got {len(args)}", node, env)
        entry = self.rec_ops.get(id(binding))
        if entry is None:
            fname = self.fresh("rec_" + binding.node.name)
            entry = self.rec_ops[id(binding)] = [fname, False]
            self.keepalive.append(binding)
            entry[1] = self.define_recursive(binding, fname)
        fname, needs_state = entry
        codes = [self.ex(a, env, cx) for a in args]
        if cx.mode == "const":
            if needs_state:
                raise NeedsState()
            return f"{fname}(None, {', '.join(codes)})"
        return f"{fname}(s, {', '.join(codes)})"

    def define_recursive(self, binding, fname):
        env = dict(binding.env)
        pys = []
        for p in binding.params:
            if getattr(p, "arguments", None):
                raise self.err("higher-order parameters of RECURSIVE operators are "
                               "not supported", p, env)
            py = self.fresh("p_" + p.operator)
            env[p.operator] = LocalB(py)
            pys.append(py)
        try:
            self.hoists.append(None)
            body = self.ex(binding.node.definiens, env, Cx("const", locals_=tuple(pys)))
            needs_state = False
        except NeedsState:
            body = self.ex(binding.node.definiens, env, Cx("state", locals_=tuple(pys)))
            needs_state = True
        finally:
            self.hoists.pop()
        head = ["if s is not None:"] + indent(self.unpack() or ["pass"])
        src = "\n".join([f"def {fname}(s, {', '.join(pys)}):"]
                        + indent(head + [f"return {body}"]))
        self.build(src, fname)
        return needs_state

    def apply_builtin(self, name, args, env, node, cx):
        if name in BUILTIN_VALUES:
            if args:
                raise self.err(f"{name} takes no arguments", node, env)
            return self.inject(BUILTIN_VALUES[name], name)
        if name in BUILTIN_FUNCS:
            fn, arity = BUILTIN_FUNCS[name]
            if len(args) != arity:
                raise self.err(f"{name} expects {arity} arguments, got {len(args)}", node, env)
            codes = [self.ex(a, env, cx) for a in args]
            if name in INLINE_SEQ and codes[0].isidentifier():
                return INLINE_SEQ[name].format(*codes)
            return f"{fn}({', '.join(codes)})"
        if name in BUILTIN_HIGHER:
            if len(args) != 2:
                raise self.err(f"{name} expects 2 arguments", node, env)
            seq = self.ex(args[0], env, cx)
            test = self.op_ref(args[1], env)
            arity = 2 if name == "SortSeq" else 1
            pys = [self.fresh("x") for _ in range(arity)]
            fake_args = [Py(p) for p in pys]
            env2 = dict(env)
            for p in pys:
                env2[p] = LocalB(p)
            call = self.apply(test, fake_args, env2, node, cx.but(locals=cx.locals + tuple(pys)))
            return f"{BUILTIN_HIGHER[name]}({seq}, lambda {', '.join(pys)}: {call})"
        if name == "TLCGet":
            if len(args) != 1:
                raise self.err("TLCGet expects 1 argument", node, env)
            if cx.mode == "const":
                raise NeedsState()
            return f"_rt_tlcget({self.ex(args[0], env, cx)}, _tlc_level)"
        if name == "JavaTime":
            return "0"
        if name == "TLCSet":
            return "True"
        raise self.err(f"unsupported builtin {name}", node, env)


class Py:
    """A pseudo-node standing for an already-compiled Python local."""

    def __init__(self, pyname):
        self.pyname = pyname
        self.start = None


def ex_py(self, node, env, cx):
    return node.pyname


Compiler.ex_Py = ex_py


def env_for_sets(env, pending):
    return env


def flatten_cross(node):
    parts = []
    for a in node.arguments:
        if name_of(a) == "OperatorApplication" and canonical_op(a.operator) == "\\X" \
                and a.arguments and len(a.arguments) == 2:
            parts += flatten_cross(a)
        else:
            parts.append(a)
    return parts


def node_name(node):
    if name_of(node) == "OperatorApplication":
        return node.operator
    if name_of(node) == "SubexpressionReference":
        return "!".join(getattr(i, "operator", "?") for i in node.items)
    return name_of(node)


def enum_fast(s):
    if s.__class__ is frozenset:
        return s
    from .values import enum
    return enum(s)


def tlc_get(key, level):
    if key == "level":
        return level[0]
    raise TLAError(f"TLCGet({key!r}) is not supported")


Compiler.model_value = staticmethod(ModelValue)
