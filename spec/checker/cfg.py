"""Parser for TLC .cfg files.

Tokenises the file (comments `\\*` and `(* *)` dropped), then reads sections
keyed by TLC's keywords. Constant right-hand sides are integers, strings,
booleans, model values (bare identifiers), tuples `<<..>>`, records `[a |-> v]`
and nested sets of these (`c = [M]v` assigns c inside module M only); `c <- op`
records a substitution by an operator of the root module, `c <- [M]op` one that
applies inside module M only.
"""
import re

from .errors import TLAError
from .values import ModelValue, fn_dict

TOKEN = re.compile(r'\s+|\\\*[^\n]*|\(\*.*?\*\)|"(?:[^"\\]|\\.)*"|<-|<<|>>|\|->|-?\d+'
                   r"|[A-Za-z_][A-Za-z0-9_!]*|[{}(),=\[\]]|.", re.S)

KEYWORDS = {
    "CONSTANT": "constants", "CONSTANTS": "constants", "INIT": "init", "NEXT": "next",
    "SPECIFICATION": "spec", "INVARIANT": "invariants", "INVARIANTS": "invariants",
    "PROPERTY": "properties", "PROPERTIES": "properties", "CONSTRAINT": "constraints",
    "CONSTRAINTS": "constraints", "ACTION_CONSTRAINT": "action_constraints",
    "ACTION_CONSTRAINTS": "action_constraints", "SYMMETRY": "symmetry", "VIEW": "view",
    "CHECK_DEADLOCK": "check_deadlock", "ALIAS": "alias", "POSTCONDITION": "postcondition",
    "POSTCONDITIONS": "postcondition", "_POSSIBLE": "possible",
}


class Config:
    def __init__(self):
        self.constants = {}      # name -> value
        self.substitutions = {}  # name -> operator name
        self.scoped = {}         # (module, name) -> operator name: `name <- [module]op`
        self.scoped_values = {}  # (module, name) -> value: `name = [module]value`
        self.init = None
        self.next = None
        self.spec = None
        self.invariants = []
        self.properties = []
        self.constraints = []
        self.action_constraints = []
        self.symmetry = None
        self.view = None
        self.check_deadlock = True
        self.alias = None
        self.postconditions = []
        self.positions = {}      # name -> (path, line, col) of its mention


def tokenize(text, path):
    out = []
    line, col_start = 1, 0
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        where = (path, line, m.start() - col_start + 1)
        newlines = tok.count("\n")
        if newlines:
            line += newlines
            col_start = m.start() + tok.rindex("\n") + 1
        if tok.isspace() or tok.startswith("\\*") or tok.startswith("(*"):
            continue
        out.append((tok, where))
    return out


class CfgParser:
    def __init__(self, text, path):
        self.toks = tokenize(text, path)
        self.i = 0
        self.path = path
        self.cfg = Config()

    def peek(self):
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def where(self):
        if self.i < len(self.toks):
            return self.toks[self.i][1]
        return (self.path, 0, 0)

    def take(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self):
        while self.peek() is not None:
            tok, where = self.take()
            section = KEYWORDS.get(tok)
            if section is None:
                raise TLAError(f"unexpected {tok!r} in the configuration file", where)
            getattr(self, "section_" + section)(section)
        return self.cfg

    def names(self):
        out = []
        while self.peek() is not None and self.peek() not in KEYWORDS:
            tok, where = self.take()
            if not re.match(r"[A-Za-z_]", tok):
                raise TLAError(f"expected a name, got {tok!r}", where)
            self.cfg.positions.setdefault(tok, where)
            out.append(tok)
        return out

    def one_name(self, section):
        found = self.names()
        if len(found) != 1:
            raise TLAError(f"{section.upper()} expects one name", self.where())
        return found[0]

    def section_constants(self, _):
        while self.peek() is not None and self.peek() not in KEYWORDS:
            name, where = self.take()
            self.cfg.positions.setdefault(name, where)
            op, owhere = self.take() if self.peek() else (None, where)
            if op == "=" and self.peek() == "[" and self.i + 2 < len(self.toks) \
                    and self.toks[self.i + 2][0] == "]":
                self.take()
                module, _ = self.take()
                self.take()
                self.cfg.scoped_values[(module, name)] = self.value()
            elif op == "=":
                self.cfg.constants[name] = self.value()
            elif op == "<-":
                module = None
                if self.peek() == "[":
                    self.take()
                    module, _ = self.take()
                    if self.peek() != "]":
                        raise TLAError("expected ] after the module of a scoped override",
                                       self.where())
                    self.take()
                target, twhere = self.take()
                self.cfg.positions.setdefault(target, twhere)
                if module is None:
                    self.cfg.substitutions[name] = target
                else:
                    self.cfg.scoped[(module, name)] = target
            elif op == "(":
                raise TLAError(f"a constant operator given value by value ({name}(...) = v) "
                               f"is not supported", where)
            else:
                raise TLAError(f"expected = or <- after constant {name}", owhere)

    def value(self):
        if self.peek() is None:
            raise TLAError("missing constant value", self.where())
        tok, where = self.take()
        if tok == "<<":
            return tuple(self.items(">>"))
        if tok == "[":
            return self.record()
        if tok == "{":
            items = []
            while self.peek() != "}":
                items.append(self.value())
                if self.peek() == ",":
                    self.take()
                elif self.peek() != "}":
                    raise TLAError("expected , or } in a set", self.where())
            self.take()
            return frozenset(items)
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if tok.startswith('"'):
            return tok[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if tok in ("TRUE", "FALSE"):
            return tok == "TRUE"
        if re.match(r"[A-Za-z_]", tok):
            return ModelValue(tok)
        raise TLAError(f"unsupported constant value {tok!r}", where)

    def items(self, close):
        out = []
        while self.peek() != close:
            out.append(self.value())
            if self.peek() == ",":
                self.take()
            elif self.peek() != close:
                raise TLAError(f"expected , or {close} in a constant value", self.where())
        self.take()
        return out

    def record(self):
        """[a |-> v, b |-> w] as a constant value."""
        fields = {}
        while self.peek() != "]":
            name, where = self.take()
            if not re.match(r"[A-Za-z_]", name) or self.peek() != "|->":
                raise TLAError("expected field |-> value in a record", where)
            self.take()
            fields[name] = self.value()
            if self.peek() == ",":
                self.take()
            elif self.peek() != "]":
                raise TLAError("expected , or ] in a record", self.where())
        self.take()
        return fn_dict(fields) if fields else ()

    def section_init(self, s):
        self.cfg.init = self.one_name(s)

    def section_next(self, s):
        self.cfg.next = self.one_name(s)

    def section_spec(self, s):
        self.cfg.spec = self.one_name(s)

    def section_invariants(self, _):
        self.cfg.invariants += self.names()

    def section_properties(self, _):
        self.cfg.properties += self.names()

    def section_constraints(self, _):
        self.cfg.constraints += self.names()

    def section_action_constraints(self, _):
        self.cfg.action_constraints += self.names()

    def section_symmetry(self, s):
        self.cfg.symmetry = self.one_name(s)

    def section_view(self, s):
        self.cfg.view = self.one_name(s)

    def section_alias(self, s):
        self.cfg.alias = self.one_name(s)

    def section_possible(self, _):
        raise TLAError("_POSSIBLE (TLC's check that states or steps are reachable) is not "
                       "supported", self.toks[self.i - 1][1])

    def section_postcondition(self, _):
        self.cfg.postconditions += self.names()

    def section_check_deadlock(self, _):
        tok, where = self.take()
        if tok not in ("TRUE", "FALSE"):
            raise TLAError("CHECK_DEADLOCK expects TRUE or FALSE", where)
        self.cfg.check_deadlock = tok == "TRUE"


def parse_cfg(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise TLAError(f"cannot read {path}: {exc.strerror}") from None
    if str(path).endswith(".tla"):
        text = embedded_config(text, path)
    return CfgParser(text, path).parse()


def embedded_config(text, path):
    """The configuration inside a module file, read as TLC reads it when -config names a
    .tla: the lines after `---- CONFIG Name ----`, Name being the file's name without
    .tla, up to a line that starts with `====` (none such: an empty configuration). The
    text around them is blanked, so that positions stay those of the file."""
    stem = re.escape(re.split(r"[\\/]", str(path))[-1][:-len(".tla")])
    m = re.search(rf"^-{{4,}}[ \t]*CONFIG[ \t]+{stem}[ \t]*-{{4,}}[ \t]*$(.*?)(?=^====|\Z)",
                  text, re.M | re.S)
    return "" if m is None else re.sub(r"[^\n]", " ", text[:m.start(1)]) + m.group(1)
