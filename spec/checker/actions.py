"""Compilation of actions into nested Python statements (continuation-passing style).

`act(node, env, cx, k)` returns the lines that enumerate every way node can
hold, calling the continuation `k(cx)` (which generates the rest of the code)
at each point where it does. `x' = e` assigns n_x the first time and compares
afterwards, `x' \\in S` and `\\E` loop, `\\/` emits each branch in turn, IF and
CASE branch, operator calls are inlined; anything else becomes a guard.
The set of primed variables already assigned is known statically in cx.
"""

from .codegen import (
    SIMPLE_BINARY,
    SIMPLE_PREFIX,
    TEMPORAL,
    guarded_block,
    indent,
    name_of,
    node_name,
)
from .errors import TLAError
from .frontend import canonical_op, pos
from .scope import ArgB, ConstB, DefB, LambdaB, LazyRefB, LocalB, OpRefB, VarB


class ActionCompiler:
    """Mixin of Compiler: the statement (action) side of the generator."""

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
            c = self.bool_code(node.predicate, env, cx, "the condition of an IF")
            return ([f"if {c}:"] + indent(self.act(node.then, env, cx, k) or ["pass"])
                    + ["else:"] + indent(self.act(node.else_, env, cx, k) or ["pass"]))
        if kind == "Cases":
            return self.act_case(node, env, cx, k)
        if kind == "Let":
            env2 = self.let_env(node, env)
            memos = self.let_memos(node, env2, cx, statement=True)
            lines = self.act(node.expression, env2, self.memo_locals(memos, cx), k)
            return [f"{m.name} = []" for m in memos if m.used] + lines
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
        code = self.bool_code(node, env, cx, "a formula in an action")
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
            c = self.bool_code(item.predicate, env, cx, "a guard condition of a CASE")
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
                value = self.next_memo(self.ex(args[1], env, cx), cx, target)
                return [f"n_{target} = {value}"] + k(cx.but(assigned=cx.assigned | {target}))
        if op == "\\in" and len(args) == 2:
            target = self.assignable(args[0], env, cx)
            if target is not None and target not in cx.assigned:
                s = self.ex(args[1], env, cx)
                return [f"for n_{target} in {self.in_tlc_order(s) or f'_enum({s})'}:"] + indent(
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
        """UNCHANGED e: each variable of e keeps its value; any other part p of e (an
        expression, e.g. one substituted through INSTANCE) is tested as p' = p."""
        parts = self.unchanged_parts(node, env)
        exprs = [p for p in parts if not isinstance(p, int)]

        def compare(cx2):
            tests = [self.unchanged_test(n, e, cx2) for n, e in exprs]
            return guarded_block(" and ".join(tests), k(cx2)) if tests else k(cx2)
        out_k = compare
        for index in reversed([p for p in parts if isinstance(p, int)]):
            out_k = self.make_unchanged_k(index, out_k)
        return out_k(cx)

    def unchanged_test(self, node, env, cx):
        return f"_eq({self.ex(node, env, cx.but(primed=True))}, {self.ex(node, env, cx)})"

    def make_unchanged_k(self, index, k):
        def step(cx):
            if index in cx.assigned:
                return [f"if n_{index} == c_{index}:"] + indent(k(cx) or ["pass"])
            return [f"n_{index} = c_{index}"] + k(cx.but(assigned=cx.assigned | {index}))
        return step

    def unchanged_parts(self, node, env):
        """Variable indices and (node, env) pairs for the other parts of an UNCHANGED."""
        kind = name_of(node)
        if kind == "Parentheses":
            return self.unchanged_parts(node.expression, env)
        if kind == "Tuple":
            out = []
            for item in node.items:
                out += self.unchanged_parts(item, env)
            return out
        if kind == "OperatorApplication" and not node.arguments:
            b = self.lookup(node.operator, env, node)
            if isinstance(b, VarB):
                return [b.index]
            if isinstance(b, DefB) and not b.params and not b.node.function:
                return self.unchanged_parts(b.node.definiens, b.env)
            if isinstance(b, ArgB):
                return self.unchanged_parts(b.node, b.env)
            if isinstance(b, (ConstB, LocalB)):
                return []
        return [(node, env)]

    def assignable(self, node, env, cx):
        """The variable index if node is `x'` (action mode) or `x` (init mode), also when
        node is an operator parameter bound to such an expression (`Set(x, x')`)."""
        node, env = self.through_args(node, env)
        kind = name_of(node)
        if cx.mode == "action" and kind == "OperatorApplication" and node.operator == "'":
            inner, ienv = self.through_args(node.arguments[0], env)
            if name_of(inner) == "OperatorApplication" and not inner.arguments:
                b = self.lookup(inner.operator, ienv, inner)
                if isinstance(b, VarB):
                    return b.index
        if cx.mode == "init" and kind == "OperatorApplication" and not node.arguments:
            b = self.lookup(node.operator, env, node)
            if isinstance(b, VarB):
                return b.index
        return None

    def through_args(self, node, env):
        """Follow operator parameters (passed by name) and definitions without parameters
        (`LET zz == xx`, or `I!F` of an instance) and through LET to the expression they
        stand for, as TLC does to find the variable of `zz \\in S`."""
        for _ in range(1000):  # a definition that names itself is reported elsewhere
            kind = name_of(node)
            if kind == "Parentheses":
                node = node.expression
            elif kind == "Let":  # (LET y == a' IN y) = 0
                node, env = node.expression, self.let_env(node, env)
            elif kind == "SubexpressionReference":
                try:
                    b, args, _ = self.resolve_subexpr(node, env)
                except TLAError:  # reported where the reference is compiled
                    break
                if args or not isinstance(b, DefB) or b.params or b.node.function:
                    break
                node, env = b.node.definiens, b.env
            elif kind == "OperatorApplication" and not node.arguments:
                b = env.get(node.operator)
                if isinstance(b, LazyRefB):
                    b = self.lookup(b.name, b.env, node)
                if isinstance(b, ArgB):
                    node, env = b.node, b.env
                elif isinstance(b, DefB) and not b.params and not b.node.function \
                        and not getattr(b, "recursive", False):
                    node, env = b.node.definiens, b.env
                else:
                    break
            else:
                break
        return node, env
