"""Semantic pass: every name in every definition must resolve, with the right arity.

Compilation is lazy (only what the cfg reaches is compiled), so this walk over
all definitions of the root module and the modules it extends reports an
unknown name or a wrong number of arguments anywhere, with file:line:column.
"""
import re

from tla import _langdef

from .compiler import BUILTIN_FUNCS, BUILTIN_HIGHER, BUILTIN_VALUES, TLCEXT, name_of
from .errors import TLAError
from .frontend import PROOF_LIBRARY, UNIMPLEMENTED, pos
from .scope import DefB, flatten_modules

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
KNOWN = set(BUILTIN_FUNCS) | set(BUILTIN_HIGHER) | set(BUILTIN_VALUES) | {
    "TLCGet", "TLCSet", "JavaTime", "Any", "TRUE", "FALSE"} | set(_langdef.KEYWORDS) | set(TLCEXT)
BINDERS = {"Quantification": "declarations", "SetComprehension": "declarations",
           "Function": "declaration", "SetSlice": "declaration", "Choose": "declaration",
           "TemporalQuantification": "declarations"}


# What each standard module makes visible, counting its LOCAL INSTANCEs generously, and
# which module defines each builtin: a builtin is reported unknown only when no module
# that could provide it is extended or instantiated anywhere in the spec.
PROVIDES = {"Naturals": {"Naturals"}, "Integers": {"Integers", "Naturals"},
            "Reals": {"Reals", "Integers", "Naturals"}, "Sequences": {"Sequences", "Naturals"},
            "FiniteSets": {"FiniteSets", "Naturals", "Sequences"},
            "TLC": {"TLC", "Naturals", "Sequences", "FiniteSets"},
            "Bags": {"Bags", "Naturals", "FiniteSets", "Sequences", "TLC"}}
for _ext in ("TLCExt", "SequencesExt", "FiniteSetsExt", "Json", "Randomization"):
    PROVIDES[_ext] = {"TLC", "Naturals", "Sequences", "FiniteSets", _ext}
# TLAPS names proof backends and proof rules, cited only in proofs: it adds no operator
PROVIDES["TLAPS"] = {"TLAPS"}
# the TLAPS library's theorem modules: what they extend (at most these), and themselves
for _lib in PROOF_LIBRARY:
    PROVIDES[_lib] = {"Naturals", "Integers", "Sequences", "FiniteSets", _lib}
HOME = {}
for _name in ("Nat", "+", "-", "*", "^", "<", ">", "<=", ">=", "=<", "\\leq", "\\geq", "%",
              "\\div", ".."):
    HOME[_name] = "Naturals"
HOME["Int"] = "Integers"
for _name in ("RandomSubset", "RandomSetOfSubsets", "RandomSubsetSet"):
    HOME[_name] = "Randomization"
for _name in ("ToJson", "ToJsonArray", "ToJsonObject", "JsonSerialize", "JsonDeserialize",
              "ndJsonSerialize", "ndJsonDeserialize"):
    HOME[_name] = "Json"
for _name in ("Seq", "Len", "Append", "Head", "Tail", "SubSeq", "SelectSeq", "\\o", "\\circ"):
    HOME[_name] = "Sequences"
for _name in ("Cardinality", "IsFiniteSet"):
    HOME[_name] = "FiniteSets"
for _name in (":>", "@@", "Print", "PrintT", "Assert", "Permutations", "TLCGet", "TLCSet",
              "ToString", "JavaTime", "SortSeq", "TLCEval", "RandomElement"):
    HOME[_name] = "TLC"
for _name in TLCEXT:
    HOME[_name] = "TLCExt"
for _name in ("EmptyBag", "IsABag", "BagToSet", "SetToBag", "BagIn", "CopiesIn",
              "BagCardinality", "BagUnion", "SubBag", "BagOfAll", "(+)", "(-)", "\\oplus",
              "\\ominus", "\\sqsubseteq"):
    HOME[_name] = "Bags"


def visible_standard_modules(loader):
    """Standard modules named in any EXTENDS or INSTANCE of the loaded modules."""
    named = set()
    for mod in loader.modules.values():
        if mod is None:
            continue
        named |= set(mod.extends)
        named |= {i.name for i in mod.instances}
        for unit in mod.tree.units or []:
            if name_of(unit) == "OperatorDefinition" and name_of(unit.definiens) == "Instance":
                named.add(unit.definiens.name)
    out = set()
    for name in named:
        out |= PROVIDES.get(name, set())
    return out


def check_names(loader, root, env):
    std = visible_standard_modules(loader)
    for mod in flatten_modules(loader, root):
        for unit in mod.tree.units or []:
            if name_of(unit) != "OperatorDefinition" or name_of(unit.definiens) == "Instance":
                continue
            bound = {param_name(p) for p in unit.arity or []}
            Walker(env, mod.path, std).walk(unit.definiens, bound)


def param_name(p):
    return p.operator if hasattr(p, "operator") else str(p)


class Walker:
    def __init__(self, env, path, std):
        self.env = env
        self.path = path
        self.std = std
        self.let_arity = {}  # LET-defined operators in scope -> number of parameters
        self.binders = set()  # names bound by the enclosing quantifiers, CHOOSEs, ...

    def fail(self, msg, node):
        raise TLAError(msg, pos(node, self.path))

    def walk(self, node, bound):
        if isinstance(node, list):
            for item in node:
                self.walk(item, bound)
            return
        if not hasattr(node, "symbol"):
            if isinstance(node, tuple):
                for item in node:
                    self.walk(item, bound)
            return
        kind = name_of(node)
        if kind == "OperatorApplication":
            return self.walk_app(node, bound)
        if kind in BINDERS:
            return self.walk_binder(node, getattr(node, BINDERS[kind]), bound)
        if kind == "Let":
            return self.walk_let(node, bound)
        if kind == "Lambda":
            return self.walk(node.expression, bound | {param_name(p) for p in node.parameters})
        if kind == "SubexpressionReference":  # I!Op(F, x): F may be an operator argument
            for item in node.items:
                for a in getattr(item, "arguments", None) or []:
                    if name_of(a) == "OperatorApplication":
                        self.walk_app(a, bound, as_argument=True)
                    else:
                        self.walk(a, bound)
            return
        for field in node._fields:
            if field not in ("symbol", "start", "end"):
                self.walk(getattr(node, field), bound)

    def walk_app(self, node, bound, as_argument=False):
        name = node.operator
        args = node.arguments or []
        home = HOME.get(name)
        if home is not None and home not in self.std and name not in bound \
                and name not in self.env and not (name == "-" and len(args) == 1):
            self.fail(f"unknown operator {name} (defined in the standard module {home}, "
                      f"which the spec does not extend)", node)
        arity = self.let_arity.get(name)
        if name in bound and arity is not None and arity != len(args) \
                and not (as_argument and not args):
            self.fail(f"operator {name} expects {arity} arguments, got {len(args)}", node)
        if IDENT.match(name) and name not in bound:
            b = self.env.get(name)
            if b is None and name not in KNOWN:
                unsupported = sorted(self.std & UNIMPLEMENTED)
                if unsupported:  # most likely one of theirs: say so, as a refusal
                    self.fail(f"unknown operator {name} (the spec extends "
                              f"{', '.join(unsupported)}, whose operators are not supported "
                              "beyond TLC's)", node)
                self.fail(f"unknown operator {name}", node)
            if isinstance(b, DefB) and not b.node.function and len(b.params) != len(args) \
                    and not (as_argument and not args):
                self.fail(f"operator {name} expects {len(b.params)} arguments, got {len(args)}",
                          node)
        for a in args:
            if name_of(a) == "OperatorApplication":
                self.walk_app(a, bound, as_argument=True)
            elif not isinstance(a, str):
                self.walk(a, bound)

    def walk_binder(self, node, decls, bound):
        """A quantifier, CHOOSE, set or function constructor: its bounds in the outer
        scope, its body with its names bound. A name an enclosing one of these already
        binds (`\\E i \\in S : \\A i \\in T : ...`) is SANY's "multiply-defined symbol",
        an error in TLA+, not a shadowing."""
        decls = decls if isinstance(decls, list) else [decls]
        inner, names = set(bound), set()
        for d in decls:
            if name_of(d) == "OperatorApplication" and d.operator == "\\in" and d.arguments:
                target, set_node = d.arguments
                self.walk(set_node, bound)
                names |= target_names(target)
            else:
                names |= target_names(d)
        for name in sorted(names & self.binders):
            self.fail(f"multiply-defined symbol {name}: an enclosing expression binds it "
                      "already", node)
        inner |= names
        outer, self.binders = self.binders, self.binders | names
        try:
            for field in node._fields:
                if field not in ("symbol", "start", "end", "declarations", "declaration"):
                    self.walk(getattr(node, field), inner)
        finally:
            self.binders = outer

    def walk_let(self, node, bound):
        inner = set(bound)
        saved = dict(self.let_arity)
        for d in node.definitions:
            if name_of(d) == "OperatorDefinition":
                inner.add(d.name)
                if not d.function:
                    self.let_arity[d.name] = len(d.arity or [])
        for d in node.definitions:
            if name_of(d) == "OperatorDefinition":
                self.walk(d.definiens, inner | {param_name(p) for p in d.arity or []})
        self.walk(node.expression, inner)
        self.let_arity = saved


def target_names(t):
    if name_of(t) == "Tuple":
        return {i.operator for i in t.items}
    if hasattr(t, "operator"):
        return {t.operator}
    return set()
