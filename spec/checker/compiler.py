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
import re
from functools import partial

from . import rt
from .actions import ActionCompiler
from .codegen import (
    BUILTIN_FUNCS,
    BUILTIN_HIGHER,
    BUILTIN_VALUES,
    INLINE_SEQ,
    LOCAL_NAME,
    NOV,
    SIMPLE_BINARY,
    SIMPLE_PREFIX,
    TLCEXT,
    VAR_CODE,
    Cx,
    NeedsState,
    Py,
    apply_code,
    at_put_code,
    enum_fast,
    field_code,
    indent,
    name_of,
    node_name,
    tlc_get,
)
from .errors import TLAError
from .expressions import CONJ, ExpressionCompiler
from .frontend import UNIMPLEMENTED, canonical_op, pos
from .memo import BlockMemo, LetMemo, inline_single_memos, parent_shortcut
from .scope import (
    ArgB,
    BuiltinB,
    ConstB,
    DefB,
    InstB,
    LambdaB,
    LazyRefB,
    LocalB,
    OpRefB,
    ParamInstB,
    VarB,
    instance_binding,
)
from .values import FnDict

FRESH_SUFFIX = re.compile(r"_(\d+)$")
FIELD_KEY = re.compile(r"'[A-Za-z_][A-Za-z0-9_]{0,30}'$")
__all__ = ["Compiler", "NeedsState", "name_of", "BUILTIN_FUNCS", "BUILTIN_HIGHER",
           "BUILTIN_VALUES", "TLCEXT"]


class ConstKey(str):
    """A hoisted key that is an injected constant, written as its name (the text held
    starts with a space, so it never equals a record field's name)."""

    def __new__(cls, name):
        return str.__new__(cls, " " + name)

    def __repr__(self):
        return self[1:]


def op_key(ref):
    """What identifies an operator argument: the definition or LAMBDA it stands for."""
    target = ref
    while isinstance(target, OpRefB):
        target = target.target
    node = getattr(target, "node", None)
    return (id(node), id(getattr(target, "env", None))) if node is not None else id(target)


class Compiler(ActionCompiler, ExpressionCompiler, LetMemo, BlockMemo):
    """Owns the generated code's global namespace and compiles units into it."""

    def __init__(self, var_names):
        self.var_names = var_names
        self.loader = None  # set by Model: LET-bound INSTANCEs load modules through it
        self.ns = {"_rt": rt, "_FnDict": FnDict, "_eq": rt.eq, "_isin": rt.isin, "_ap": rt.ap,
                   "_enum": enum_fast, "_TLAError": TLAError, "TLCGet": None}
        self.counter = 0
        self.sources = {}  # name -> source of every function built (effect_free reads it)
        self.const_cache = {}
        self.rec_ops = {}
        self.pure_recs = set()  # recursive operators whose calls are memoised
        self.inline_depth = 0
        self.tlc_level = [0]
        self.keepalive = []
        self.parts = {}  # (definition, selectors) -> its part, a definition (select_part)
        self.places = {}  # (path, line, column) -> its name in ns (place)
        self.rec_params = []  # the parameters of each recursive operator being compiled
        self.ordered = {}  # code of a constant set -> its elements in TLC order (in_tlc_order)
        self.fold_cache = {}
        self.literals = {}  # literal_key of a folded constant value -> its name (literal)
        self.int_codes = set()  # generated codes known to give an int (expressions.py)
        self.hoists = []
        self.unroll_factor = 1
        self.frames = []  # the binders whose body is being compiled (memo.py)
        self.const_bound = set()  # locals that range over constant values (memo.py)
        self.value_bound = set()  # locals that range over the elements of a set (memo.py)
        self.bound_in = {}  # local -> the name of the set it ranges over (`x \\in S` is TRUE)
        # one stored object per distinct value of each variable, by name (bfs.sharer,
        # memo.next_memo); var_names is the model's list, filled as variables are declared
        self.value_pools = {}
        self.memo_room = [rt.STATE_MEMO_ROOM]  # shared by its memos of state values
        self.own_var_names = var_names
        self.var_memos = {}  # canonical code -> name of its memo (memo.var_memo)
        self.conjunct_memos = {}  # canonical code -> its function and dict (conjunct_memo)
        self.ns["_NOV"] = NOV
        for fname in dir(rt):
            if not fname.startswith("_"):
                self.ns["_rt_" + fname] = getattr(rt, fname)
        self.tlc_stats = {}  # the run's counts, given to TLCGet once it has ended
        self.ns["_rt_tlcget"] = partial(tlc_get, stats=self.tlc_stats)
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

    def place(self, node, env):
        """The code of node's position (path, line, column), for a runtime error: one name
        per position (a literal tuple repeated through inlined definitions made up a fifth
        of the code). Named outside the fresh-name pattern, so that two compilations of
        one definition still read alike to the memos (memo.FRESH)."""
        where = pos(node, env.get(" path", "?"))
        name = self.places.get(where)
        if name is None:
            name = self.places[where] = f"Wh{len(self.places)}"
            self.ns[name] = where
        return name

    def err(self, msg, node, env):
        return TLAError(msg, pos(node, env.get(" path", "?")))

    def build(self, src, name):
        src = inline_single_memos(src)
        try:
            code = compile(src.replace("_rt.", "_rt_"), f"<tla:{name}>", "exec")
        except SyntaxError as exc:  # a bug in the generator, reported plainly
            raise TLAError(f"internal code generation error in {name}: {exc}") from None
        exec(code, self.ns)
        self.sources[name] = src
        return self.ns[name]

    def effect_free(self, fn, impure=None):
        """Does the compiled unit fn (and every unit it calls) read nothing but its
        arguments: no TLCGet or level, no random choice, no printing or files (nor
        anything else `impure` finds)? Its result is then a function of the state alone."""
        impure = impure or IMPURE
        todo, done = [fn.__name__], set()
        while todo:
            name = todo.pop()
            if name in done:
                continue
            done.add(name)
            src = self.sources.get(name)
            if src is None or impure.search(src):
                return False
            todo.extend(n for n in set(NAMES.findall(src)) if n in self.sources)
        return True

    def unpack(self, hoist=True):
        n = len(self.var_names)
        if not n:
            return []
        names = ", ".join(f"c_{i}" for i in range(n))
        return [f"{names}{',' if n == 1 else ''} = s"]

    def unit(self, fname, params, compile_body, head, hoist=True, emit_line=None):
        """Build `def fname(params)`: head lines, then the compiled body.

        The body is compiled with applications `v[k]` of state variables to literal
        keys hoisted into locals (unless not hoist), guarded by one test that each
        such v is a long enough tuple (or dict); when the test fails a plain version
        of the unit runs instead, compiled on its first call (most runs never make one).
        emit_line: the unit emits successors so; its attribute `with_branch_memos()`
        then builds the same unit with its branches remembered (memo.block_memos), which
        a long search switches to (bfs.BRANCH_MEMOS_AFTER; a short one never pays for it).
        """
        self.hoists.append({} if hoist else None)
        try:
            with self.frame_barrier():
                lines = self.memo_body(compile_body, params)
        finally:
            found = self.hoists.pop()
        if callable(params):  # known once the body is compiled (ex_enabled)
            params = params()
        prologue = []
        if found:
            slow = fname + "_plain"
            self.ns[slow] = self.plain_unit(slow, params, compile_body, head)
            prologue = hoist_prologue(found, f"return {slow}({params})")
        src = "\n".join([f"def {fname}({params}):"] + indent(head + prologue + lines))
        fn = self.build(src, fname)
        if emit_line:
            built = []  # built once, whichever search asks first

            def with_branch_memos():
                if not built:
                    remembered = self.block_memos(lines, found, emit_line)
                    name = fname + "_branches"
                    built.append(fn if remembered == lines else self.build("\n".join(
                        [f"def {name}({params}):"] + indent(head + prologue + remembered)),
                        name))
                return built[0]
            fn.with_branch_memos = with_branch_memos
        return fn

    def plain_unit(self, slow, params, compile_body, head):
        """A stand-in for the unit without hoisting: compiles it on its first call, then
        puts it in its own place and calls it."""
        def compile_then_call(*args):
            self.hoists.append(None)
            try:
                with self.frame_barrier():
                    lines = self.memo_body(compile_body, params)
            finally:
                self.hoists.pop()
            fn = self.build("\n".join([f"def {slow}({params}):"] + indent(head + lines)), slow)
            self.ns[slow] = fn
            return fn(*args)
        return compile_then_call

    def at_put_code(self, f, key, value):
        """[f EXCEPT ![key] = value]; a hoisted state variable read at key needs no length
        test when it is a tuple (hoist_prologue made sure)."""
        found = self.hoists[-1] if self.hoists else None
        if found is not None and VAR_CODE.match(f) and key.isdigit() and 0 < int(key) < 64:
            k = int(key)
            found.setdefault((int(f[2:]), k), f"p_{f[2:]}_{k}")
            head = f"{f}[:{k - 1}] + " if k > 1 else ""
            return f"({head}({value},) + {f}[{k}:] if {f}.__class__ is tuple " \
                   f"else _rt.at_put({f}, {key}, {value}))"
        return at_put_code(f, key, value)

    def apply_code(self, f, key):
        """f[key], with the common tuple case inlined (and hoisted for state variables)."""
        found = self.hoists[-1] if self.hoists else None
        if found is not None and VAR_CODE.match(f) and key.isdigit() and int(key) < 64:
            slot = (int(f[2:]), int(key))
            return found.setdefault(slot, f"p_{slot[0]}_{slot[1]}")
        if found is not None and VAR_CODE.match(f) and FIELD_KEY.match(key):
            slot = (int(f[2:]), key[1:-1])  # a record field of a state variable
            return found.setdefault(slot, f"p_{slot[0]}_{len(found)}_{slot[1]}")
        if key.startswith("K") and key in self.ns and self.ns[key].__class__ is not int:
            # a constant key that is no number (a model value, a string...): f is a
            # function stored as a dict, looked up directly
            if found is not None and VAR_CODE.match(f):
                slot = (int(f[2:]), ConstKey(key))
                return found.setdefault(slot, f"p_{slot[0]}_{len(found)}_k")
            if f.isidentifier():
                return field_code(f, key)
        return apply_code(f, key)

    # --- units ------------------------------------------------------------
    def state_function(self, node, env, what="expression", remembered=False):
        """def f(s): return <node>  (a state predicate or state function); remembered:
        by the identities of the values of the variables it reads (memo.var_memo)."""
        fname = self.fresh("state_" + what)

        def body():
            cx = Cx("state")
            code = self.ex(node, env, cx)
            return [f"return {self.var_memo(code, cx, True) if remembered else code}"]
        # remembered by the variables themselves: no part of one hoisted
        return self.unit(fname, "s", body, self.unpack(), hoist=not remembered)

    def conjunction_function(self, node, env, what="invariants"):
        """def f(p, s): return <node>, a state predicate of s, a successor of a state p that
        satisfies it: each conjunct whose variables are all p's own objects is TRUE at once
        (memo.parent_shortcut); each that reads one variable is remembered as TRUE per value
        of it (memo.conjunct_memo): a type invariant's `msgs \\in SUBSET Message` is decided
        once per distinct value of msgs, not once per state."""
        fname = self.fresh("state_" + what)
        n = len(self.var_names)

        def body():
            cx = Cx("state")
            codes = [parent_shortcut(self.conjunct_memo(self.bool_code(part, part_env, cx,
                                                                       CONJ), cx), n)
                     for part, part_env in self.conjuncts(node, env)]
            return [f"return ({' and '.join(codes)})"]
        olds = [f"{''.join(f'q_{i}, ' for i in range(n))}= p"] if n else []
        return self.unit(fname, "p, s", body, self.unpack() + olds)

    def conjuncts(self, node, env, depth=0):
        """[(node, env)]: the conjuncts of node, through parentheses, /\\ (infix or a
        bulleted list) and definitions without parameters, in their order."""
        kind = name_of(node)
        if kind == "Parentheses":
            return self.conjuncts(node.expression, env, depth)
        if kind == "VerticalList" and node.operator == "/\\":
            return [c for item in node.arguments
                    for c in self.conjuncts(item.expression, env, depth)]
        if kind == "OperatorApplication" and depth < 50:
            args = node.arguments or []
            if canonical_op(node.operator) == "/\\" and len(args) == 2 and not node.nonfix:
                return self.conjuncts(args[0], env, depth) + self.conjuncts(args[1], env, depth)
            b = env.get(node.operator)
            if isinstance(b, DefB) and not args and not b.params and not b.recursive \
                    and not b.node.function and name_of(b.node.definiens) != "Instance":
                return self.conjuncts(b.node.definiens, self.param_env(b, [], env), depth + 1)
        return [(node, env)]

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

    def constant_value(self, node, env, pure=False):
        """Evaluate a constant-level expression now (NeedsState if it is not, or, when
        pure, if it prints, draws at random or reads or writes files)."""
        self.hoists.append(None)
        try:
            with self.frame_barrier():
                code = self.ex(node, env, Cx("const"))
        finally:
            self.hoists.pop()
        if pure and IMPURE.search(code):
            raise NeedsState()
        fname = self.fresh("const")
        fn = self.build(f"def {fname}():\n    return {code}", fname)
        return fn()

    def action_function(self, node, env, mode, labels=False, what="next", partial=None):
        """def f(s, emit): enumerate successors (mode "action") or initial states ("init").

        With partial=[] (a sub-action under fairness), variables the action leaves
        unassigned keep their current value and partial gets True appended."""
        fname = self.fresh(what)
        n = len(self.var_names)

        def final(cx):
            missing = [self.var_names[i] for i in range(n) if i not in cx.assigned]
            if missing and partial is not None:
                partial.append(True)
                tup = "(" + "".join(f"n_{i}, " if i in cx.assigned else f"c_{i}, "
                                    for i in range(n)) + ")"
                return [f"emit({tup})"]
            if missing:
                msg = (f"the {'initial' if mode == 'init' else 'successor'} state is not "
                       f"completely specified: no value for {', '.join(missing)}")
                return [f"_rt.fail({msg!r})"]
            tup = "(" + "".join(f"n_{i}, " for i in range(n)) + ")"
            if labels:
                return [f"emit({tup}, {cx.label or 'Next'!r})"]
            return [f"emit({tup})"]

        head = self.unpack() if mode != "init" else ["s = None"]
        plain = mode == "action" and not labels and partial is None
        emit_line = f"emit(({''.join(f'n_{i}, ' for i in range(n))}))" if plain and n else None
        return self.unit(fname, "s, emit",
                         lambda: self.act(node, env, Cx(mode), final) + ["return None"], head,
                         emit_line=emit_line)

    # --- name resolution ----------------------------------------------------
    def lookup(self, name, env, node):
        b = env.get(name)
        if b is not None:
            return b
        if name in BUILTIN_FUNCS or name in BUILTIN_HIGHER or name in BUILTIN_VALUES \
                or name in ("TLCGet", "JavaTime", "TLCSet", "Any") or name in TLCEXT:
            return BuiltinB(name)
        if is_operator_symbol(name):  # `+` passed as an operator argument: F(+, 0)
            return BuiltinB(name)
        raise self.err(f"unknown operator {name}{self.unimplemented_note()}", node, env)

    def unimplemented_note(self):
        """For an unknown operator: a note naming the community modules extended anywhere
        (an instanced module included) whose operators are not implemented here."""
        if self.loader is None:
            return ""
        from .semantic import visible_standard_modules  # semantic imports this module
        unsupported = sorted(visible_standard_modules(self.loader) & UNIMPLEMENTED)
        if not unsupported:
            return ""
        return (f" (the spec extends {', '.join(unsupported)}, whose operators are not "
                "supported beyond TLC's)")

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
        if kind == "SubexpressionReference":  # I!Op passed as an operator argument
            b, args, _ = self.resolve_subexpr(arg, env)
            if not args:
                return OpRefB(b)
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
            if name_of(d) == "OperatorDefinition" and name_of(d.definiens) == "Instance":
                env[d.name] = instance_binding(self.loader, d.definiens, env, env.get(" path"))
            elif name_of(d) == "OperatorDefinition":
                env[d.name] = DefB(d, env, local=True)
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
        if isinstance(binding, (InstB, ParamInstB)):
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
                start = self.counter
                return self.memo_use(binding, self.inline(binding, args, env, node, cx), cx,
                                     start)
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
        try:  # a LET definition is evaluated where it is used (TLC evaluates only the
            # module's constant definitions once, at the start)
            value = self.constant_value(binding.node.definiens, binding.env,
                                        pure=binding.local)
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
                with self.frame_barrier():
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
        sets, targets, pending = [], [], []
        for d in fn.declaration:
            if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
                target, set_node = d.arguments
                code = self.ex(set_node, binding.env, cx)
                for t in pending + [target]:
                    targets.append(t)
                    sets.append(code)
                pending = []
            else:
                pending.append(d)
        env = dict(binding.env)
        env[name] = LocalB(self_name)
        pys, patterns = [], []
        for t in targets:  # a name, or a tuple pattern <<a, b>>
            items = t.items if name_of(t) == "Tuple" else [t]
            names = []
            for item in items:
                py = self.fresh("b_" + item.operator)
                env[item.operator] = LocalB(py)
                names.append(py)
            pys += names
            patterns.append(f"({', '.join(names)},)" if name_of(t) == "Tuple" else names[0])
        body = self.ex(fn.value, env, cx.but(locals=cx.locals + (self_name,) + tuple(pys)))
        dom = sets[0] if len(sets) == 1 else "_rt.cross(" + ", ".join(sets) + ")"
        if len(patterns) == 1 and patterns[0] == pys[0]:
            lam = f"lambda {self_name}, {pys[0]}: {body}"
        else:
            karg = self.fresh("key")
            pattern = patterns[0] if len(patterns) == 1 else f"({', '.join(patterns)},)"
            lam = f"lambda {self_name}, {karg}: [{body} for {pattern} in ({karg},)][0]"
        return f"_rt.recfn({dom}, {lam})"

    def recursive_call(self, binding, args, env, node, cx):
        params = binding.params
        if len(params) != len(args):
            raise self.err(f"operator {node_name(node)} expects {len(params)} arguments, "
                           f"got {len(args)}", node, env)
        # operator parameters are fixed per call site: one Python function for each
        # combination of operators passed (recursive calls pass the same ones on)
        fixed = {p.operator: self.op_ref(a, env) for p, a in zip(params, args, strict=True)
                 if getattr(p, "arguments", None)}
        key = (id(binding),) + tuple(op_key(r) for r in fixed.values())
        entry = self.rec_ops.get(key)
        if entry is None:
            fname = self.fresh("rec_" + binding.node.name)
            entry = self.rec_ops[key] = [fname, False, None]
            self.keepalive.append((binding, fixed))
            entry[1], entry[2] = self.define_recursive(binding, fname, cx.locals, fixed)
        fname, needs_state, free = entry
        codes = [self.ex(a, env, cx) for p, a in zip(params, args, strict=True)
                 if not getattr(p, "arguments", None)]
        # free: locals of the enclosing expression a LET-defined operator refers to,
        # passed on as extra arguments (None while its own body is being compiled)
        codes += [f"*{fname}_FREE"] if free is None else free
        if cx.mode == "const":
            if needs_state:
                raise NeedsState()
            return f"{fname}(None, {', '.join(codes)})"
        return f"{fname}(s, {', '.join(codes)})"

    def define_recursive(self, binding, fname, outer_locals=(), fixed=None):
        env = dict(binding.env)
        pys = []
        start = self.counter
        for p in binding.params:
            if getattr(p, "arguments", None):
                env[p.operator] = fixed[p.operator]
                continue
            py = self.fresh("p_" + p.operator)
            env[p.operator] = LocalB(py)
            pys.append(py)
        saved_frames, self.frames = self.frames, []
        try:
            self.hoists.append(None)
            self.rec_params.append(frozenset(pys))
            self.no_unit_memos()
            body = self.ex(binding.node.definiens, env,
                           Cx("const", locals_=tuple(pys) + tuple(outer_locals)))
            needs_state = False
        except NeedsState:
            body = self.ex(binding.node.definiens, env,
                           Cx("state", locals_=tuple(pys) + tuple(outer_locals)))
            needs_state = True
        finally:
            self.hoists.pop()
            self.rec_params.pop()
            self.memo_units.pop()
            self.frames = saved_frames
        free = sorted({m for m in LOCAL_NAME.findall(body)
                       if FRESH_SUFFIX.search(m) and int(FRESH_SUFFIX.search(m).group(1)) <= start
                       and not m.startswith(("rec_", "enabled_", "c_", "n_", "tlc_print"))})
        body = body.replace(f"*{fname}_FREE", ", ".join(free))  # f(a, ) is a valid call
        if not free:  # calls from a mutually recursive operator compiled meanwhile
            self.ns[f"{fname}_FREE"] = ()
        head = ["if s is not None:"] + indent(self.unpack() or ["pass"])
        pure = not needs_state and bool(pys + free) and self.pure_body(body, fname)
        raw = f"{fname}_raw" if pure else fname
        src = "\n".join([f"def {raw}(s, {', '.join(pys + free)}):"]
                        + indent(head + [f"return {body}"]))
        self.build(src, raw)
        if pure:
            self.build(memo_wrapper(fname, pys + free), fname)
            self.pure_recs.add(fname)
        return needs_state, free

    def pure_body(self, body, fname):
        """A constant-level body without effects (printing, random choice, TLCGet, files)
        that calls no recursive operator other than itself or pure ones."""
        if IMPURE.search(body):
            return False
        return all(r == fname or r in self.pure_recs for r in REC_CALL.findall(body))

    def apply_tlcext(self, name, args, env, node, cx):
        """TLCExt: TLCNoOp and TLCCache are their first argument, AssertEq is equality;
        the others (traces, TLC's registers and fingerprints) are refused where they are
        evaluated, not where they are written."""
        if len(args) != TLCEXT[name]:
            raise self.err(f"{name} expects {TLCEXT[name]} arguments, got {len(args)}", node, env)
        if name in ("TLCNoOp", "TLCCache"):
            return self.ex(args[0], env, cx)
        if name == "AssertEq":
            return f"_eq({self.ex(args[0], env, cx)}, {self.ex(args[1], env, cx)})"
        where = "{}:{}:{}".format(*pos(node, env.get(" path", "?")))
        return f"_rt.fail({where + f': {name} (TLCExt) is not supported'!r})"

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
                code = INLINE_SEQ[name].format(*codes)
                return self.int_result(code) if name == "Len" else code
            return f"{fn}({', '.join(codes)})"
        if name in BUILTIN_HIGHER:
            if len(args) != 2:
                raise self.err(f"{name} expects 2 arguments", node, env)
            fn, at, arity = BUILTIN_HIGHER[name]
            value = self.ex(args[1 - at], env, cx)
            test = self.op_ref(args[at], env)
            pys = [self.fresh("x") for _ in range(arity)]
            fake_args = [Py(p) for p in pys]
            env2 = dict(env)
            for p in pys:
                env2[p] = LocalB(p)
            call = self.apply(test, fake_args, env2, node, cx.but(locals=cx.locals + tuple(pys)))
            return f"{fn}({value}, lambda {', '.join(pys)}: {call})"
        if name == "TLCGet":
            if len(args) != 1:
                raise self.err("TLCGet expects 1 argument", node, env)
            if cx.mode == "const":
                raise NeedsState()
            return f"_rt_tlcget({self.ex(args[0], env, cx)}, _tlc_level)"
        if name == "JavaTime":
            return "0"
        if name in TLCEXT:
            return self.apply_tlcext(name, args, env, node, cx)
        if name == "TLCSet":
            return "True"
        if is_operator_symbol(name):
            return self.apply_symbol(name, args, env, node, cx)
        raise self.err(f"unsupported builtin {name}", node, env)

    def apply_symbol(self, name, args, env, node, cx):
        """Op(a, b) where the operator argument Op is a standard infix or prefix symbol
        (`+`, `\\cup`, `-.`): the symbol applied to a and b, as if written in place."""
        op = canonical_op(name)
        fits = op in SIMPLE_BINARY if len(args) == 2 else op in SIMPLE_PREFIX \
            if len(args) == 1 else False
        if not fits:
            raise self.err(f"operator {name} cannot be applied to {len(args)} arguments",
                           node, env)
        here = node._replace(operator=op, arguments=list(args), nonfix=None) \
            if name_of(node) == "OperatorApplication" else node
        return self.ex_builtin_op(op, here, list(args), env, cx)


def is_operator_symbol(name):
    """A standard module's infix or prefix operator symbol, named as an argument."""
    return not name.isidentifier() and (canonical_op(name) in SIMPLE_BINARY
                                        or canonical_op(name) in SIMPLE_PREFIX)


IMPURE = re.compile(r"_rt\.(tlc_print|random|fail|\w*json)|_rt_tlcget|_tlc_level")
REC_CALL = re.compile(r"\b(rec_\w+?)\(")
NAMES = re.compile(r"\b[A-Za-z_]\w*\b")


def hoist_prologue(found, fallback):
    """The lines that hoist the parts `found` ({(i, key): name}) of state variables c_i
    into their names, each variable tested first (`fallback` when it lacks a part). A
    variable read at numbers 1..k is a tuple of length k or more, or a function held as
    a dict with those numbers (a domain such as 0..N-1); one read at 0 (no tuple has that
    part), at fields or at constant keys is a dict holding them."""
    numbers, keys = {}, {}
    for i, k in found:
        (numbers if k.__class__ is int else keys).setdefault(i, []).append(k)
    # no tuple has a part 0, nor any field: such a variable is tested as a dict only
    for i in [i for i, ks in numbers.items() if i in keys or 0 in ks]:
        keys[i] = keys.get(i, []) + numbers.pop(i)
    either = set(numbers)
    tests = [f"c_{i}.__class__ is not _FnDict" + "".join(
        f" or {k!r} not in c_{i}" for k in sorted(ks, key=repr))
        for i, ks in sorted(keys.items())]
    lines = [f"if {' or '.join(tests)}:", f"    {fallback}"] if tests else []
    by_name = sorted(found.items(), key=lambda e: e[1])
    lines += [f"{name} = c_{i}[{k!r}]" for (i, k), name in by_name if i in keys]
    for i in sorted(either):
        mine = [(k, name) for (j, k), name in by_name if j == i]
        lines += [f"if c_{i}.__class__ is tuple and len(c_{i}) >= {max(numbers[i])}:"]
        lines += [f"    {name} = c_{i}[{k - 1}]" for k, name in mine]
        lines += [f"elif c_{i}.__class__ is _FnDict and " +
                  " and ".join(f"{k} in c_{i}" for k in sorted(numbers[i])) + ":"]
        lines += [f"    {name} = c_{i}[{k}]" for k, name in mine]
        lines += ["else:", f"    {fallback}"]
    return lines


MEMO_MAX = 100000


def memo_wrapper(fname, params):
    """A constant-level recursive operator remembers its results by argument values
    (forgotten all at once beyond MEMO_MAX; arguments that cannot be hashed skip it).
    Each entry keeps its cost: the number of misses its computation took (itself and
    the calls below it). A hit adds that cost to `saved`. When the memo fills up having
    saved fewer than MEMO_MAX // 2 computations since it was last emptied (arguments
    that rarely repeat, such as a function built anew in every state), keying every
    call costs more than it saves: the operator's name is rebound to the raw function,
    so later calls, the recursive ones included, go straight to it."""
    args = ", ".join(params)
    return "\n".join([
        f"def {fname}(s, {args}):",
        f"    global {fname}_misses, {fname}_saved",
        f"    key = ({args},)",
        "    try:",
        f"        value, cost = {fname}_memo[key]",
        "    except KeyError:",
        "        pass",
        "    except TypeError:",
        f"        return {fname}_raw(s, {args})",
        "    else:",
        f"        {fname}_saved += cost",
        "        return value",
        f"    before = {fname}_misses = {fname}_misses + 1",
        f"    value = {fname}_raw(s, {args})",
        f"    if len({fname}_memo) >= {MEMO_MAX}:",
        f"        {fname}_memo.clear()",
        f"        if {fname}_saved < {MEMO_MAX // 2}:",
        f"            globals()[{fname!r}] = {fname}_raw",
        f"        {fname}_saved = 0",
        f"    {fname}_memo[key] = (value, {fname}_misses - before + 1)",
        "    return value",
        f"{fname}_memo = {{}}",
        f"{fname}_misses = {fname}_saved = 0"])
