"""The `tla` package's parser, with its LR tables read from a cache instead of rebuilt.

Building `tla`'s parser re-reads its grammar from method docstrings (through
`inspect`, which tokenizes the package's source) and rebuilds the action table:
about a third of a second per process, more than most small models take to
check. The first process stores the finished table (states, productions and
the names of the grammar methods that reduce them) with `pickle` in the user's
cache folder ($XDG_CACHE_HOME or ~/.cache, then spec-checker/), keyed by the
versions of `tla`, `parstools` and Python and the package's location; later
processes rebuild the parser from it in a few milliseconds. Any problem with
the cache (unwritable folder, damaged file, other package layout) falls back
to building the parser the package's own way.

Parsed modules are kept the same way: the tree of a module text is pickled
under trees/, named by a hash of the versions and the whole text, so an edited
module is simply parsed again (a tree is about 100 KB; the folder may be
deleted at any time). Reading a tree marks it used (its mtime); each new tree
prunes the folder: trees unused for MAX_AGE_DAYS go, then the least recently
used beyond MAX_TREE_BYTES.
"""
import hashlib
import os
import pickle
import sys
import time

import tla
from parstools._grammars import Production
from tla import _lre

FORMAT = 2
MAX_AGE_DAYS = 30
MAX_TREE_BYTES = 200 * 2**20


def version_tag():
    import parstools
    versions = f"{getattr(tla, '__version__', '?')}-{getattr(parstools, '__version__', '?')}"
    return f"{FORMAT}-{versions}-{sys.version_info[0]}.{sys.version_info[1]}-{_lre.__file__}"


def cache_folder():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "spec-checker")


def cache_path():
    digest = hashlib.sha256(version_tag().encode()).hexdigest()[:16]
    return os.path.join(cache_folder(), f"tla_tables_{digest}.pickle")


def tree_path(text):
    """Where the tree of a module text is kept: named by the text and the versions."""
    digest = hashlib.sha256((version_tag() + "\0" + text).encode()).hexdigest()[:32]
    return os.path.join(cache_folder(), "trees", f"{digest}.pickle")


def store(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def dump_tables(gp):
    """The built GeneratingParser's tables as plain data (picklable)."""
    names = {}
    for eq, fn in gp._tree_map.items():
        if getattr(fn, "__self__", None) is gp.grammar:
            names[eq] = fn.__name__
        elif getattr(fn, "__name__", "") == "unit":
            names[eq] = ""
        else:
            raise ValueError(f"unexpected reducer for {eq}")
    actions = {node: {sym: (a.state, None if a.equation is None else
                            (a.equation.symbol, tuple(a.equation.expansion)), a.eq_str)
                      for sym, a in row.items()}
               for node, row in gp._actions.items()}
    return {"initial": gp._initial, "actions": actions, "names": names}


def unit(p):
    p[0] = p[1]


def load_tables(data):
    gp = object.__new__(_lre.GeneratingParser)
    gp.grammar = _lre.Grammar()
    gp._initial = data["initial"]
    shared = {}  # the parser only reads its actions: one object per distinct action
    Action = _lre.Action
    actions = {}
    for node, row in data["actions"].items():
        out = actions[node] = {}
        for sym, key in row.items():
            action = shared.get(key)
            if action is None:
                state, eq, eq_str = key
                action = shared[key] = Action(
                    state=state, equation=None if eq is None else Production(*eq),
                    eq_str=eq_str)
            out[sym] = action
    gp._actions = actions
    gp._tree_map = {eq: getattr(gp.grammar, name) if name else unit
                    for eq, name in data["names"].items()}
    return gp


def build_parser():
    """A tla._lre.Parser whose generating parser comes from the cache when possible."""
    parser = _lre.Parser()
    path = cache_path()
    gp = None
    try:
        with open(path, "rb") as fh:
            gp = load_tables(pickle.load(fh))
    except (OSError, ValueError, EOFError, TypeError, KeyError, AttributeError,
            pickle.UnpicklingError):
        gp = None
    if gp is None:
        gp = _lre.GeneratingParser()
        try:
            store(path, pickle.dumps(dump_tables(gp), protocol=pickle.HIGHEST_PROTOCOL))
        except (ValueError, TypeError, AttributeError):
            pass
    parser._lexer = _lre.OperatorLexer()
    parser._parser = gp
    return parser


_PARSER = []


def parse(text):
    """tla.parse(text): the tree kept for this very text if there is one, else parsed
    with the cached parser (and kept). A text that fails to parse is never kept."""
    path = tree_path(text)
    try:
        with open(path, "rb") as fh:
            tree = pickle.load(fh)
        os.utime(path)
        return tree
    except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError,
            pickle.UnpicklingError):
        pass
    if not _PARSER:
        try:
            _PARSER.append(build_parser())
        except Exception:  # any surprise in the package's layout: its own way
            _PARSER.append(tla)
    tree = _PARSER[0].parse(text)
    if tree is not None:
        limit = sys.getrecursionlimit()
        try:
            sys.setrecursionlimit(max(limit, 20000))
            store(path, pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL))
            prune(os.path.dirname(path))
        except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
            pass
        finally:
            sys.setrecursionlimit(limit)
    return tree


def prune(folder, max_bytes=MAX_TREE_BYTES, max_age=MAX_AGE_DAYS * 86400.0, now=None):
    """Remove the kept trees unused for max_age seconds, then, most recently used first,
    every tree beyond max_bytes in all."""
    now = time.time() if now is None else now
    try:
        found = []
        for entry in os.scandir(folder):
            if entry.name.endswith(".pickle"):
                st = entry.stat()
                found.append((st.st_mtime, st.st_size, entry.path))
    except OSError:
        return
    total = 0
    for mtime, size, path in sorted(found, reverse=True):
        total += size
        if now - mtime > max_age or total > max_bytes:
            try:
                os.remove(path)
            except OSError:
                pass
