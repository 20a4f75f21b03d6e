"""Code changes as effects (DESIGN.md section 8): writes, premises, and undoing one file.

How it works. A change is a set of file writes, each with the digest of the before-image it
was planned against and the after-image to write (``None`` deletes); its claim items are the
files it writes and the top-level names it defines (``sym:NAME``). ``plan`` turns an agent's
writes into a change and its premises: the before-image digest of every written file, the
digest of every symbol the change reads or defines (``kernel.symbols``: normalised
definitions, blind to formatting, comments, docstrings and unrelated definitions), and the
digest of every verifying test. ``facts`` recomputes the same names on a tree, leaving out
the change's own writes when the target can identify them; ``revert`` undoes one file's
change on its current text. Pure: trees are mappings of path to text; the repository target
that writes them is ``gate.repo``, the simulator's is ``sim.coding.model``.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel import symbols
from kernel.symbols import ABSENT, sha


class RepoError(Exception):
    """A change the target will not apply (the message says why in one line)."""


class StaleToken(RepoError):
    pass


class BeforeImageMismatch(RepoError):
    pass


@dataclass(frozen=True, slots=True)
class Write:
    path: str
    before: str  # digest of the before-image, or ABSENT for a new file
    after: str | None  # the after-image; None deletes the file


@dataclass(frozen=True, slots=True)
class Change:
    """One unit's change: its writes, verifying tests and claim items (the effect payload)."""

    unit: str
    writes: tuple[Write, ...]
    tests: tuple[str, ...] = ()
    items: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "tests": list(self.tests), "items": list(self.items),
                "writes": [{"path": w.path, "before": w.before, "after": w.after}
                           for w in self.writes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        writes = tuple(Write(w["path"], w["before"], w["after"]) for w in data["writes"])
        return cls(data["unit"], writes, tuple(data["tests"]), tuple(data["items"]))

    @property
    def id(self) -> str:
        return sha(json.dumps(self.as_json(), sort_keys=True))[:16]

    def edits_own_tests(self) -> bool:
        return any(w.path in self.tests for w in self.writes)


def file_digest(text: str | None) -> str:
    return ABSENT if text is None else sha(text)


def plan(tree: Mapping[str, str], unit: str, writes: Mapping[str, str | None],
         tests: Iterable[str] = (), callees: int = 0) -> tuple[Change, dict[str, str]]:
    """A change from an agent's writes on ``tree``, and the premises it relies on."""
    paths = sorted(writes)
    defined = symbols.written(tree, writes)
    read = symbols.reads(tree, writes, callees)
    items = [f"file:{p}" for p in paths] + [f"sym:{n}" for n in sorted(defined)]
    change = Change(unit, tuple(Write(p, file_digest(tree.get(p)), writes[p]) for p in paths),
                    tuple(sorted(tests)), tuple(items))
    premises = facts(tree, premise_names(change, read))
    for w in change.writes:  # a name this change defines anew must be defined nowhere yet
        old = symbols.definitions(tree.get(w.path) or "") or {}
        new = symbols.definitions(w.after or "") or {}
        premises.update({f"new:{n}": ABSENT for n in sorted(new)
                         if len(new[n]) > len(old.get(n, []))})
    return change, premises


def premise_names(change: Change, reads: Iterable[str]) -> list[str]:
    names = [f"file:{w.path}" for w in change.writes]
    names += [f"def:{n[4:]}" for n in change.items if n.startswith("sym:")]
    names += [f"def:{n}" for n in sorted(set(reads))]
    names += [f"test:{t}" for t in change.tests]
    return sorted(set(names))


def facts(tree: Mapping[str, str], names: Iterable[str],
          restore: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The premises' values on ``tree``; ``restore`` (path -> before-image) first puts the
    change's own landed files back, so its own landing is not "the world moved"."""
    if restore:
        tree = {**tree, **{p: t for p, t in restore.items() if t is not None}}
        tree = {p: t for p, t in tree.items() if restore.get(p, "") is not None}
    out = {}
    for name in names:
        kind, _, arg = name.partition(":")
        if kind == "def":
            out[name] = symbols.symbol_digest(tree, arg)
        elif kind == "new":
            out[name] = symbols.symbol_digest(tree, arg)
        else:
            out[name] = file_digest(tree.get(arg))
    return out


def own_landed(tree: Mapping[str, str], change: Change,
               befores: Mapping[str, str | None]) -> dict[str, str | None]:
    """The change's files that are at their after-image now, mapped to their before-images."""
    return {w.path: befores[w.path] for w in change.writes
            if w.path in befores and file_digest(tree.get(w.path)) == file_digest(w.after)
            and w.before != file_digest(w.after)}


def revert(current: str | None, before: str | None, after: str | None) -> str | None:
    """Undo one file's change on its current text: the before-image when nobody touched the
    file since; otherwise put back (or remove) only the definitions the change altered, so
    later edits by others to the rest of the file survive."""
    if file_digest(current) == file_digest(after) or current is None:
        return before
    old, cur = symbols.definitions(before or "") or {}, symbols.definitions(current)
    if cur is None:
        return before
    lines = current.splitlines(keepends=True)
    spans = []
    for name in symbols.changed_names(before, after):
        for node in cur.get(name, []):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            text = "".join(ast.get_source_segment(before or "", d) or "" for d in old.get(name, []))
            spans.append((start - 1, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(spans, reverse=True):
        lines[start:end] = [text + "\n"] if text else []
    return "".join(lines)
