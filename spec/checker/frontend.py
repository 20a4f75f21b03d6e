"""Front end: read .tla modules, parse them with the `tla` package, load EXTENDS.

The text is normalised first (tabs expanded, `\\forall`/`\\exists` spelled as
`\\A`/`\\E`), then parsed; the parser's diagnostics (printed on stdout) are
captured and turned into a TLAError with a 1-based line and column. After
parsing, infix operators whose precedence ranges overlap without parentheses
(`a + b % c`) are rejected as SANY does. A Module records its constants,
variables, definitions, instances and assumptions; user modules named in
EXTENDS/INSTANCE are looked up beside the root spec.
"""
import contextlib
import io
import os
import re

from tla import _langdef

from . import parsecache
from .errors import TLAError

STANDARD_MODULES = {"Naturals", "Integers", "Sequences", "FiniteSets", "TLC", "Bags",
                    "Reals", "TLCExt", "SequencesExt", "FiniteSetsExt", "Json", "Randomization",
                    "TLAPS"}

# modules of the TLAPS library that state theorems for proofs (which a model checker does not
# read) and define a few operators of their own: read as empty, like TLAPS
PROOF_LIBRARY = {"NaturalsInduction", "WellFoundedInduction", "FiniteSetTheorems",
                 "SequenceTheorems", "FunctionTheorems", "SequencesExtTheorems",
                 "FiniteSetsExtTheorems", "FoldsTheorems", "BagsTheorems"}
STANDARD_MODULES = STANDARD_MODULES | PROOF_LIBRARY
# known modules whose operators the checker does not provide: an unknown operator in a spec
# that extends one is refused with a note naming them
UNIMPLEMENTED = {"SequencesExt", "FiniteSetsExt"} | PROOF_LIBRARY
# standard modules that provide no operator here: a copy beside the spec is read instead
EMPTY_STANDARD = UNIMPLEMENTED | {"TLAPS"}
# modules of the CommunityModules and TLAPS libraries, which TLC finds on its library path
COMMUNITY_MODULES = {"Functions", "Folds", "Bitwise", "Graphs", "UndirectedGraphs", "IOUtils",
                     "VectorClocks", "DyadicRationals", "BagsExt", "SVG", "CSV", "Relation",
                     "Combinatorics", "Statistics", "ShiViz", "DifferentialEquations"}

SYNONYMS = {"\\land": "/\\", "\\lor": "\\/", "\\lnot": "~", "\\neg": "~", "\\union": "\\cup",
            "\\intersect": "\\cap", "\\geq": ">=", "\\leq": "<=", "=<": "<=", "\\neq": "#",
            "/=": "#", "\\equiv": "<=>", "\\times": "\\X", "\\circ": "\\o",
            "\\oplus": "(+)", "\\ominus": "(-)", "\\leadsto": "~>"}


def canonical_op(op):
    return SYNONYMS.get(op, op)


def normalise(text):
    text = text.expandtabs(8)
    text = re.sub(r"\\forall\b", lambda m: "\\A" + " " * 5, text)
    text = re.sub(r"\\exists\b", lambda m: "\\E" + " " * 5, text)
    text = re.sub(r"\\neq\b", lambda m: "#" + " " * 3, text)
    return text


def pos(node, path):
    start = getattr(node, "start", None)
    if start is None or start.line is None:
        return (path, 0, 0)
    return (path, start.line + 1, start.column + 1)


def parse_module_text(text, path):
    text = normalise(text)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            tree = parsecache.parse(text)
    except Exception as exc:  # the parser raises bare ValueErrors
        where = parse_error_position(buf.getvalue(), path)
        if where[1] == 0:
            where = lexer_error_position(str(exc), text, path)
        raise TLAError(f"syntax error: {describe_parse_error(buf.getvalue(), exc)}",
                       where) from None
    if tree is None:
        raise TLAError("syntax error: no module found", (path, 1, 1))
    check_precedence(tree, path)
    return strip_labels(tree)


def is_prefix_set_op(node):
    return type(node).__name__ == "OperatorApplication" and node.operator in ("UNION", "SUBSET") \
        and node.arguments and len(node.arguments) == 1


def is_set_infix(node):
    return type(node).__name__ == "OperatorApplication" and not node.nonfix \
        and node.arguments and len(node.arguments) == 2 \
        and canonical_op(node.operator) in ("\\cup", "\\cap", "\\")


def strip_labels(node):
    """The tree without position labels (`P0:: e` and `P1(i):: e` become e), and with
    UNION/SUBSET applied to an unparenthesised \\cup, \\cap or \\ regrouped as SANY does."""
    if isinstance(node, list):
        return [strip_labels(n) for n in node]
    if not hasattr(node, "_fields"):
        return node
    if type(node).__name__ == "OperatorApplication" and node.operator == "::" \
            and node.arguments and len(node.arguments) == 2:
        return strip_labels(node.arguments[1])
    if is_prefix_set_op(node) and is_set_infix(node.arguments[0]):
        # SANY reads `UNION a \cup b` as (UNION a) \cup b (both of precedence 8)
        inner = node.arguments[0]
        left = node._replace(arguments=[inner.arguments[0]])
        return strip_labels(inner._replace(arguments=[left, inner.arguments[1]]))
    changes = {}
    for field in node._fields:
        if field in ("symbol", "start", "end"):
            continue
        value = getattr(node, field)
        if isinstance(value, (list, tuple)) and value:
            new = strip_labels(value) if isinstance(value, list) or hasattr(value, "_fields") \
                else tuple(strip_labels(v) for v in value)
            if new is not value and any(a is not b for a, b in zip(new, value, strict=True)):
                changes[field] = new
    return node._replace(**changes) if changes else node


def describe_parse_error(out, exc):
    m = re.search(r"Next symbol in input:\s*Result\(symbol='([^']*)', value='((?:[^'\\]|\\.)*)'",
                  out)
    if m:
        return f"unexpected {m.group(2)!r}"
    return str(exc) or "cannot parse"


def lexer_error_position(message, text, path):
    """Position of the text quoted in the lexer's "Unrecognized characters at" message."""
    m = re.search(r"at: ['\"](.{1,20})", message, re.S)
    if m:
        snippet = m.group(1).encode().decode("unicode_escape", errors="ignore")[:8]
        index = text.find(snippet)
        if index >= 0:
            line = text.count("\n", 0, index) + 1
            return (path, line, index - (text.rfind("\n", 0, index) + 1) + 1)
    return (path, 0, 0)


def parse_error_position(out, path):
    m = re.search(r"Next symbol in input:\s*Result\(.*?line=(\d+), column=(\d+)", out, re.S)
    if not m:
        m = re.search(r"line=(\d+), column=(\d+)", out)
    if not m:
        return (path, 0, 0)
    return (path, int(m.group(1)) + 1, int(m.group(2)) + 1)


PRECEDENCE = {canonical_op(op): rng for op, rng in _langdef.LEXEME_PRECEDENCE.items()
              if isinstance(rng, tuple) and len(rng) == 2}
PRECEDENCE.update({"\\o": (13, 13), "\\X": (10, 13), "\\div": (13, 13), "%": (10, 11),
                   "..": (9, 9), "\\cup": (8, 8), "\\cap": (8, 8), "\\": (8, 8)})
# the infix operators marked associative in Specifying Systems' precedence table: a
# chain of one of them needs no parentheses (a (+) b (+) c); other chains of equal or
# overlapping precedence do (a / b / c)
ASSOCIATIVE = {"/\\", "\\/", "\\cdot", "@@", "\\cap", "\\cup", "##", "$", "$$", "??",
               "\\sqcap", "\\sqcup", "\\uplus", "(+)", "+", "++", "%%", "|", "||", "(-)",
               "-", "--", "&", "&&", "(.)", "\\odot", "(\\X)", "\\otimes", "*", "**",
               "\\bigcirc", "\\bullet", "\\o", "\\star", "\\X"}


def check_precedence(tree, path):
    """Reject unparenthesised infix chains whose precedence ranges overlap."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not (isinstance(node, tuple) and hasattr(node, "symbol")):
            if isinstance(node, tuple):
                stack.extend(node)
            continue
        if type(node).__name__ == "OperatorApplication" and node.arguments and \
                len(node.arguments) == 2 and not node.nonfix:
            check_pair(node, path)
        for field in node._fields:
            value = getattr(node, field)
            if isinstance(value, (list, tuple)):
                stack.append(value)


def check_pair(node, path):
    op = canonical_op(node.operator)
    outer = PRECEDENCE.get(op)
    if outer is None:
        return
    for child in node.arguments:
        if type(child).__name__ != "OperatorApplication" or not child.arguments:
            continue
        if len(child.arguments) != 2 or child.nonfix:
            continue
        cop = canonical_op(child.operator)
        inner = PRECEDENCE.get(cop)
        if inner is None or (cop == op and op in ASSOCIATIVE):
            continue
        if cop == op and op in ("/\\", "\\/"):
            continue
        if inner[0] <= outer[1] and outer[0] <= inner[1]:
            raise TLAError(f"precedence conflict between {op} and {cop}; add parentheses",
                           pos(child, path))


class Module:
    """One parsed module: declarations and definitions in source order."""

    def __init__(self, name, path, tree):
        self.name = name
        self.path = path
        self.tree = tree
        self.extends = [e.operator for e in (tree.extendees or [])]
        self.constants = []   # (name, arity, node)
        self.variables = []   # (name, node)
        self.defs = {}        # name -> definition node
        self.recursive = set()
        self.assumes = []     # expression nodes
        self.instances = []   # unnamed INSTANCE nodes
        self.enclosing = None  # for a module nested in another: that module
        for unit in tree.units or []:
            self.add_unit(unit)

    def add_unit(self, unit):
        kind = type(unit).__name__
        if kind == "Constants":
            for n in unit.names:
                name = n.operator if hasattr(n, "operator") else n.name
                arity = len(n.arguments) if getattr(n, "arguments", None) else 0
                self.constants.append((name, arity, n))
        elif kind == "Variables":
            for n in unit.names:
                self.variables.append((n.operator, n))
        elif kind == "OperatorDefinition":
            self.defs[unit.name] = unit
        elif kind == "RecursiveOperators":
            for n in unit.names:
                self.recursive.add(n.operator)
        elif kind == "Axiom":
            if unit.axiom_keyword in ("ASSUME", "ASSUMPTION"):
                self.assumes.append(unit.expression)
        elif kind == "Instance":
            self.instances.append(unit)
        elif kind in ("Theorem", "Module"):
            pass


def trailing_modules(text, tree, path):
    """The modules written after the first one in the same file, each parsed with the text
    before it blanked out (so its positions are the file's)."""
    text = normalise(text)
    lines = text.split("\n")
    while tree is not None and tree.end is not None and tree.end.line is not None:
        done = min(tree.end.line + 1, len(lines))
        rest = "\n".join(lines[done:])
        if not re.search(r"^\s*-{4,}\s*MODULE\s+\w+\s*-{4,}", rest, flags=re.M):
            return
        try:  # text after the module that only looks like one (in a comment): not read
            tree = parse_module_text("\n" * done + rest, path)
        except TLAError:
            return
        yield tree


class Loader:
    """Parses the root module and every user module it extends or instantiates."""

    def __init__(self, root_path):
        self.folder = os.path.dirname(os.path.abspath(root_path))
        self.modules = {}
        self.nested = {}  # (file, name) -> a module nested in another one of that file
        name = os.path.splitext(os.path.basename(root_path))[0]
        self.root = self.load_file(root_path, name)

    def load_file(self, path, name):
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise TLAError(f"cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            line = exc.object[:exc.start].count(b"\n") + 1
            raise TLAError(f"cannot read {path}: not UTF-8 text (byte {exc.start + 1}, "
                           f"line {line})") from None
        tree = parse_module_text(text, path)
        if tree.name != name:
            raise TLAError(f"module name {tree.name} does not match the file name {name}",
                           (path, 1, 1))
        module = Module(name, path, tree)
        self.modules[name] = module
        here = [module]
        # a module nested in another is visible (by INSTANCE) inside it; modules that follow
        # the first one in the same file are visible to every module of the file, as in SANY
        for tree_ in trailing_modules(text, tree, path):
            if tree_.name not in self.modules:
                self.modules[tree_.name] = Module(tree_.name, path, tree_)
                here.append(self.modules[tree_.name])
        for mod in list(here):
            here += self.register_nested(mod)
        for mod in here:
            for dep in mod.extends:
                self.get(dep, pos(mod.tree, path))
        return module

    def register_nested(self, module):
        """The modules nested in module (at any depth), kept by (file, name): only an
        INSTANCE written in the same file can name one (see get)."""
        found = []
        for unit in module.tree.units or []:
            if type(unit).__name__ == "Module":
                inner = Module(unit.name, module.path, unit)
                inner.enclosing = module  # its scope starts with the enclosing module's
                self.nested[(module.path, unit.name)] = inner
                found += [inner] + self.register_nested(inner)
        return found

    def get(self, name, where=None):
        if where is not None and (where[0], name) in self.nested:
            return self.nested[(where[0], name)]
        if name in STANDARD_MODULES and not (name in EMPTY_STANDARD and os.path.exists(
                os.path.join(self.folder, name + ".tla"))):
            return None
        if name in self.modules:
            return self.modules[name]
        path = os.path.join(self.folder, name + ".tla")
        if not os.path.exists(path):
            if name in COMMUNITY_MODULES:
                raise TLAError(f"module {name} (a community module) is not supported and "
                               f"not found beside the spec (looked for {path})", where)
            raise TLAError(f"cannot find module {name} (looked for {path})", where)
        self.modules[name] = None  # guards against cycles
        return self.load_file(path, name)
