"""Compilation of TLA+ expressions into Python expressions.

`ex(node, env, cx)` returns Python source; one `ex_<NodeKind>` method per
syntax-tree node kind. Bound variables become fresh locals of generator
expressions, comprehensions or lambdas; quantifiers over small constant sets
are unrolled; any generated expression that mentions no local name is
evaluated once at compile time and replaced by its value.
"""
import ast
import contextlib
import re

from tla import _ast as tla_ast

from .codegen import (
    BOOLEAN_SET,
    FOLDABLE,
    SIMPLE_BINARY,
    SIMPLE_CODE,
    SIMPLE_PREFIX,
    TEMPORAL,
    UNROLL_BUDGET,
    Cx,
    class_code,
    env_for_sets,
    flatten_cross,
    has_free_local,
    local_scope,
    name_of,
)
from .errors import TLAError
from .frontend import canonical_op, pos
from .memo import MEMO_USE
from .scope import ArgB, ConstB, DefB, InstB, LocalB, ParamInstB
from .values import STRING, FnDict, FnSet, LazySet, ModelValue, RecSet, SubsetSet, enum, sort_key


class ExpressionCompiler:
    """Mixin of Compiler: the expression side of the generator."""

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
        if kind in FOLDABLE:
            if cx.mode != "const":
                code = self.var_memo(self.fold_code(code), cx)
                memo = self.unit_memo(code, cx)
                if memo is not code:
                    return memo
                code = self.bound_memo(self.const_memo(code, cx), cx)
            return self.loop_memo(self.param_memo(code), cx)
        return code

    def fold_code(self, code):
        """Evaluate a generated expression that mentions no local name once, now."""
        if code in self.fold_cache:
            return self.fold_cache[code]
        result = code
        if not has_free_local(code) and not code.isidentifier():
            try:
                value = eval(compile(code.replace("_rt.", "_rt_"), "<fold>", "eval"), self.ns)
                result = self.literal(value)
            except Exception:  # errors stay where TLC would raise them: at run time
                result = code
        self.fold_cache[code] = result
        return result

    def ex_Py(self, node, env, cx):
        return node.pyname

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
        if len(items) == 1:  # one element: nothing for mkset to check
            return f"frozenset(({items[0]},))"
        return "_rt.mkset((" + "".join(i + ", " for i in items) + "))"

    def ex_VerticalList(self, node, env, cx):
        joiner = " and " if node.operator == "/\\" else " or "
        what = CONJ if node.operator == "/\\" else DISJ
        return "(" + joiner.join(self.bool_code(it.expression, env, cx, what)
                                 for it in node.arguments) + ")"

    def ex_VerticalItem(self, node, env, cx):
        return self.ex(node.expression, env, cx)

    def ex_If(self, node, env, cx):
        c = self.bool_code(node.predicate, env, cx, IF_COND)
        t, e = (self.ex(n, env, cx) for n in (node.then, node.else_))
        return f"({t} if {c} else {e})"

    def ex_Cases(self, node, env, cx):
        if node.other is not None:
            out = self.ex(node.other, env, cx)
        else:
            where = "{}:{}:{}".format(*pos(node, env.get(" path", "?")))
            out = f"_rt.case_fail({where!r})"
        for item in reversed(node.cases):
            c = self.bool_code(item.predicate, env, cx, CASE_GUARD)
            e = self.ex(item.expression, env, cx)
            out = f"({e} if {c} else {out})"
        return out

    def ex_Let(self, node, env, cx):
        env2 = self.let_env(node, env)
        memos = self.let_memos(node, env2, cx, statement=False)
        return self.memo_wrap(memos, self.ex(node.expression, env2, self.memo_locals(memos, cx)))

    def ex_Field(self, node, env, cx):
        record, renv = self.see_through(node.expression, env, zero_arity=False)
        if name_of(record) == "Record":  # [a |-> e, ...].a is e: no record built
            for key, value in record.key_values:
                if key == node.name:
                    return self.ex(value, renv, cx)
        return self.apply_code(self.ex(node.expression, env, cx), repr(node.name))

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
        changes = [(self.except_keys(change, env, cx), change) for change in node.changes]
        i = 0
        while i < len(changes):
            keys, change = changes[i]
            j = i + 1
            while j < len(changes) and same_prefix(keys, changes[j][0]):
                j += 1
            if j - i > 1:  # clauses on one path: rt.except_many walks and copies it once
                lasts = []
                for keys, change in changes[i:j]:
                    at = self.fresh("at")
                    value = self.except_value(change, LocalB(at), env, cx, at)
                    lasts.append(f"({keys[-1]}, lambda {at}: {value})")
                code = f"_rt.except_many({code}, ({''.join(k + ', ' for k in keys[:-1])}), " \
                       f"({', '.join(lasts)},))"
                i = j
                continue
            at = self.fresh("at")
            simple = len(keys) == 1 and SIMPLE_CODE.match(code) and SIMPLE_CODE.match(keys[0])
            value = self.except_value(
                change, LocalB(self.apply_code(code, keys[0]) if simple else at), env, cx, at)
            if len(keys) == 1 and at not in value:
                code = self.at_put_code(code, keys[0], value)
            elif len(keys) == 2 and at not in value:
                code = f"_rt.at_put2({code}, {keys[0]}, {keys[1]}, {value})"
            else:
                code = f"_rt.except_({code}, ({', '.join(keys)},), lambda {at}: {value})"
            i += 1
        return code

    def except_keys(self, change, env, cx):
        """The code of each key of one EXCEPT clause's path."""
        keys = []
        for item in change.item:
            if isinstance(item, str):
                keys.append(repr(item))
            else:
                parts = [self.ex(a, env, cx) for a in item]
                keys.append(parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ",)")
        return keys

    def except_value(self, change, at_binding, env, cx, at):
        env2 = dict(env)
        env2["@"] = at_binding
        return self.ex(change.expression, env2, cx.but(locals=cx.locals + (at,)))

    def literal(self, value):
        """Python source for a constant value (a literal when possible)."""
        if value.__class__ in (int, bool, str):
            return repr(value) if not (value.__class__ is int and value < 0) else f"({value})"
        key = literal_key(value)
        if key is None:
            return self.inject(value, "f")
        name = self.literals.get(key)
        if name is None:  # one name per value: equal keys hoisted once (compiler.unit)
            name = self.literals[key] = self.inject(value, "f")
        return name

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
            items = [self.literal(v) for v in self.ns[self.in_tlc_order(code)]]
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

    def in_tlc_order(self, set_code):
        """For the code of a constant set: the name of a tuple of its elements in TLC's
        order (values.sort_key), so that a loop meets them as an unrolled quantifier does
        and as TLC does (which successor comes first decides the counts and the trace at a
        violation). None for any other set, iterated as it comes."""
        value = self.ns.get(set_code)
        if value.__class__ is not frozenset:
            return None
        name = self.ordered.get(set_code)
        if name is None:
            name = self.ordered[set_code] = self.inject(tuple(sorted(value, key=sort_key)), "o")
        return name

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
                constant = self.in_tlc_order(s)
                bounds = None if constant else interval_bounds(set_node)
                counted = None if bounds is None else "_rt.irange({}, {})".format(
                    *(self.ex(e, env_for_sets(env, pending), cx) for e in bounds))
                names = pending + [target]
                pending = []
                for t in names:
                    if name_of(t) == "Tuple":
                        tmp = self.fresh("tup")
                        pys = [self.fresh("b_" + i.operator) for i in t.items]
                        for py in pys:
                            self.note_const_bound(py, s)
                            self.value_bound.add(py)
                        headers.append(f"for {tmp} in {constant or f'_enum({s})'}")
                        headers.append(f"for ({', '.join(pys)},) in ({tmp},)")
                        for i, py in zip(t.items, pys, strict=False):
                            env[i.operator] = LocalB(py)
                        locals_ += tuple(pys) + (tmp,)
                    else:
                        py = self.fresh("b_" + t.operator)
                        self.note_const_bound(py, s)
                        self.value_bound.add(py)
                        if s.isidentifier():
                            self.bound_in[py] = s
                        it = constant or counted or f"_enum({s})"  # a..b: counted, not built
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
            what = f"the body of {node.quantifier}"
            with self.unrolling(unrolled):
                parts = [self.bool_code(node.predicate, e, cx, what) for e in unrolled]
            if not parts:
                return "True" if node.quantifier == "\\A" else "False"
            return "(" + joiner.join(parts) + ")"
        headers, env2, cx2 = self.bind_decls(node.declarations, env, cx)
        with self.binder(cx) as frame:
            body = self.bool_code(node.predicate, env2, cx2, f"the body of {node.quantifier}")
        fn = "all" if node.quantifier == "\\A" else "any"
        return self.framed(frame, f"{fn}({body} {' '.join(headers)})")

    def ex_SetSlice(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls([node.declaration], env, cx)
        target = node.declaration.arguments[0]
        if name_of(target) == "Tuple":
            elem = headers[0].split()[1]
        else:
            elem = env2[target.operator].pyname
        with self.binder(cx) as frame:
            body = self.bool_code(node.predicate, env2, cx2, FILTER_COND)
        eager = f"frozenset([{elem} {' '.join(headers)} if {body}])"
        set_code = self.ex(node.declaration.arguments[1], env, cx)
        value = self.ns.get(set_code)
        if name_of(target) != "Tuple" and isinstance(value, LazySet) and not value.finite:
            return self.framed(frame, f"_rt.filter_set({set_code}, lambda {elem}: {body})")
        if name_of(target) != "Tuple" and (isinstance(value, LazySet) and not small_set(value)
                                           or value is None and LAZY_SET_CODE.search(set_code)):
            # a set that may be SUBSET S or [S -> T] at run time: TLC keeps such a
            # filter lazy, so a constant definition of one is never enumerated for nothing
            return self.framed(frame, f"_rt.filtered({set_code}, lambda {elem}: {body})")
        return self.framed(frame, eager)

    def ex_SetComprehension(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls(node.declarations, env, cx)
        with self.binder(cx) as frame:
            body = self.ex(node.item, env2, cx2)
        return self.framed(frame, f"_rt.mkset([{body} {' '.join(headers)}])")

    def ex_Function(self, node, env, cx):
        headers, env2, cx2 = self.bind_decls(node.declaration, env, cx)
        key = self.decl_key(node.declaration, env2, headers)
        with self.binder(cx) as frame:
            body = self.ex(node.value, env2, cx2)
        if len(headers) == 1 and headers[0].startswith(f"for {key} in _rt.irange(1, "):
            # [i \\in 1..n |-> e] is a sequence: its values in order, no dict to normalise
            return self.framed(frame, f"tuple([{body} {headers[0]}])")
        return self.framed(frame, f"_rt.make_fn({{{key}: {body} {' '.join(headers)}}})")

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
            with self.binder(cx) as frame:
                body = self.bool_code(node.predicate, env2,
                                      cx.but(locals=cx.locals + tuple(pys)), CHOOSE_COND)
            pred = f"lambda {tmp}: [{body} for ({', '.join(pys)},) in ({tmp},)][0]"
        else:
            py = self.fresh("b_" + target.operator)
            env2[target.operator] = LocalB(py)
            with self.binder(cx) as frame:
                body = self.bool_code(node.predicate, env2, cx.but(locals=cx.locals + (py,)),
                                      CHOOSE_COND)
            pred = f"lambda {py}: {body}"
        if body == "True":  # CHOOSE x \\in S : TRUE is the least element in TLC's order
            return f"_rt.choose_least({s})"
        return self.framed(frame, f"_rt.choose({s}, {pred})")

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
        for i, item in enumerate(items[:-1]):
            name = item if isinstance(item, str) else item.operator
            b = self.lookup(name, cur_env, node)
            if isinstance(b, DefB) and not b.node.function and \
                    all(isinstance(x, str) or getattr(x, "operator", 0) is None
                        for x in items[i + 1:]):
                return self.select_part(b, getattr(item, "arguments", None) or [], env,
                                        items[i + 1:], node)
            if isinstance(b, ParamInstB):  # P(e1, e2)!Op: P's parameters bound to e1, e2
                b = b.instantiate(getattr(item, "arguments", None) or [], env)
            elif not isinstance(b, InstB):
                whole = reference_text(node)
                raise self.err(f"subexpression reference {whole} is not supported ({name} is "
                               f"not an instance: a part of a definition or theorem)", node, env)
            elif getattr(item, "arguments", None):
                raise self.err(f"instance {name} takes no arguments", node, env)
            cur_env = b.env
        last = items[-1]
        if isinstance(last, str):
            return self.lookup(last, cur_env, node), [], cur_env
        if name_of(last) != "OperatorApplication":
            raise self.err("unsupported subexpression reference", node, env)
        b = self.lookup(last.operator, cur_env, last)
        return b, last.arguments or [], cur_env

    def select_part(self, binding, args, env, selectors, node):
        """Op(args)!s1!s2...: the part of Op's body the selectors name (`:` the body
        itself, `n` the n-th item of a junction list, argument of an operator or part
        of an IF, `<<` and `>>` the two sides of an infix operator), as a definition
        of no arguments in the body's scope."""
        if len(args) != len(binding.params):
            raise self.err(f"operator {binding.node.name} expects {len(binding.params)} "
                           f"arguments, got {len(args)}", node, env)
        part, part_env = binding.node.definiens, self.param_env(binding, args, env)
        for sel in selectors:
            while name_of(part) == "Parentheses":
                part = part.expression
            kind = name_of(part)
            if sel == ":":
                continue
            if not isinstance(sel, str):  # !(e1, ..., en): the body, its bound names = e_i
                part, part_env = self.instantiate_body(part, part_env, sel.arguments or [],
                                                       env, node)
                continue
            if sel in ("<<", ">>"):
                sel = "1" if sel == "<<" else "2"
            parts = None
            if sel.isdigit():
                if kind == "VerticalList":
                    parts = [it.expression for it in part.arguments]
                elif kind == "OperatorApplication" and part.arguments:
                    parts = list(part.arguments)
                elif kind == "If":
                    parts = [part.predicate, part.then, part.else_]
            if parts is None or not 0 < int(sel) <= len(parts):
                whole = reference_text(node)
                raise self.err(f"subexpression reference {whole} is not supported (selector "
                               f"{sel} of {kind})", node, env)
            part = parts[int(sel) - 1]
        # the part of a definition without arguments is one definition, wherever named
        key = (id(binding), tuple(selectors)) \
            if not args and all(isinstance(x, str) for x in selectors) else None
        got = self.parts.get(key) if key else None
        if got is None:
            definition = tla_ast.OperatorDefinition(
                name=reference_text(node), arity=None, definiens=part, local=False,
                function=False, start=node.start, end=node.end)
            got = DefB(definition, part_env)
            if key:
                self.parts[key] = got
                self.keepalive.append(binding)
        return got, [], part_env

    def instantiate_body(self, part, part_env, values, env, node):
        """Q!(e1, ..., en) for Q a quantifier, CHOOSE or set filter binding n names: its
        body with those names standing for the e_i (compiled in env, the reference's)."""
        kind = name_of(part)
        decls = part.declarations if kind == "Quantification" else \
            [part.declaration] if kind in ("Choose", "SetSlice") else None
        names = []
        for d in decls or []:
            for t in (d.arguments[:1] if getattr(d, "operator", None) == "\\in" else [d]):
                names += [i.operator for i in t.items] if name_of(t) == "Tuple" \
                    else [t.operator]
        if decls is None or len(names) != len(values):
            whole = reference_text(node)
            raise self.err(f"subexpression reference {whole} is not supported ({len(values)} "
                           f"values for the bound names of {kind})", node, env)
        body_env = dict(part_env)
        for name, value in zip(names, values, strict=True):
            body_env[name] = ArgB(value, env)
        return part.predicate, body_env

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
        if op in ("\\cdot", "-+->"):
            what = "action composition" if op == "\\cdot" else "the guarantee operator"
            raise self.err(f"{op} ({what}) is not supported", node, env)
        if op in TEMPORAL:
            raise self.err(f"temporal operator {op} used inside an expression (level error)",
                           node, env)
        if len(args) == 2 and op in BOOL_BINARY:
            what = BOOL_BINARY[op]
            a, b = (self.bool_code(x, env, cx, what) for x in args)
            return SIMPLE_BINARY[op].format(a, b)
        if len(args) == 2 and op in SIMPLE_BINARY:
            if op in ("\\in", "\\notin") and name_of(args[1]) == "OperatorApplication" \
                    and canonical_op(args[1].operator) == "DOMAIN" and args[1].arguments:
                a, f = (self.ex(x, env, cx) for x in (args[0], args[1].arguments[0]))
                test = f"_rt.in_dom({a}, {f})"
                if f.isidentifier() and (a.isidentifier() or a.isdigit()):  # a sequence, inline
                    kind = "" if a.isdigit() else f" and {a}.__class__ is int"
                    test = f"(0 < {a} <= len({f}) if {f}.__class__ is tuple{kind} else {test})"
                return test if op == "\\in" else f"(not {test})"
            if op in ("\\in", "\\notin"):
                test = self.member_code(args[0], args[1], env, cx)
                if test is not None:
                    return test if op == "\\in" else f"(not {test})"
            a, b = (self.ex(x, env, cx) for x in args)
            if op in ("\\in", "\\notin") and self.bound_in.get(a, 0) == b:
                return "True" if op == "\\in" else "False"  # \\E x \\in S : x \\in S
            if op in ("=", "#") and "frozenset()" in (a, b) and a.isidentifier() + b.isidentifier():
                v = a if b == "frozenset()" else b  # S = {}
                test = f"(not {v} if {v}.__class__ is frozenset else _eq({a}, {b}))"
                return test if op == "=" else f"(not {test})"
            if op in ("=", "#") and (self.ns.get(b).__class__ is ModelValue
                                     or self.ns.get(a).__class__ is ModelValue) \
                    and not (literal_code(a) or literal_code(b)):
                test = f"({a} is {b})"  # a model value is equal to itself only (interned)
                return test if op == "=" else f"(not {test})"
            test = op in ("=", "#") and (part_equals(a, b) or part_equals(b, a))
            if test:
                return test if op == "=" else f"(not {test})"
            if op in ("=", "#") and SIMPLE_CODE.match(a) and SIMPLE_CODE.match(b):
                a, b = self.as_frozenset(a), self.as_frozenset(b)
                ca, cb = class_code(a, self.ns), class_code(b, self.ns)
                test = f"({a} == {b} if {ca} is {cb} else _eq({a}, {b}))"
                return test if op == "=" else f"(not {test})"
            if op in ("\\in", "\\notin") and isinstance(self.ns.get(b), frozenset):
                # inlined for a plain name only: anything else would be evaluated twice
                test = f"({a} in {b} or _isin({a}, {b}))" if SIMPLE_CODE.match(a) \
                    else f"_isin({a}, {b})"
                return test if op == "\\in" else f"(not {test})"
            if op in ("\\in", "\\notin") and isinstance(self.ns.get(b), LazySet):
                test = self.fnset_member_code(a, b) or f"{b}.contains({a})"
                return test if op == "\\in" else f"(not {test})"
            if op in ARITH:
                return self.arith_code(op, a, b, node, env)
            return SIMPLE_BINARY[op].format(a, b)
        if op == "\\X":
            parts = flatten_cross(node)
            return "_rt.cross(" + ", ".join(self.ex(p, env, cx) for p in parts) + ")"
        if len(args) == 1 and op in ("-", "-."):
            a = self.ex(args[0], env, cx)
            if self.int_sure(a):
                return f"(-{a})"
            where = self.place(node, env)
            if SIMPLE_CODE.match(a):
                return self.int_result(f"(-{a} if {a}.__class__ is int else "
                                       f"_rt.not_int('-', {a}, None, {where}))")
            return self.int_result(f"_rt.neg({a}, {where})")
        if len(args) == 1 and op == "~":
            return f"(not {self.bool_code(args[0], env, cx, 'the argument of ~')})"
        if len(args) == 1 and op in SIMPLE_PREFIX:
            return SIMPLE_PREFIX[op].format(self.ex(args[0], env, cx))
        if op == "'":
            return self.ex(args[0], env, self.prime_cx(node, env, cx))
        if op == "ENABLED":
            return self.ex_enabled(args[0], env, cx, node)
        if op == "UNCHANGED":
            if cx.mode != "action":
                raise self.err("UNCHANGED used outside an action (level error)", node, env)
            parts = self.unchanged_parts(args[0], env)
            tests = []
            for p in parts:
                if not isinstance(p, int):
                    tests.append(self.unchanged_test(p[0], p[1], cx))
                elif p not in cx.assigned:
                    msg = f"primed variable {self.var_names[p]} is unassigned"
                    return f"_rt.fail({msg!r})"
                else:
                    tests.append(f"n_{p} == c_{p}")
            return "(" + " and ".join(tests or ["True"]) + ")"
        return None

    def bool_code(self, node, env, cx, what):
        """The code of node, which must give a boolean: TLC's error for any other value
        (Python would take 1 or a non-empty set as true). No test when node is surely
        boolean by its form (a comparison, a connective, a quantifier...)."""
        code = self.ex(node, env, cx)
        if code == "True" or code == "False" or self.sure_bool(node, env):
            return code
        if code.isidentifier() and self.ns.get(code).__class__ is bool:
            return code
        where = self.place(node, env)
        if code.isidentifier():
            return f"({code} if {code}.__class__ is bool else " \
                   f"_rt.not_bool({code}, {what!r}, {where}))"
        return f"_rt.need_bool({code}, {what!r}, {where})"

    def sure_bool(self, node, env, depth=0):
        """Does node's code surely give a Python bool, by its form alone?"""
        kind = name_of(node)
        if depth > 40:
            return False
        if kind in ("BooleanLiteral", "Quantification", "VerticalList"):
            return True
        if kind == "Parentheses":
            return self.sure_bool(node.expression, env, depth + 1)
        if kind == "If":
            return self.sure_bool(node.then, env, depth + 1) and \
                self.sure_bool(node.else_, env, depth + 1)
        if kind == "Let":
            try:
                inner = self.let_env(node, env)
            except TLAError:
                return False
            return self.sure_bool(node.expression, inner, depth + 1)
        if kind != "OperatorApplication":
            return False
        args = node.arguments or []
        b = env.get(node.operator)
        if b is None:
            return bool(args) and canonical_op(node.operator) in SURE_BOOL_OPS \
                or node.operator in SURE_BOOL_BUILTINS
        if isinstance(b, DefB) and not b.node.function and not b.recursive \
                and len(b.params) == len(args) and name_of(b.node.definiens) != "Instance":
            return self.sure_bool(b.node.definiens, self.param_env(b, args, env), depth + 1)
        if isinstance(b, ArgB) and not args:
            return self.sure_bool(b.node, b.env, depth + 1)
        return False

    def int_sure(self, code):
        """Does generated code surely give a Python int (never a bool)?"""
        if INT_LITERAL.match(code) or code in self.int_codes:
            return True
        memo = MEMO_USE.match(code)
        if memo:  # a memo's list holds what its code gives
            name = f"x_{memo.group(1)}"
            return self.int_sure(code[len(f"({name}[0] if {name} else ({name}.append("):
                                      -len(f") or {name}[0]))")])
        if code.isidentifier():
            return self.ns.get(code).__class__ is int
        return code.startswith(INT_CALLS)

    def int_result(self, code):
        self.int_codes.add(code)
        return code

    def arith_code(self, op, a, b, node, env):
        """a op b for an integer operator (+ - * < > <= >=): Python's own operator when
        both are ints, TLC's error otherwise (Python adds TRUE to 1, concatenates strings
        and sequences, subtracts and compares sets). Operands that are names or literals
        are tested inline; anything else goes through one runtime call."""
        fn, compare = ARITH[op]
        sure_a, sure_b = self.int_sure(a), self.int_sure(b)
        if sure_a and sure_b:
            code = f"({a} {op} {b})"
        else:
            where = self.place(node, env)
            if (sure_a or SIMPLE_CODE.match(a)) and (sure_b or SIMPLE_CODE.match(b)):
                tests = " and ".join(f"{c}.__class__ is int" for c, sure in
                                     ((a, sure_a), (b, sure_b)) if not sure)
                fa, fb = ("0" if sure_a else a), ("0" if sure_b else b)  # not evaluated again
                code = f"({a} {op} {b} if {tests} else _rt.not_int({op!r}, {fa}, {fb}, {where}))"
            else:
                code = f"_rt.{fn}({a}, {b}, {where})"
        return code if compare else self.int_result(code)

    def member_code(self, elem, set_node, env, cx):
        """x \\in a..b without building the interval, x \\in S \\cup T as x \\in S \\/ x \\in T,
        x \\in {y \\in S : P} as x \\in S /\\ P[x/y], the last also through a definition
        (TLC decides all three without building the set); None for any other set."""
        while name_of(set_node) == "Parentheses":
            set_node = set_node.expression
        op = canonical_op(set_node.operator) if name_of(set_node) == "OperatorApplication" \
            else None
        if self.filter_definition(set_node, env) is not None:
            op = "filter"
        if op not in ("..", "\\cup", "filter") or \
                (op != "filter" and len(set_node.arguments or ()) != 2):
            return None
        if op != ".." and self.ns.get(self.ex(set_node, env, cx)).__class__ is frozenset:
            return None  # a constant set: one lookup
        x = self.ex(elem, env, cx)
        if SIMPLE_CODE.match(x):
            return self.member_parts(x, set_node, env, cx)
        v = self.fresh("x")
        inner = self.member_parts(v, set_node, env, cx.but(locals=cx.locals + (v,)))
        return f"(lambda {v}: {inner})({x})"

    def see_through(self, node, env, zero_arity=True):
        """(node, env) with parentheses, operator arguments and applications of user
        definitions replaced by what they stand for (zero-arity definitions only when
        zero_arity: a constant one is better folded whole)."""
        for _ in range(50):
            while name_of(node) == "Parentheses":
                node = node.expression
            if name_of(node) != "OperatorApplication":
                break
            b = env.get(node.operator)
            if isinstance(b, ArgB) and not node.arguments:
                node, env = b.node, b.env
                continue
            if not isinstance(b, DefB) or b.recursive or b.node.function or \
                    len(b.params) != len(node.arguments or ()) or \
                    any(getattr(p, "arguments", None) for p in b.params) or \
                    not (zero_arity or b.params):
                break
            env = self.param_env(b, node.arguments or [], env)
            node = b.node.definiens
        return node, env

    def filter_definition(self, set_node, env):
        """(the filter {y \\in S : P}, its env) that set_node is, directly or as the body
        of a user definition applied to it; None otherwise."""
        node, env = self.see_through(set_node, env)
        if name_of(node) != "SetSlice":
            return None
        target = node.declaration.arguments[0]
        if name_of(target) != "OperatorApplication" or target.arguments:
            return None  # a tuple pattern {<<a, b>> \\in S : P}
        return node, env

    def filter_member(self, x, node, fenv, cx):
        """x \\in {y \\in S : P} (node, in fenv): x \\in S, then P with y bound to x."""
        target, base = node.declaration.arguments
        py = self.fresh("b_" + target.operator)
        cx2 = cx.but(locals=cx.locals + (py,))
        inner = self.member_parts(py, base, fenv, cx2)
        penv = dict(fenv)
        penv[target.operator] = LocalB(py)
        body = self.bool_code(node.predicate, penv, cx2, FILTER_COND)
        return f"(lambda {py}: {inner} and {body})({x})"

    def member_parts(self, x, set_node, env, cx):
        while name_of(set_node) == "Parentheses":
            set_node = set_node.expression
        bounds = interval_bounds(set_node)
        if bounds is not None:
            lo, hi = (self.ex(a, env, cx) for a in bounds)
            return f"_rt.in_interval({x}, {lo}, {hi})"
        if name_of(set_node) == "OperatorApplication" and len(set_node.arguments or ()) == 2 \
                and canonical_op(set_node.operator) == "\\cup":
            left, right = (self.member_parts(x, a, env, cx) for a in set_node.arguments)
            return f"({left} or {right})"
        s = self.ex(set_node, env, cx)
        if self.ns.get(s).__class__ is frozenset:
            return f"({x} in {s} or _isin({x}, {s}))"
        found = self.filter_definition(set_node, env)
        if found is not None:
            return self.filter_member(x, *found, cx)
        return f"_isin({x}, {s})"

    def as_frozenset(self, code):
        """A constant finite lazy set (a record set, [S -> T], SUBSET S) compared with `=`
        is compared as its elements, so that the comparison is one of two frozensets."""
        value = self.ns.get(code) if code.startswith("K") else None
        if not isinstance(value, LazySet) or not small_set(value):
            return code
        try:
            return self.inject(enum(value), "elems")
        except TLAError:
            return code

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
        mentioned = set()

        def body():
            # only the enclosing locals the body reads are passed: a LET memo whose list
            # is never made (its definition is too cheap to remember) is not a name there
            lines = self.act(action, env, Cx("action", locals_=cx.locals),
                             lambda c: ["return True"]) + ["return False"]
            mentioned.update(local_scope("\n".join(lines))[0])
            return lines

        def params():
            return ", ".join(("s",) + tuple(n for n in cx.locals if n in mentioned))
        self.unit(fname, params, body, self.unpack())
        return f"{fname}({params()})"


def small_set(s, limit=4096):
    """Is s a finite set of at most `limit` elements, told without enumerating it?"""
    c = s.__class__
    if c is frozenset:
        return len(s) <= limit
    if c is SubsetSet:
        return s.finite and small_set(s.base, 12) and 2 ** len(enum(s.base)) <= limit
    if c is FnSet or c is RecSet:
        parts = [s.dom, s.cod] if c is FnSet else list(s.fields.values())
        if not (s.finite and all(small_set(p, limit) for p in parts)):
            return False
        sizes = [len(enum(p)) for p in parts]
        total = sizes[1] ** sizes[0] if c is FnSet else 1
        if c is RecSet:
            for n in sizes:
                total *= n
        return total <= limit
    return False


PURE_KEY_CALLS = {"_ap", "len"}


def same_prefix(a, b):
    """May EXCEPT clauses with key codes a and b be applied in one walk (rt.except_many)?
    Their paths must be one path but for the last key, and evaluating that path once
    instead of per clause must change nothing: its code calls nothing but function
    application (no operator, so no Print, no random choice), and the last keys are
    plain names or literals, which cannot fail between two clauses' updates."""
    if len(a) != len(b) or len(a) < 2 or a[:-1] != b[:-1]:
        return False  # (one key: such clauses are at_put calls, whose values are eager)
    if not (SIMPLE_CODE.match(a[-1]) and SIMPLE_CODE.match(b[-1])):
        return False
    return all(set(CALLED.findall(k)) <= PURE_KEY_CALLS for k in a[:-1])


CALLED = re.compile(r"([\w.]+)\(")
ARITH = {"+": ("plus", False), "-": ("minus", False), "*": ("times", False),
         "<": ("lt", True), ">": ("gt", True), "<=": ("le", True), ">=": ("ge", True)}
IF_COND = "the condition of an IF"
CASE_GUARD = "a guard condition of a CASE"
LAZY_SET_CODE = re.compile(r"_rt\.(subset|fnset|recset|filtered)\(")
FILTER_COND = "the condition of a set {x \\in S : P}"
CHOOSE_COND = "the condition of a CHOOSE"
CONJ = "a formula in a conjunction"
DISJ = "a formula in a disjunction"
BOOL_BINARY = {"/\\": CONJ, "\\/": DISJ, "=>": "an operand of =>", "<=>": "an operand of <=>"}
SURE_BOOL_OPS = {"=", "#", "\\in", "\\notin", "<", ">", "<=", ">=", "\\subseteq", "\\subset",
                 "\\supseteq", "\\supset", "/\\", "\\/", "~", "=>", "<=>", "\\sqsubseteq",
                 "ENABLED", "UNCHANGED"}
SURE_BOOL_BUILTINS = {"IsFiniteSet", "IsABag", "BagIn", "Assert", "PrintT", "TLCSet"}
INT_LITERAL = re.compile(r"\(?-?\d+\)?$")
INT_CALLS = ("_rt.length(", "_rt.cardinality(", "_rt.idiv(", "_rt.imod(", "_rt.ipow(",
             "_rt.plus(", "_rt.minus(", "_rt.times(", "_rt.neg(")


def interval_bounds(node):
    """(a, b) when node is a..b (in parentheses or not), else None."""
    while name_of(node) == "Parentheses":
        node = node.expression
    if name_of(node) == "OperatorApplication" and canonical_op(node.operator) == ".." \
            and len(node.arguments or ()) == 2:
        return node.arguments
    return None


def reference_text(node):
    """A subexpression reference as written, roughly: Op!1!(...)!:."""
    return "!".join(i if isinstance(i, str) else i.operator or "(...)" for i in node.items)


# a record field or a sequence's element of a plain name, as codegen.field_code and
# apply_code spell them
FIELD_CODE = re.compile(r"\((\w+)\[('[^'\\]*'|K\w+)\] if \1\.__class__ is _FnDict and \2 in \1 "
                        r"else _ap\(\1, \2\)\)$")
ITEM_CODE = re.compile(r"\((\w+)\[(\d+)\] if \1\.__class__ is tuple and len\(\1\) >= (\d+) "
                       r"else _ap\(\1, \3\)\)$")
LITERAL_CLASS = ((re.compile(r"-?\d+$"), "int"), (re.compile(r"'[^'\\]*'$"), "str"),
                 (re.compile(r"\(\)$"), "tuple"))


def part_equals(part, literal):
    """`f.a = "x"`, `f[2] = 0`, `s[1] = <<>>` with f and s plain names: the part compared
    inline when it is of the literal's class (no call of _eq), else through _eq, which
    raises TLC's error for incomparable values as before; None for any other code."""
    cls = next((c for pattern, c in LITERAL_CLASS if pattern.match(literal)), None)
    if cls is None:
        return None
    m = FIELD_CODE.match(part)
    if m:
        f, key = m.group(1), m.group(2)
        return f"({f}[{key}] == {literal} if {f}.__class__ is _FnDict and " \
               f"{f}.get({key}).__class__ is {cls} else _eq(_ap({f}, {key}), {literal}))"
    m = ITEM_CODE.match(part)
    if m:
        f, i, k = m.groups()
        return f"({f}[{i}] == {literal} if {f}.__class__ is tuple and len({f}) >= {k} and " \
               f"{f}[{i}].__class__ is {cls} else _eq(_ap({f}, {k}), {literal}))"
    return None


def literal_code(code):
    """Might code be a Python literal (`x is 'a'` is a SyntaxWarning)? Long code is
    not parsed to find out: it is taken to be one."""
    if code.isidentifier() or code[0] == "_" or code[0].isalpha():
        return False  # a name or a call
    if len(code) > 2000:
        return True
    try:
        tree = ast.parse(code, mode="eval").body
    except SyntaxError:
        return True
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.UnaryOp, ast.USub, ast.Load))
               for n in ast.walk(tree))


_ATOMS = {bool: "b", int: "i", str: "s", ModelValue: "m"}


def literal_key(value, budget=None):
    """A key telling equal constant values apart from unequal ones, types included (TRUE
    is not 1, as it is to Python), or None for a value too big or not plainly built
    (lazy sets, recursive functions): those are injected under a name of their own."""
    budget = budget or [256]
    budget[0] -= 1
    if budget[0] < 0:
        return None
    cls = value.__class__
    atom = _ATOMS.get(cls)
    if atom is not None:
        return (atom, value)
    if cls is tuple or cls is frozenset:
        parts = [literal_key(v, budget) for v in value]
    elif cls is FnDict:
        parts = [(literal_key(k, budget), literal_key(v, budget)) for k, v in value.items()]
        if any(None in p for p in parts):
            return None
    else:
        return None
    if None in parts:
        return None
    return (cls.__name__, tuple(parts) if cls is tuple else frozenset(parts))
