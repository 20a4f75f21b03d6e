"""The repository model: a small Python project as text, patch merges, and the target.

How it works. ``FIXTURE`` is the project every coding run starts from (a slug helper, an
app that uses it, their tests). An agent's work is a list of patch operations (add a
definition, replace one, rename a name, put a whole file); ``merge`` applies them to a tree
the way a blind merge does, so unrelated edits survive and a patch applied twice adds its
definition twice. ``RepoModel`` is the repository as a target, with the semantics of
``gate.repo.Repo``: a change (after-images with before-image digests) is applied only with
a fencing token no lower than any seen for its items and only onto its before-images, its
images journaled first when the caller asks, one file at a time (``on_file`` runs after
each, so a crash can stop the writer half way); ``recover`` completes journaled changes
forward, ``lookup`` reports after/before/mixed, ``restore`` puts before-images back, and
``patch`` is a blind merge with no checks. ``run_tests`` executes a tree's ``test_*.py``
files in fresh module namespaces (the control plane's verification in the simulator).
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel.changes import Change, file_digest, revert

Tree = dict[str, str]
Op = dict[str, Any]

FIXTURE: Tree = {
    "text.py": 'def slugify(s):\n    """Lower-case words joined by dashes."""\n'
               '    return "-".join(s.lower().split())\n',
    "app.py": 'import text\n\n\ndef page(title):\n    return "<h1>" + title + "</h1>"\n\n\n'
              'def tag(word):\n    return "#" + text.slugify(word)\n',
    "test_text.py": 'import text\n\n\ndef test_slugify():\n'
                    '    assert text.slugify("Big Cat") == "big-cat"\n\n\n'
                    'def test_shout():\n    if hasattr(text, "shout"):\n'
                    '        assert text.shout("hi") == "HI!"\n',
    "test_app.py": 'import app\nimport text\n\n\ndef test_page():\n'
                   '    assert app.page("Hi") == "<h1>Hi</h1>"\n\n\ndef test_tag():\n'
                   '    assert app.tag("Big Cat") == "#" + text.slugify("Big Cat")\n\n\n'
                   'def test_post_url():\n    if hasattr(app, "post_url"):\n'
                   '        assert app.post_url("Hello World") == "/posts/hello-world"\n\n\n'
                   'def test_banner():\n    if hasattr(app, "banner"):\n'
                   '        assert app.banner("hi") == "<b>HI!</b>"\n',
    "test_extra.py": 'def test_footer():\n    try:\n        import footer\n'
                     '    except ImportError:\n        return\n'
                     '    assert footer.footer() == "<footer/>"\n',
}

# ---------------------------------------------------------------- patch merges


def _span(source: str, name: str) -> tuple[int, int] | None:
    """Line span (0-based, end exclusive) of the top-level definition of ``name``."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    for node in module.body:
        if getattr(node, "name", None) == name and node.end_lineno is not None:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            return start - 1, node.end_lineno
    return None


def merge_one(text: str | None, op: Op) -> str | None:
    kind = op["op"]
    if kind == "put":
        return str(op["text"])
    base = text or ""
    if kind == "add" or (kind == "replace" and _span(base, op["name"]) is None):
        sep = "\n\n\n" if base.strip() else ""
        return base.rstrip("\n") + sep + str(op["code"]).rstrip("\n") + "\n"
    if kind == "replace":
        span = _span(base, op["name"])
        assert span is not None
        lines = base.splitlines(keepends=True)
        code = str(op["code"]).rstrip("\n") + "\n"
        return "".join(lines[:span[0]]) + code + "".join(lines[span[1]:])
    if kind == "rename":
        return re.sub(rf"\b{re.escape(op['old'])}\b", op["new"], base)
    if kind == "sub":
        return base.replace(op["old"], op["new"])
    raise ValueError(f"unknown patch op {kind!r}")


def merge(tree: Mapping[str, str], ops: list[Op]) -> dict[str, str | None]:
    """The writes a patch makes on ``tree``: path -> new text."""
    out: dict[str, str | None] = {}
    for op in ops:
        path = op["path"]
        out[path] = merge_one(out.get(path, tree.get(path)), op)
    return out


# ---------------------------------------------------------------- the target


@dataclass
class RepoModel:
    """The repository, in memory, as a target (see ``gate.repo.Repo`` for the real one)."""

    files: Tree = field(default_factory=lambda: dict(FIXTURE))
    tokens: dict[str, int] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # change id -> images

    def tree(self) -> Tree:
        return dict(self.files)

    def write(self, path: str, text: str | None) -> None:
        if text is None:
            self.files.pop(path, None)
        else:
            self.files[path] = text

    def lookup(self, change: Change, journaled: bool = True) -> str:
        """As gate.repo's: a journaled change without a record never landed here."""
        rec = self.records.get(change.id)
        if rec is not None:
            return {"applied": "after", "applying": "mixed", "restored": "before"}[rec["state"]]
        after = sum(file_digest(self.files.get(w.path)) == file_digest(w.after)
                    for w in change.writes)
        before = sum(file_digest(self.files.get(w.path)) == w.before for w in change.writes)
        n = len(change.writes)
        if before == n:
            return "before"
        if journaled:
            return "neither"
        return "after" if after == n else "mixed" if after + before == n else "neither"

    def apply(self, change: Change, token: int | None, journaled: bool,
              on_file: Callable[[int], bool]) -> str:
        """"applied" | "deduplicated" | "stale_token" | "before_mismatch" | "own_tests" |
        "crashed" (the writer died after some files)."""
        if change.edits_own_tests():
            return "own_tests"
        rec = self.records.get(change.id)
        if rec is not None and rec["state"] == "applying":
            return self._finish(rec, on_file)
        if self.lookup(change, journaled) == "after":
            return "deduplicated"
        if token is not None and any(self.tokens.get(i, -1) > token for i in change.items):
            return "stale_token"
        if any(file_digest(self.files.get(w.path)) != w.before for w in change.writes):
            return "before_mismatch"
        rec = {"id": change.id, "state": "applying",
               "files": [(w.path, self.files.get(w.path), w.after) for w in change.writes]}
        if journaled:
            self.records[change.id] = rec
        if token is not None:
            self.fence(change.items, token)
        return self._finish(rec, on_file)

    def _finish(self, rec: dict[str, Any], on_file: Callable[[int], bool]) -> str:
        for n, (path, _, after) in enumerate(rec["files"], 1):
            self.write(path, after)
            if n < len(rec["files"]) and on_file(n):
                return "crashed"
        rec["state"] = "applied"
        return "applied"

    def fence(self, items: tuple[str, ...] | list[str], token: int) -> None:
        for i in items:
            self.tokens[i] = max(token, self.tokens.get(i, -1))

    def recover(self) -> list[str]:
        done = [cid for cid, rec in self.records.items() if rec["state"] == "applying"]
        for cid in done:
            self._finish(self.records[cid], lambda n: False)
        return done

    def befores(self, change: Change) -> dict[str, str | None]:
        rec = self.records.get(change.id)
        return {p: b for p, b, _ in rec["files"]} if rec else {}

    def restore(self, change: Change) -> None:
        rec = self.records.get(change.id)
        if rec is None:
            return
        for path, before, after in rec["files"]:
            self.write(path, revert(self.files.get(path), before, after))
        rec["state"] = "restored"

    def patch(self, ops: list[Op], on_file: Callable[[int], bool]) -> str:
        writes = merge(self.files, ops)
        for n, (path, text) in enumerate(sorted(writes.items()), 1):
            self.write(path, text)
            if n < len(writes) and on_file(n):
                return "crashed"
        return "applied"

    def verify(self, tree: Mapping[str, str] | None = None) -> str:
        return run_tests(self.files if tree is None else tree)


# ---------------------------------------------------------------- verification


class _Fail(Exception):
    pass


_VERIFIED: dict[frozenset[tuple[str, str]], str] = {}


def run_tests(tree: Mapping[str, str]) -> str:
    """"passed" or "failed": every test_* function of every test_*.py file of the tree."""
    key = frozenset(tree.items())
    if key not in _VERIFIED:
        _VERIFIED[key] = _run(dict(tree))
    return _VERIFIED[key]


def _run(tree: Tree) -> str:
    modules: dict[str, dict[str, Any]] = {}

    def load(name: str) -> Any:
        if name not in modules:
            source = tree.get(f"{name}.py")
            if source is None:
                raise ImportError(name)
            ns: dict[str, Any] = {"__name__": name, "__builtins__": env}
            modules[name] = ns
            exec(compile(source, f"{name}.py", "exec"), ns)  # noqa: S102 - the model's code
        return _Namespace(modules[name])

    def imp(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (),
            level: int = 0) -> Any:
        if f"{name}.py" in tree:
            return load(name)
        return builtins.__import__(name, globals_, locals_, fromlist, level)

    env = {**vars(builtins), "__import__": imp}
    try:
        for path in sorted(p for p in tree if p.startswith("test_") and p.endswith(".py")):
            ns = vars(load(path[:-3]))
            for name, fn in sorted(ns.items()):
                if name.startswith("test_") and callable(fn):
                    fn()
    except Exception:  # noqa: BLE001 - any exception is a failing test
        return "failed"
    return "passed"


class _Namespace:
    def __init__(self, ns: dict[str, Any]) -> None:
        self.__dict__.update(ns)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)
