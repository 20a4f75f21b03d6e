"""Name bindings used by the compiler, and construction of module scopes.

An environment is a plain dict from names to binding objects. A module scope
flattens a module with everything it EXTENDS (constants, variables and
definitions share one namespace, as in TLA+); INSTANCE builds a scope of the
instantiated module whose constants and variables are bound by-name to the
substituted expressions of the instantiating scope. The key " path" holds the
file that positions in the scope refer to.
"""
from tla import _ast as tla_ast

from .errors import TLAError
from .frontend import pos


class VarB:
    def __init__(self, index, name):
        self.index = index
        self.name = name


class ConstB:
    """A value injected into the generated code's globals under `pyname`."""

    def __init__(self, pyname):
        self.pyname = pyname


class LocalB:
    """A bound variable held in a Python local (or lambda parameter)."""

    def __init__(self, pyname):
        self.pyname = pyname


class DefB:
    """A user definition (operator, or recursive function when node.function)."""

    def __init__(self, node, env, recursive=False, local=False):
        self.node = node
        self.env = env
        self.recursive = recursive
        self.local = local  # a LET definition
        self.params = node.arity or []


class ArgB:
    """An operator argument passed by name: node is compiled in env on each use."""

    def __init__(self, node, env):
        self.node = node
        self.env = env


class OpRefB:
    """An operator passed as a higher-order argument (a DefB, builtin or LAMBDA)."""

    def __init__(self, target):
        self.target = target


class LambdaB:
    def __init__(self, node, env):
        self.node = node
        self.env = env
        self.params = node.parameters


class InstB:
    def __init__(self, env):
        self.env = env


class ParamInstB:
    """P(a, b) == INSTANCE X: an instance for each use P(e1, e2)!Op, with a, b bound to the
    arguments (see instantiate)."""

    def __init__(self, node, env, loader, path):
        self.node = node
        self.env = env
        self.loader = loader
        self.path = path
        self.params = node.arity

    def instantiate(self, args, caller_env):
        if len(args) != len(self.params):
            raise TLAError(f"instance {self.node.name} takes {len(self.params)} arguments, "
                           f"given {len(args)}", pos(self.node, self.path))
        env = dict(self.env)
        for param, arg in zip(self.params, args, strict=True):
            if getattr(param, "arguments", None):
                raise TLAError(f"instance {self.node.name}: an operator parameter is not "
                               f"supported", pos(param, self.path))
            env[getattr(param, "operator", param)] = ArgB(arg, caller_env)
        inst = instance_binding(self.loader, self.node.definiens, env, self.path)
        hook = getattr(self.loader, "override_hook", None)
        if hook is not None:  # the cfg's `X <- Y` and `X = v` apply in this scope too
            hook(inst.env)
        return inst


class BuiltinB:
    def __init__(self, name):
        self.name = name


def flatten_modules(loader, module, seen=None):
    """The module and everything it EXTENDS, dependencies first."""
    seen = set() if seen is None else seen
    out = []
    for dep in module.extends:
        sub = loader.get(dep)
        if sub is not None and sub.name not in seen:
            seen.add(sub.name)
            out += flatten_modules(loader, sub, seen)
    out.append(module)
    return out


def std_modules(loader, module, seen=None):
    """Names of the standard modules reachable through EXTENDS."""
    seen = set() if seen is None else seen
    found = set()
    for dep in module.extends:
        sub = loader.get(dep)
        if sub is None:
            found.add(dep)
        elif dep not in seen:
            seen.add(dep)
            found |= std_modules(loader, sub, seen)
    return found


def build_scope(loader, module, bind_decl, base=None):
    """A flat scope for `module`; bind_decl(name, kind, node, index) binds constants/variables.
    base: the scope the module starts with (a nested module sees its enclosing module's)."""
    env = dict(base or {})
    env.update({" path": module.path, " module": module.name})
    modules = flatten_modules(loader, module)
    var_index = 0
    for mod in modules:
        for name, _arity, node in mod.constants:
            env[name] = bind_decl(name, "constant", (mod.path, node), None)
        for name, node in mod.variables:
            env[name] = bind_decl(name, "variable", (mod.path, node), var_index)
            var_index += 1
    for mod in modules:
        mod_env = env if mod is module else dict(env, **{" path": mod.path})
        add_definitions(loader, mod, mod_env, env)
        # cfg overrides scoped to this module (`Nat <- [M]Op`): see Model
        mod_env.update(getattr(loader, "scoped_overrides", {}).get(mod.name, {}))
    return env


def add_definitions(loader, mod, mod_env, target):
    for unit in mod.tree.units or []:
        kind = type(unit).__name__
        if kind == "OperatorDefinition":
            if type(unit.definiens).__name__ == "Instance" and unit.arity:
                target[unit.name] = ParamInstB(unit, mod_env, loader, mod.path)
                mod_env[unit.name] = target[unit.name]
            elif type(unit.definiens).__name__ == "Instance":
                target[unit.name] = instance_binding(loader, unit.definiens, mod_env, mod.path)
                mod_env[unit.name] = target[unit.name]
            else:
                target[unit.name] = DefB(unit, mod_env, unit.name in mod.recursive)
                mod_env[unit.name] = target[unit.name]
        elif kind in ("Axiom", "Theorem") and getattr(unit, "name", None):
            # ASSUME Name == expr (and THEOREM/LEMMA Name == expr) also defines Name;
            # a named ASSUME ... PROVE sequent is no expression and is left undefined
            expr = unit.expression if kind == "Axiom" else unit.goal
            if type(expr).__name__ == "Sequent":
                continue
            node = tla_ast.OperatorDefinition(name=unit.name, arity=None,
                                              definiens=expr, local=False,
                                              function=False, start=unit.start, end=unit.end)
            target[unit.name] = mod_env[unit.name] = DefB(node, mod_env)
        elif kind == "Instance":
            # an unnamed INSTANCE imports the module's definitions, the named instances
            # among them too (`C == INSTANCE Chan` there makes `C!Op` usable here)
            inst = instance_binding(loader, unit, mod_env, mod.path)
            for name, b in inst.env.items():
                if isinstance(b, (DefB, InstB, ParamInstB)):
                    target[name] = b
                    mod_env[name] = b


def instance_binding(loader, node, outer_env, path):
    """M == INSTANCE X WITH a <- e: X's declarations bound to outer expressions."""
    sub = loader.get(node.name, pos(node, path))
    if sub is None:
        return InstB(dict(outer_env))  # a standard module: its operators are builtins
    substitutions = {w.name: w.expression for w in (node.with_substitution or [])}
    variables, constants = [], []  # (name, binding in the instantiating scope) of X's

    def binding(name, kind, where):
        if name in substitutions and getattr(where[1], "arguments", None):
            return operator_argument(substitutions[name], outer_env)
        if name in substitutions:
            return ArgB(substitutions[name], outer_env)
        if name in outer_env:
            return outer_env[name]
        raise TLAError(f"INSTANCE {node.name}: no substitution for {kind} {name}",
                       pos(node, path))

    def bind_decl(name, kind, where, index):
        b = binding(name, kind, where)
        (variables if kind == "variable" else constants).append((name, b))
        return b

    def own_state_scope():
        """X's scope with X's variables as the variables of a state of X's own (the
        cfg's overrides applied, as to any instance's scope)."""
        env = build_scope(loader, sub, lambda name, kind, where, index: VarB(index, name)
                          if kind == "variable" else binding(name, kind, where), base)
        hook = getattr(loader, "override_hook", None)
        if hook is not None:
            hook(env)
        return env

    base = outer_env if getattr(sub, "enclosing", None) is not None else None
    env = build_scope(loader, sub, bind_decl, base)
    if base is None:  # (a nested module also sees the variables of the one around it)
        env[" instance"] = Instantiation(env, variables, constants, own_state_scope)
    return InstB(env)


class Instantiation:
    """What an instance's scope was made from (key " instance" of that scope, and of
    the scopes copied from it): the scope itself, the instantiated module's variables
    and constants with the bindings that substitute them, and a function building its
    scope over a state of its own (Model.lifted_step_test)."""

    def __init__(self, scope, variables, constants, own_state_scope):
        self.scope = scope
        self.variables = variables
        self.constants = constants
        self.own_state_scope = own_state_scope


def operator_argument(expr, env):
    """The binding for an operator constant `Op(_)` substituted by a name or a LAMBDA."""
    kind = type(expr).__name__
    if kind == "Lambda":
        return LambdaB(expr, env)
    if kind == "OperatorApplication" and not expr.arguments:
        return LazyRefB(expr.operator, env)
    raise TLAError("an operator constant must be substituted by an operator name or LAMBDA",
                   pos(expr, env.get(" path", "?")))


class LazyRefB:
    """A cfg substitution `F <- G` for an operator constant: resolved on use."""

    def __init__(self, name, env):
        self.name = name
        self.env = env
