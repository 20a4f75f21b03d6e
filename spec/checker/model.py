"""Load a spec and its cfg into a Model: compiled init, next, invariants, etc.

The root module's scope is built with constants bound from the cfg (values,
model values or `<-` substitutions). The behaviour spec comes from INIT/NEXT
or from SPECIFICATION, whose formula is split into an initial predicate,
`[][Next]_vars` and WF_/SF_ fairness conjuncts (also under `\\A x \\in S`).
Every cfg name is checked to exist; ASSUMEs are evaluated.
"""
import operator
import re
import sys
from functools import partial

from tla import _ast as tla_ast

from .bfs import PY_ERRORS
from .cfg import parse_cfg
from .compiler import (
    BUILTIN_FUNCS,
    BUILTIN_HIGHER,
    BUILTIN_VALUES,
    IMPURE,
    Compiler,
    NeedsState,
    name_of,
)
from .errors import TLAError
from .frontend import Loader, canonical_op, pos
from .scope import (
    ArgB,
    ConstB,
    DefB,
    InstB,
    LazyRefB,
    ParamInstB,
    VarB,
    build_scope,
    flatten_modules,
)
from .semantic import check_names
from .values import FnDict, ModelValue, enum, show


def ref_node(name):
    """A reference to a definition by name; `I!Op` names an instance's definition."""
    if "!" in name:
        first, *rest = name.split("!")
        return tla_ast.SubexpressionReference(
            items=[tla_ast.OperatorApplication(operator=first, arguments=None)] + rest)
    return tla_ast.OperatorApplication(operator=name, arguments=None)


# what keeps an instance's action from being tested on the lifted step (lifted_step_test)
NOT_LIFTABLE = re.compile(IMPURE.pattern + r"|\benabled_\d")


class Fairness:
    def __init__(self, kind, action, subscript, env, label):
        self.kind = kind          # "WF" | "SF"
        self.action = action      # node
        self.subscript = subscript
        self.env = env
        self.label = label


class Model:
    """A compiled model; see spec.checker's docstring for the public API."""

    def __init__(self, spec_path, cfg_path):
        self.spec_path = spec_path
        self.loader = Loader(spec_path)
        self.loader.scoped_overrides = {}
        self.root = self.loader.root
        self.cfg = parse_cfg(cfg_path)
        self.cfg_path = cfg_path
        self.var_names = []
        self.compiler = Compiler(self.var_names)
        self.compiler.loader = self.loader
        self.env = build_scope(self.loader, self.root, self.bind_decl)
        check_names(self.loader, self.root, self.env)
        self.apply_cfg_overrides()
        self.check_assumptions()
        self.fairness = []
        self.assumptions_only = False
        self.postconditions = []  # (name, state function): TLC's POSTCONDITIONs
        self.init_nodes = []
        self.next_node = None
        self.vars_node = None
        self.read_behaviour()
        self.compile_units()

    # --- scope ------------------------------------------------------------
    def bind_decl(self, name, kind, where, index):
        if kind == "variable":
            self.var_names.append(name)
            return VarB(index, name)
        if name in self.cfg.constants:
            value = self.cfg.constants[name]
            return ConstB(self.compiler.inject(value, name))
        if name in self.cfg.substitutions:
            if getattr(where[1], "arguments", None):
                return LazyRefB(self.cfg.substitutions[name], self.root_env_proxy())
            return ArgB(ref_node(self.cfg.substitutions[name]), self.root_env_proxy())
        path, node = where
        raise TLAError(f"The constant {name} is not assigned a value in the configuration file",
                       pos(node, path))

    def root_env_proxy(self):
        if not hasattr(self, "_env_proxy"):
            self._env_proxy = {}
        return self._env_proxy

    def apply_cfg_overrides(self):
        """Replace definitions (and standard operators such as Nat or Seq) named by the cfg,
        in every module scope; `X <- [M]op` only in the scopes of module M."""
        proxy = self.root_env_proxy()
        proxy.update(self.env)
        # the definitions the cfg names, as the root module sees them: the same definition
        # in another scope (through EXTENDS or INSTANCE of its module) is overridden too,
        # another one of the same name (an instance's own) is not
        named = {n: b.node for n, b in self.env.items() if isinstance(b, DefB)}
        originals = {}  # target -> {name: the definition `name <- target` replaces}
        for name, target in self.cfg.substitutions.items():
            self.check_target(name, target)
            if name not in self.env and not is_builtin(name):
                warn(f"the configuration substitutes {name}, which the spec does not declare",
                     self.cfg.positions.get(name))
                continue
            b = self.env.get(name)
            if b is None or isinstance(b, DefB):
                self.env[name] = self.override_binding(b, target, proxy)
                if b is not None:
                    originals.setdefault(target, {})[name] = b
        for name, value in list(self.cfg.constants.items()):
            if name not in self.env:
                warn(f"the configuration assigns {name}, which the spec does not declare",
                     self.cfg.positions.get(name))
                del self.cfg.constants[name]
            elif isinstance(self.env[name], DefB):
                self.env[name] = ConstB(self.compiler.inject(value, name))
        names = list(self.cfg.substitutions) + list(self.cfg.constants)
        overridden = {n: self.env[n] for n in names if n in self.env}
        def override(root):
            for env in scope_envs(root):
                for n, b in overridden.items():
                    here = env.get(n)
                    if (isinstance(here, DefB) and here.node is named.get(n)) \
                            or (n not in env and is_builtin(n)):
                        env[n] = b
        envs = scope_envs(self.env)
        override(self.env)
        # a parameterised instance builds its scope at each use: the same overrides there
        self.loader.override_hook = override
        scoped = [(k, t, None) for k, t in self.cfg.scoped.items()] + \
            [(k, None, v) for k, v in self.cfg.scoped_values.items()]
        for (module, name), target, value in scoped:
            where = self.cfg.positions.get(target or name)
            mod = self.loader.get(module, where)
            if mod is None:
                raise TLAError(f"the configuration overrides {name} in the standard module "
                               f"{module}, which is not supported", where)
            if target is not None:
                self.check_target(name, target)
                binding = self.override_binding(self.env.get(name), target, proxy)
            else:
                binding = ConstB(self.compiler.inject(value, name))
            self.loader.scoped_overrides.setdefault(module, {})[name] = binding
            for env in envs:
                if env.get(" path") == mod.path:
                    env[name] = binding
        proxy.update(self.env)
        # what the overriding definition itself names is the original, as in TLC
        # (`Next <- DebugNext` with DebugNext == Next /\ ...), not the override again
        for target, replaced in originals.items():
            t = proxy.get(target)
            if isinstance(t, DefB):
                proxy[target] = DefB(t.node, {**t.env, **replaced}, t.recursive, t.local)

    def check_target(self, name, target):
        if target not in self.env and not is_builtin(target):
            raise TLAError(f"the configuration substitutes {name} <- {target}, but {target} "
                           f"is not defined", self.cfg.positions.get(target))

    def override_binding(self, old, target, proxy):
        takes_args = old is None or bool(getattr(old, "params", None))
        if takes_args or not isinstance(self.env.get(target), DefB):
            return LazyRefB(target, proxy)
        return ArgB(ref_node(target), proxy)

    def definition(self, name, what):
        b = self.env.get(name)
        if b is None and "!" in name:
            first, *rest = name.split("!")
            b = self.env.get(first)
            for part in rest:
                b = b.env.get(part) if isinstance(b, InstB) else None
        if b is None:
            raise TLAError(f"the configuration names {what} {name}, which is not defined in "
                           f"the spec", self.cfg.positions.get(name))
        if isinstance(b, DefB) and b.params:
            raise TLAError(f"{what} {name} must not take arguments", self.cfg.positions.get(name))
        return b

    def check_assumptions(self):
        for mod in flatten_modules(self.loader, self.root):
            env = dict(self.env, **{" path": mod.path})
            for expr in mod.assumes:
                try:
                    value = self.compiler.constant_value(expr, env)
                except NeedsState:
                    if applies(expr, env, ("TLCGet", "TLCSet")):
                        raise TLAError("TLCGet and TLCSet in an ASSUME are not supported",
                                       pos(expr, mod.path)) from None
                    raise TLAError("ASSUME refers to a variable (level error)",
                                   pos(expr, mod.path)) from None
                except TLAError as exc:
                    if exc.where is None:
                        exc.where = pos(expr, mod.path)
                    raise
                except PY_ERRORS as exc:  # never Python's message without a position
                    raise TLAError(f"evaluation error: {type(exc).__name__}: {exc}",
                                   pos(expr, mod.path)) from None
                if value is not True:
                    raise TLAError("Assumption is false", pos(expr, mod.path))

    # --- behaviour spec ---------------------------------------------------------
    def read_behaviour(self):
        cfg = self.cfg
        if cfg.spec:
            self.definition(cfg.spec, "SPECIFICATION")
            self.split_spec(ref_node(cfg.spec), self.env)
            if self.next_node is None:
                raise TLAError(f"SPECIFICATION {cfg.spec} has no [][Next]_vars conjunct",
                               cfg.positions.get(cfg.spec))
        elif not cfg.init and not cfg.next:
            self.assumptions_only = True  # as TLC: evaluate the ASSUMEs, explore nothing
        else:
            if not cfg.init or not cfg.next:
                raise TLAError("the configuration needs INIT and NEXT, or SPECIFICATION")
            self.definition(cfg.init, "INIT")
            self.definition(cfg.next, "NEXT")
            self.init_nodes = [(ref_node(cfg.init), self.env)]
            self.next_node = (ref_node(cfg.next), self.env)

    def split_spec(self, node, env):
        kind = name_of(node)
        if kind == "Parentheses":
            return self.split_spec(node.expression, env)
        if kind == "VerticalList" and node.operator == "/\\":
            for item in node.arguments:
                self.split_spec(item.expression, env)
            return
        if kind == "Fairness":
            label = fairness_label(node)
            self.fairness.append(Fairness(node.operator[:2], node.action, node.subscript, env,
                                          label))
            return
        if kind == "OperatorApplication":
            op = canonical_op(node.operator)
            if op == "/\\" and node.arguments and len(node.arguments) == 2:
                for a in node.arguments:
                    self.split_spec(a, env)
                return
            if op == "[]" and name_of(node.arguments[0]) == "SubscriptedAction":
                sub = node.arguments[0]
                self.next_node = (sub.action, env)
                self.vars_node = (sub.subscript, env)
                return
            b = env.get(node.operator)
            if not node.arguments:
                if isinstance(b, DefB) and not b.params and is_temporal(b.node.definiens, b.env):
                    return self.split_spec(b.node.definiens, b.env)
                if isinstance(b, ArgB) and is_temporal(b.node, b.env):
                    return self.split_spec(b.node, b.env)
            elif isinstance(b, DefB) and len(b.params) == len(node.arguments) \
                    and not b.recursive and not b.node.function and is_temporal(node, env):
                # MyNext([][Next]_vars) with MyNext(a) == a
                return self.split_spec(b.node.definiens,
                                       self.compiler.param_env(b, node.arguments, env))
        if kind == "Let":
            benv = self.compiler.let_env(node, env)
            if is_temporal(node.expression, benv):
                return self.split_spec(node.expression, benv)
        if kind == "SubexpressionReference" and is_temporal(node, env):  # I!Spec, P(7)!Spec
            b, args, _ = self.compiler.resolve_subexpr(node, env)
            if isinstance(b, DefB) and not b.params and not args:
                return self.split_spec(b.node.definiens, b.env)
        if kind == "Quantification" and node.quantifier == "\\A":
            return self.split_forall(node, env)
        guarded = self.constant_guard(node, env)
        if guarded is not None:
            for part in guarded:
                self.split_spec(part, env)
            return
        if is_temporal(node, env):
            raise TLAError("unsupported conjunct in SPECIFICATION (expected Init, "
                           "[][Next]_vars and WF_/SF_ fairness)", pos(node, env[" path"]))
        self.init_nodes.append((node, env))

    def constant_guard(self, node, env):
        """The conjuncts that `c => F` or `IF c THEN F ELSE G` (F or G temporal, c
        constant: `(i # j) => WF_v(A(i, j))` under `\\A i, j \\in S`) stands for: F when
        c holds, G or nothing when not. None for any other conjunct."""
        if name_of(node) == "OperatorApplication" and canonical_op(node.operator) == "=>" \
                and len(node.arguments or ()) == 2:
            cond, parts = node.arguments[0], ([node.arguments[1]], [])
        elif name_of(node) == "If":
            cond, parts = node.predicate, ([node.then], [node.else_])
        else:
            return None
        if not any(is_temporal(p, env) for p in parts[0] + parts[1]) or is_temporal(cond, env):
            return None
        try:
            holds = self.compiler.constant_value(cond, env)
        except NeedsState:
            raise TLAError("unsupported conjunct in SPECIFICATION: a temporal formula "
                           "guarded by a non-constant condition", pos(node, env[" path"])) from None
        if holds is not True and holds is not False:
            raise TLAError(f"the condition of a SPECIFICATION conjunct is {show(holds)}, "
                           "not a Boolean", pos(cond, env[" path"]))
        return parts[0] if holds else parts[1]

    def split_forall(self, node, env):
        for value_env in expand_forall(self.compiler, node, env):
            self.split_spec(node.predicate, value_env)

    # --- compilation ----------------------------------------------------------
    def compile_units(self):
        c = self.compiler
        cfg = self.cfg
        if self.assumptions_only:
            self.init_fn = lambda s, emit: None
            self.next_fn = self.next_labeled = lambda s, emit: None
            self.invariants, self.constraints, self.action_constraints = [], [], []
            self.constraints_pure = True
            self.view_fn, self.symmetry, self.check_deadlock = None, [], False
            cfg.properties = []
            return
        self.init_fn = self.compile_init()
        next_node, next_env = self.next_node
        self.next_fn = c.action_function(next_node, next_env, "action")
        self.next_labeled = self.next_labeled_on_first_call
        self.invariants = []
        for name in cfg.invariants:
            self.definition(name, "INVARIANT")
            self.require_constant_true(name, "invariant")
            self.invariants.append((name, c.state_function(ref_node(name), self.env, name)))
        self.constraints = [c.state_function(ref_node(n), self.env, n)
                            for n in cfg.constraints if self.definition(n, "CONSTRAINT")
                            and self.require_constant_true(n, "constraint")]
        self.action_constraints = [
            c.transition_function(ref_node(n), self.env)
            for n in cfg.action_constraints if self.definition(n, "ACTION_CONSTRAINT")
            and self.require_constant_true(n, "action constraint")]
        # the state constraints depend on the state alone: a state stored once passes again
        self.constraints_pure = all(c.effect_free(f) for f in self.constraints)
        self.view_fn = None
        if cfg.view:
            self.definition(cfg.view, "VIEW")
            self.view_fn = c.state_function(ref_node(cfg.view), self.env, cfg.view)
        self.symmetry = []
        if cfg.symmetry:
            self.definition(cfg.symmetry, "SYMMETRY")
            self.symmetry = self.symmetry_maps(cfg.symmetry)
        for name in cfg.properties:
            self.definition(name, "PROPERTY")
            self.require_constant_true(name, "property")
        self.postconditions = [(n, c.state_function(ref_node(n), self.env, n))
                               for n in cfg.postconditions if self.definition(n, "POSTCONDITION")]
        self.check_deadlock = cfg.check_deadlock

    def require_constant_true(self, name, what):
        """TLC evaluates a constant-level invariant, property or (action) constraint once,
        before the search, and stops with an error unless it is TRUE (`Inv == 1 > 2`:
        "The invariant of Inv is equal to FALSE"), where a state-level one false at the
        start is a violation. One whose evaluation fails is left to the search, as in TLC.
        Returns True to be used in a filter."""
        try:
            value = self.compiler.constant_value(ref_node(name), self.env, pure=True)
        except (NeedsState, TLAError) + PY_ERRORS:
            return True
        if value is not True:
            raise TLAError(f"The {what} of {name} is equal to {show(value)}",
                           self.cfg.positions.get(name))
        return True

    def next_labeled_on_first_call(self, s, emit):
        """Next naming each step's action, compiled when first needed (a trace, the
        API's graph): a run without a violation never needs it."""
        self.next_labeled = self.compiler.action_function(*self.next_node, "action",
                                                          labels=True)
        return self.next_labeled(s, emit)

    def compile_init(self):
        """The initial predicate's conjuncts as one action in "init" mode; conjuncts from
        different scopes (a definition inside an INSTANCE, or a `PrintT(x) /\\ Spec`)
        are referred to by name from one scope. A specification without an initial
        predicate (`[][Next]_v` alone) has no initial state, as in TLC."""
        if not self.init_nodes:
            return lambda s, emit: None
        if len({id(e) for _, e in self.init_nodes}) == 1:
            node, env = conjunction([n for n, _ in self.init_nodes]), self.init_nodes[0][1]
        else:
            env = dict(self.env)
            for i, (n, e) in enumerate(self.init_nodes):
                env[f" init{i}"] = ArgB(n, e)
            node = conjunction([ref_node(f" init{i}") for i in range(len(self.init_nodes))])
        return self.compiler.action_function(node, env, "init", what="init")

    def symmetry_maps(self, name):
        try:
            perms = self.compiler.constant_value(ref_node(name), self.env)
        except NeedsState:
            raise TLAError("SYMMETRY must be a constant set of permutations",
                           self.cfg.positions.get(name)) from None
        maps = []
        for p in enum(perms):
            if p.__class__ is not FnDict:
                raise TLAError(f"SYMMETRY element {show(p)} is not a permutation of model values")
            if not all(isinstance(k, ModelValue) for k in p):
                raise TLAError("SYMMETRY must permute model values")
            maps.append(dict(p))
        return group_closure(maps)

    def invariant_all(self):
        """f(s): every invariant on s (one compiled call; the first failure is found
        separately): invariant_step's, with a parent none of whose objects s holds."""
        if getattr(self, "_invariant_all", None) is None:
            self._invariant_all = partial(self.invariant_step(),
                                          tuple(object() for _ in self.var_names))
        return self._invariant_all

    def invariant_step(self):
        """f(p, s): every invariant on s, a successor of a state p that satisfies them: a
        conjunct whose variables are all p's own objects holds at once
        (Compiler.conjunction_function)."""
        if getattr(self, "_invariant_step", None) is None:
            names = list(dict.fromkeys(self.cfg.invariants))
            combined = self.compiler.conjunction_function(
                conjunction([ref_node(n) for n in names]), self.env) if names else None
            extra = [fn for name, fn in self.invariants[len(self.cfg.invariants):]]
            if extra:
                first = combined or (lambda p, s: True)
                self._invariant_step = lambda p, s: first(p, s) is True and all(
                    f(s) is True for f in extra)
            else:
                self._invariant_step = combined
        return self._invariant_step

    # --- helpers for other modules ------------------------------------------
    def where(self, name):
        b = self.env.get(name)
        if isinstance(b, DefB):
            return pos(b.node, b.env.get(" path", self.spec_path))
        return None

    def state_fn(self, node, env):
        return self.compiler.state_function(node, env)

    def action_fn(self, node, env, labels=False):
        return self.compiler.action_function(node, env, "action", labels=labels)

    def lifted_step_test(self, plain, node, env):
        """plain, the step test of node (a `[A]_v` of env), or the same test through
        lifted_step when env is the scope of an instance (`V == INSTANCE Voting`, a
        refinement property V!Spec): node is then compiled a second time over a state
        of the instance's own variables, and each step is lifted to their values (the
        substituted expressions, or the same-named variables or definitions, evaluated
        in s and t).
        Under substitution semantics A on the step is A on the lifted step, except
        where A reads ENABLED (it asks about the instance's variables there, not about
        the spec's) or something other than the state (TLCGet, random choice,
        printing): those keep plain."""
        inst = env.get(" instance")
        if inst is None or inst.scope is not env \
                or not all(self.is_constant(b) for _name, b in inst.constants):
            return plain  # (a LET's or a quantifier's scope; a constant read off a state)
        own_env = inst.own_state_scope()
        spec_vars = self.compiler.var_names
        try:
            lifts = [self.lift_fn(b) for _name, b in inst.variables]
            self.compiler.var_names = [name for name, _b in inst.variables]
            step = self.compiler.transition_function(node, own_env, "lifted_action")
        except TLAError:  # (a substitution no state function, say)
            return plain
        finally:
            self.compiler.var_names = spec_vars
        if not all(self.compiler.effect_free(f, NOT_LIFTABLE) for f in lifts + [step]
                   if not isinstance(f, operator.itemgetter)):
            return plain
        return lifted_step(plain, lifts, step)

    def is_constant(self, b):
        """Is the binding b of an instance's constant a constant value? (TLC refuses a
        state-level substitution for a constant; this checker does not, and a lifted
        state would not hold the values it reads.)"""
        if isinstance(b, ConstB):
            return True
        found = substituted_expression(b)
        if found is None:  # an operator constant
            return False
        try:
            self.compiler.constant_value(*found)
        except (NeedsState, TLAError) + PY_ERRORS:
            return False
        return True

    def lift_fn(self, b):
        """The value in a state of the binding b of an instance's variable, remembered by
        the values it reads: a state is lifted once per step from it and once per step
        to it."""
        if isinstance(b, VarB):
            return operator.itemgetter(b.index)
        found = None if isinstance(b, DefB) and b.recursive else substituted_expression(b)
        if found is None:
            raise TLAError(f"no state function substitutes {type(b).__name__}")
        return self.compiler.state_function(*found, "lift", remembered=True)

    def sub_action_fns(self, node, env):
        """(enumerator, step test or None, step test) for an action under fairness: the
        test (s, t) -> bool comes second when the action does not assign every variable,
        so its steps among a state's successors are found by testing each edge; the
        third is used where the enumerator cannot run (an action on expressions
        substituted through INSTANCE): enabled then means a successor satisfies it."""
        partial = []
        if self.next_node is not None and same_definition((node, env), self.next_node):
            fn = self.next_fn  # WF_vars(Next): liveness reads its steps off the graph
        else:
            fn = self.compiler.action_function(node, env, "action", what="fair",
                                               partial=partial)
        compiled = []

        def test(s, t):  # compiled on first use only
            if not compiled:
                compiled.append(self.compiler.transition_function(node, env, "fair_step"))
            return compiled[0](s, t)
        return fn, (test if partial else None), test


def substituted_expression(b):
    """(node, env) of the expression a binding of an instance's declaration stands for: a
    substitution `x <- e`, or a same-named definition without parameters; else None."""
    if isinstance(b, ArgB):
        return b.node, b.env
    if isinstance(b, DefB) and not b.params:
        return b.node.definiens, b.env
    return None


def lifted_step(plain, lifts, step, window=4096):
    """plain(s, t) answered by step(a, b), a and b the tuples of lifts applied to s and t,
    remembered per pair of such tuples: a refinement property has far fewer abstract
    steps than steps (most of Paxos's steps leave votes and maxBal as they were, or
    change them as another step did). Equal tuples are made one object, so a pair is
    keyed by identities. Where a lift or the step raises, plain answers instead: it
    evaluates the substitutions lazily, as TLC does, and raises the error TLC reports.
    When fewer than a quarter of a window's lookups hit (a lift that raises is a miss),
    plain answers from then on.
    The explorer's known limit holds here too: lifted states that differ only by TRUE
    against 1 (FALSE against 0) in one place are one to Python (spec/README.md)."""
    same, memo = {}, {}
    lookups = hits = 0
    gave_way = False

    def lift(s):
        a = tuple([f(s) for f in lifts])
        return same.setdefault(a, a)

    def test(s, t):
        nonlocal lookups, hits, gave_way
        if gave_way:
            return plain(s, t)
        lookups += 1
        if lookups == window:
            if hits < window // 4:
                gave_way = True
                same.clear()
                memo.clear()
            lookups = hits = 0
        try:
            a, b = lift(s), lift(t)
            key = (id(a), id(b))
            got = memo.get(key)
            if got is None:
                got = memo[key] = step(a, b)
            else:
                hits += 1
        except (TLAError,) + PY_ERRORS:
            return plain(s, t)
        return got
    return test


def same_definition(a, b):
    """Whether two (node, env) name one zero-arity definition (or are one node)."""
    (na, ea), (nb, eb) = a, b
    while name_of(na) == "Parentheses":
        na = na.expression
    while name_of(nb) == "Parentheses":
        nb = nb.expression
    if na is nb:
        return ea is eb
    if name_of(na) != "OperatorApplication" or name_of(nb) != "OperatorApplication" \
            or na.arguments or nb.arguments or na.operator != nb.operator:
        return False
    found = ea.get(na.operator)
    return isinstance(found, DefB) and found is eb.get(nb.operator)


def is_builtin(name):
    return name in BUILTIN_FUNCS or name in BUILTIN_HIGHER or name in BUILTIN_VALUES


def warn(message, where):
    """TLC goes on after these cfg mistakes; so do we, saying so on stderr."""
    print(f"Warning: {str(TLAError(message, where))}", file=sys.stderr)


def scope_envs(env):
    """Every environment a definition of the model is compiled in (instances included)."""
    found, todo = {}, [env]
    while todo:
        e = todo.pop()
        if id(e) in found:
            continue
        found[id(e)] = e
        for b in e.values():
            if isinstance(b, (DefB, InstB)):
                todo.append(b.env)
    return list(found.values())


def conjunction(nodes):
    if len(nodes) == 1:
        return nodes[0]
    node = nodes[0]
    for other in nodes[1:]:
        node = tla_ast.OperatorApplication(operator="/\\", arguments=[node, other])
    return node


def fairness_label(node):
    action = node.action
    while name_of(action) == "Parentheses":
        action = action.expression
    if name_of(action) == "OperatorApplication":
        return f"{node.operator}({action.operator})"
    return node.operator


TEMPORAL_OPS = {"[]", "<>", "~>", "-+->"}


def is_temporal(node, env, depth=0):
    """Whether node (through the definitions it applies) uses temporal operators."""
    if depth > 30:
        return False
    kind = name_of(node)
    if kind == "Fairness":
        return True
    if kind == "SubexpressionReference":
        b = instance_target(node, env)
        if isinstance(b, DefB) and not b.params:
            return is_temporal(b.node.definiens, b.env, depth + 1)
        if isinstance(b, DefB) and not b.recursive \
                and is_temporal(b.node.definiens, b.env, depth + 1):  # I!Prop(Op, x)
            return True
    if kind == "OperatorApplication":
        if canonical_op(node.operator) in TEMPORAL_OPS:
            return True
        if not node.arguments:
            b = env.get(node.operator)
            if isinstance(b, DefB) and not b.params:
                return is_temporal(b.node.definiens, b.env, depth + 1)
            if isinstance(b, ArgB):
                return is_temporal(b.node, b.env, depth + 1)
            return False
        b = env.get(node.operator)  # op(TRUE) with op(b) == [][b]_x
        if isinstance(b, DefB) and b.params and not b.recursive \
                and is_temporal(b.node.definiens, b.env, depth + 1):
            return True
    for field in getattr(node, "_fields", ()):
        if field in ("symbol", "start", "end"):
            continue
        value = getattr(node, field)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if hasattr(item, "_fields") and hasattr(item, "symbol"):
                if is_temporal(item, env, depth + 1):
                    return True
            elif isinstance(item, tuple):
                for sub in item:
                    if hasattr(sub, "symbol") and is_temporal(sub, env, depth + 1):
                        return True
    return False


def applies(node, env, builtins, depth=0):
    """Whether node, through the definitions it applies, applies one of the builtins."""
    if depth > 30:
        return False
    if name_of(node) == "OperatorApplication":
        b = env.get(node.operator)
        if node.operator in builtins and not isinstance(b, DefB):
            return True
        if isinstance(b, DefB) and applies(b.node.definiens, b.env, builtins, depth + 1):
            return True
    for field in getattr(node, "_fields", ()):
        if field in ("symbol", "start", "end"):
            continue
        value = getattr(node, field)  # a node (a named tuple) or a list of them
        items = [value] if hasattr(value, "_fields") or not isinstance(value, (list, tuple)) \
            else value
        for item in items:
            if hasattr(item, "_fields") and applies(item, env, builtins, depth + 1):
                return True
    return False


def instance_target(node, env):
    """The binding `I!Op` or `P(e)!Op` names (None when it is not a chain of instances)."""
    b = None
    for item in node.items:
        name = item if isinstance(item, str) else getattr(item, "operator", None)
        if name is None or (b is not None and not isinstance(b, InstB)):
            return None
        b = (env if b is None else b.env).get(name)
        if isinstance(b, ParamInstB):
            b = b.instantiate(getattr(item, "arguments", None) or [], env)
    return b


def expand_forall(compiler, node, env):
    """Environments binding the variables of `\\A x \\in S, ...` to each constant value."""
    envs = [env]
    pending = []
    for d in node.declarations:
        if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
            target, set_node = d.arguments
            names = pending + [target]
            pending = []
            new = []
            for e in envs:
                try:
                    values = sorted(enum(compiler.constant_value(set_node, e)),
                                    key=lambda v: show(v))
                except NeedsState:
                    raise TLAError("the bound of a quantified temporal formula must be constant",
                                   pos(d, env[" path"])) from None
                except TLAError as e:  # an infinite bound (Nat): say where, as TLC does
                    if e.where is None:
                        e.where = pos(set_node, env[" path"])
                    raise
                combos = [e]
                for t in names:
                    combos = [dict(c, **{t.operator: ConstB(compiler.inject(v, t.operator))})
                              for c in combos for v in values]
                new += combos
            envs = new
        else:
            pending.append(d)
    if pending:
        raise TLAError("unbounded quantifier in a temporal formula is not supported",
                       pos(node, env[" path"]))
    return envs


def group_closure(maps):
    """The permutations generated by `maps` under composition, as TLC takes a SYMMETRY
    set (Permutations(A) \\cup Permutations(B) permutes A and B together), identity first.
    Only the maps not already generated are used as generators, so a set that is already
    a group (Permutations(S)) costs a few passes over it, not its size squared."""
    def key(m):
        return frozenset((k, v) for k, v in m.items() if k != v)

    def compose(g, a):  # g after a
        c = {k: g.get(v, v) for k, v in a.items()}
        c.update({k: v for k, v in g.items() if k not in c})
        return c
    group, gens = {frozenset(): {}}, []
    for m in maps:
        if key(m) in group:
            continue
        gens.append(m)
        todo = list(group.values())
        while todo:
            found = []
            for a in todo:
                for g in gens:
                    c = compose(g, a)
                    if key(c) not in group:
                        group[key(c)] = c
                        found.append(c)
            todo = found
    return list(group.values())
