"""The spec side of conformance: load Kernel.tla under a config, enumerate its states.

How it works. ``load_model`` asks the project's checker (``spec.checker.load``) for the
compiled model; ``initial`` and ``successors`` call its ``init_fn`` / ``next_fn`` /
``next_labeled``, so every spec step used by conformance is computed by the same checker
that model-checks the configs. ``explore`` walks the reachable graph breadth first.
Constants can be given as a dict instead of a cfg file: ``write_cfg`` renders one.
States are the checker's tuples of values, in ``model.var_names`` order.
"""
from __future__ import annotations

import pathlib
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

SPEC_DIR = pathlib.Path(__file__).resolve().parent.parent
KERNEL_TLA = SPEC_DIR / "Kernel.tla"

CONSTANT_ORDER = ("Keys", "Amounts", "Workers", "Dedupes", "Queryable", "SendTimeout",
                  "SettleMargin", "DedupWindow", "DedupMargin", "LookupLag", "MaxTime",
                  "MaxCrashes", "MaxLoss", "Revocable", "PremiseMovable", "Prunable")


def tla_value(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (set, frozenset, list, tuple)):
        return "{" + ", ".join(tla_value(x) for x in sorted(v)) + "}"
    return str(v)


def write_cfg(constants: Mapping[str, Any], directory: str | None = None) -> str:
    """A cfg file (path) binding ``constants``; SPECIFICATION Spec, no invariants."""
    order = CONSTANT_ORDER if set(constants) == set(CONSTANT_ORDER) else list(constants)
    lines = ["CONSTANTS"] + [f"  {k} = {tla_value(constants[k])}" for k in order]
    lines += ["SPECIFICATION Spec", "CHECK_DEADLOCK FALSE", ""]
    fd = tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False, dir=directory)
    with fd:
        fd.write("\n".join(lines))
    return fd.name


def read_constants(cfg_path: str | pathlib.Path) -> dict[str, Any]:
    """The CONSTANTS of a cfg as Python values (ints, bools, sets of ints)."""
    from spec.checker.cfg import parse_cfg
    out = {}
    for name, value in parse_cfg(str(cfg_path)).constants.items():
        out[name] = set(value) if isinstance(value, frozenset) else value
    return out


def load_model(cfg: str | pathlib.Path | Mapping[str, Any], spec: str | pathlib.Path = KERNEL_TLA):
    """The checker's compiled model of ``spec`` under a cfg path or a constants dict."""
    from spec.checker import load
    if isinstance(cfg, Mapping):
        path = write_cfg(cfg)
        try:
            return load(str(spec), path)
        finally:
            pathlib.Path(path).unlink()
    return load(str(spec), str(cfg))


def initial(model) -> list[tuple]:
    out: list[tuple] = []
    model.init_fn(None, out.append)
    return out


def successors(model, state: tuple) -> list[tuple]:
    out: list[tuple] = []
    model.next_fn(state, out.append)
    return out


def labeled_successors(model, state: tuple) -> list[tuple[str, tuple]]:
    out: list[tuple[str, tuple]] = []
    model.next_labeled(state, lambda t, label: out.append((label, t)))
    return out


def explore(model, roots: Iterable[tuple] | None = None) -> dict[tuple, list[tuple]]:
    """The reachable graph: state -> distinct successors (self-loops dropped)."""
    graph: dict[tuple, list[tuple]] = {}
    frontier = list(initial(model) if roots is None else roots)
    for s in frontier:
        graph.setdefault(s, [])
    while frontier:
        nxt = []
        for s in frontier:
            succ = list(dict.fromkeys(t for t in successors(model, s) if t != s))
            graph[s] = succ
            for t in succ:
                if t not in graph:
                    graph[t] = []
                    nxt.append(t)
        frontier = nxt
    return graph


def as_dict(model, state: tuple) -> dict[str, Any]:
    return dict(zip(model.var_names, state))
