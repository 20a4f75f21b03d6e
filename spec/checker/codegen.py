"""Tables and small helpers shared by the code generator (see compiler.py).

Code is generated as Python source text; these helpers produce the fragments
that are worth inlining (tuple application, EXCEPT on a tuple, equality with a
kind check) and hold the tables mapping TLA+ operators to runtime calls.
"""
import re

from .errors import TLAError
from .frontend import canonical_op
from .values import INT, NAT, STRING

BOOLEAN_SET = frozenset([False, True])


FOLDABLE = {"OperatorApplication", "SetEnumeration", "SetOfFunctions", "SetOfRecords",
            "Function", "SetComprehension", "SetSlice", "Record", "Except", "If",
            "Cases", "FunctionApplication", "Field", "Quantification", "Choose"}
LOCAL_NAME = re.compile(r"\b(s|c_\d+|n_\d+|b_\w+|at_\d+|tup_\d+|self_\w+|key_\d+|p_\w+|x_\d+"
                        r"|chg_\d+|_rt_tlcget|_tlc_level|tlc_print\w*|enabled_\d+|rec_\w+)\b")


# The binders of generated code: `for x in`, `for (x, y) in`, `lambda x, y:`. Two patterns
# that each begin with their keyword, so the regex engine skips to the keyword's next
# occurrence (one pattern of both, led by `\b`, tried every position of the code: ~18
# times slower on braf's megabyte units). The lookbehind after the keyword is the `\b`
# before it. In Python code neither's match can begin inside the other's, so together
# they find what the alternation found. The names are read lazily (`+?`): in
# `for a in K for b in L` each clause is a binder of its own.
FOR_BINDER = re.compile(r"for(?<!\wfor) \(?([\w, ]+?)\)? in\b")
LAMBDA_BINDER = re.compile(r"lambda(?<!\wlambda) ([\w, ]*):")


_SCOPES = {}


def local_scope(code):
    """(free, bound): the local names generated code mentions without binding them, and
    those it binds itself (in a for-clause or as a lambda parameter); remembered."""
    got = _SCOPES.get(code)
    if got is None:
        names = set(LOCAL_NAME.findall(code))
        bound = set()
        if names:
            for group in FOR_BINDER.findall(code) + LAMBDA_BINDER.findall(code):
                bound.update(n.strip() for n in group.split(","))
        if len(_SCOPES) > 50000:
            _SCOPES.clear()
        got = _SCOPES[code] = (frozenset(names - bound), frozenset(bound & names))
    return got


def has_free_local(code):
    """Does generated code mention a local name it does not bind itself? Code without
    one is constant and may be folded."""
    return bool(local_scope(code)[0]) or "_rt.random" in code


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


def field_code(f, key):
    """f[key] for f a plain name and key a string or constant that is no number: read from
    f's dict when f is a function stored as one (a record field), else _ap's way
    (expressions.FIELD_CODE recognises this spelling)."""
    return f"({f}[{key}] if {f}.__class__ is _FnDict and {key} in {f} else _ap({f}, {key}))"


def apply_code(f, key):
    """f[key], with the common tuple case inlined when both are plain names."""
    if f.isidentifier() and key.isdigit() and int(key) > 0:
        return f"({f}[{int(key) - 1}] if {f}.__class__ is tuple and len({f}) >= {key} " \
               f"else _ap({f}, {key}))"
    if f.isidentifier() and key.startswith("'") and SIMPLE_CODE.match(key):  # a record field
        return field_code(f, key)
    if f.isidentifier() and SIMPLE_CODE.match(key) and not key.startswith("'"):
        # a key of unknown kind: f a tuple (a sequence), else a dict (model values...)
        return f"({f}[{key} - 1] if {f}.__class__ is tuple and 0 < {key} <= len({f}) " \
               f"else {f}[{key}] if {f}.__class__ is _FnDict and {key} in {f} " \
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
    "SubBag": ("_rt.sub_bags", 1),
    "RandomElement": ("_rt.random_element", 1), "RandomSubset": ("_rt.random_subset", 2),
    "RandomSetOfSubsets": ("_rt.random_set_of_subsets", 3),
    "RandomSubsetSet": ("_rt.random_subset_set", 3),
    "ToJson": ("_rt.to_json", 1), "ToJsonArray": ("_rt.to_json", 1),
    "ToJsonObject": ("_rt.to_json", 1), "JsonSerialize": ("_rt.json_serialize", 2),
    "ndJsonSerialize": ("_rt.ndjson_serialize", 2),
    "JsonDeserialize": ("_rt.json_deserialize", 1),
    "ndJsonDeserialize": ("_rt.ndjson_deserialize", 1),
}
# operators with an operator argument: name -> (function, the operator argument's position,
# its arity); the function takes the other argument's value, then the operator
BUILTIN_HIGHER = {"SelectSeq": ("_rt.selectseq", 1, 1), "SortSeq": ("_rt.sortseq", 1, 2),
                  "BagOfAll": ("_rt.bag_of_all", 0, 1)}
# TLCExt's operators and their arities (Compiler.apply_tlcext)
TLCEXT = {"AssertEq": 2, "AssertError": 2, "TLCGetOrDefault": 2, "TLCGetAndSet": 4, "Trace": 0,
          "CounterExample": 0, "ToTrace": 1, "TLCModelValue": 1, "TLCDefer": 1, "TLCNoOp": 1,
          "PickSuccessor": 1, "TLCCache": 2, "TLCFP": 1, "TLCEvalDefinition": 1}
BUILTIN_VALUES = {"Nat": NAT, "Int": INT, "BOOLEAN": BOOLEAN_SET, "STRING": STRING,
                  "EmptyBag": ()}
TEMPORAL = {"[]", "<>", "~>", "-+->", "\\cdot"}


class Py:
    """A pseudo-node standing for an already-compiled Python local."""

    def __init__(self, pyname):
        self.pyname = pyname
        self.start = None


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


def tlc_get(key, level, stats):
    """TLCGet: "level" while checking; the run's counts ("distinct", "generated",
    "diameter", "queue") once it has ended, for a POSTCONDITION."""
    if key == "level":
        return level[0]
    if key.__class__ is str and key in stats:
        return stats[key]
    raise TLAError(f"TLCGet({key!r}) is not supported")

