"""Symbol digests for code premises: what a change reads and defines, found with ``ast``.

How it works. A top-level definition (function, class, or a simple ``NAME = ...``) is
normalised by parsing it, dropping docstrings everywhere in it and dumping the syntax tree
without positions: whitespace, comments, docstrings and the other definitions of the file do
not reach the digest; a changed signature, body, decorator or default does. A symbol's digest
is taken over every top-level definition of that name in the tree (sorted by path), or
``"absent"``, so a rename (the old name disappears) and a second implementation of the same
name elsewhere both change it. A file that does not parse poisons every digest it could hold.

The symbols a change reads are the names loaded inside the definitions it adds or changes
(plain names and ``module.name`` attributes) that some file of the tree defines at top level,
optionally closed over their in-repository callees. Pure: text in, digests out, no I/O.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterable, Mapping

ABSENT = "absent"
Tree = Mapping[str, str]  # path -> source text (Python files only are parsed)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def sha(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _names_bound(node: ast.stmt) -> list[str]:
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return []


def definitions(source: str) -> dict[str, list[ast.stmt]] | None:
    """Top-level definitions by name (None when the source does not parse)."""
    module = _parse(source)
    if module is None:
        return None
    out: dict[str, list[ast.stmt]] = {}
    for node in module.body:
        for name in _names_bound(node):
            out.setdefault(name, []).append(node)
    return out


def _strip_docstrings(node: ast.AST) -> ast.AST:
    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(sub, _DEFS) and isinstance(body, list) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                sub.body = body[1:] or [ast.Pass()]
    return node


def normalised(node: ast.stmt) -> str:
    """The definition as a position-free syntax dump, docstrings removed."""
    return ast.dump(_strip_docstrings(node), annotate_fields=False, include_attributes=False)


def python_files(tree: Tree) -> list[str]:
    return sorted(p for p in tree if p.endswith(".py"))


def symbol_digest(tree: Tree, name: str) -> str:
    """Digest of every top-level definition of ``name`` in the tree, or ABSENT."""
    parts = []
    for path in python_files(tree):
        defs = definitions(tree[path])
        if defs is None:
            parts.append(f"{path}\0unparsable\0{sha(tree[path])}")
            continue
        parts.extend(f"{path}\0{normalised(d)}" for d in defs.get(name, ()))
    return sha("\n".join(parts)) if parts else ABSENT


def defined_names(tree: Tree) -> set[str]:
    names: set[str] = set()
    for path in python_files(tree):
        names.update(definitions(tree[path]) or {})
    return names


def changed_names(before: str | None, after: str | None) -> set[str]:
    """Top-level names whose normalised definitions differ between two versions of a file."""
    old = definitions(before or "") or {}
    new = definitions(after or "") or {}
    return {n for n in old.keys() | new.keys()
            if [normalised(d) for d in old.get(n, [])] != [normalised(d) for d in new.get(n, [])]}


def loaded_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names read inside the nodes: plain loads and ``x.attr`` attribute names."""
    out: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                out.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                out.add(sub.attr)
    return out


def reads(tree: Tree, writes: Mapping[str, str | None], callees: int = 0) -> set[str]:
    """In-repository symbols the change's own added or changed definitions read.

    ``writes`` maps each written path to its new text (None: deleted). ``callees`` > 0 also
    follows the read symbols' own in-repository reads that many levels deep."""
    after = {**tree, **{p: t for p, t in writes.items() if t is not None}}
    for p, t in writes.items():
        if t is None:
            after.pop(p, None)
    known = defined_names(tree) | defined_names(after)
    own: set[str] = set()
    nodes: list[ast.AST] = []
    for path, text in writes.items():
        if not path.endswith(".py") or text is None:
            continue
        names = changed_names(tree.get(path), text)
        own |= names
        defs = definitions(text) or {}
        nodes.extend(d for n in names for d in defs.get(n, []))
    found = (loaded_names(nodes) & known) - own
    frontier = set(found)
    for _ in range(callees):
        nxt = set()
        for name in frontier:
            for path in python_files(tree):
                defs = definitions(tree[path]) or {}
                nxt |= loaded_names(defs.get(name, [])) & known
        frontier = nxt - found - own
        found |= frontier
    return found


def written(tree: Tree, writes: Mapping[str, str | None]) -> set[str]:
    """Top-level names the change adds, changes or removes."""
    out: set[str] = set()
    for path, text in writes.items():
        if path.endswith(".py"):
            out |= changed_names(tree.get(path), text)
    return out
