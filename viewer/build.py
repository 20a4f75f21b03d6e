"""Write the viewer's data files from what ``run_all.py`` wrote under ``results/``.

How it works. ``viewer/index.html`` is opened straight from disk (file://), where fetch() of
JSON is refused, so the data ships as JavaScript files that assign globals and are loaded by
plain <script> tags:

- ``traces.js`` sets ``window.VIEWER_DATA``: the fixed fault table (one full trace per fault x
  system x tier, read from ``results/traces/``), the kernel's state diagram (nodes, edges and
  layout computed here from ``kernel.edges()`` and ``kernel.TRANSITIONS``, never drawn by
  hand), and, per kernel run, what the kernel itself says after every journal entry: the
  receipts (``kernel.receipts()`` of the journal prefix), so the page never re-derives them.
- ``sweep.js`` sets ``window.VIEWER_SWEEP``: every sweep case from ``sweep_cases.jsonl`` in a
  compact, dictionary-encoded form (the page loads it lazily, when the sweep panel opens).
- ``faults/<fault>.js`` adds one fault's runs (every system x tier) to ``window.VIEWER_RUNS``;
  the page loads the file of the fault it shows, so the first screen loads only that.
- ``sweep_traces.js`` sets ``window.VIEWER_SWEEP_TRACES``: full timelines of the sweep cells
  the simulator chose to trace (``sweep_traces`` in ``traces/index.json``), and the index of
  the compact replays below; loaded the first time a sweep run is played.
- ``coding.js`` sets ``window.VIEWER_CODING``: the coding-agents table's cells with their
  timelines, written only when ``results/coding/coding_traces.json`` exists
  (``run_all.py --coding`` writes it).
- ``replays/s<N>.js`` and ``replays/shrunk.js`` (viewer/replays.py): compact timelines of every
  failing sweep run, every kernel AMBIGUOUS run, the kernel beside each failing baseline, and
  every shrunk story, re-run from their seeds; each chunk is loaded when one of its runs opens.

Output depends only on the input files: sorted keys, no timestamps, no absolute paths, so the
same results give the same bytes. ``main(results_dir, out_path)`` is the entry point
``run_all.py`` calls; ``python -m viewer.build --help`` is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as ``python viewer/build.py``: make ``kernel`` importable
    sys.path.insert(0, str(ROOT))

import kernel  # noqa: E402

DATA_VERSION = 1
SWEEP_NAME = "sweep.js"
SWEEP_TRACES_NAME = "sweep_traces.js"
CODING_NAME = "coding.js"
TIER_LABELS = {
    "t1": "tier 1: dedupes + can be looked up (Stripe-like)",
    "t1d": "tier 1, dedupe only: dedupes, no lookup",
    "t2": "tier 2: can be looked up (with lag), no dedupe",
    "t3": "tier 3: neither dedupes nor can be looked up",
}
SYSTEM_LABELS = {
    "naive": "naive retry: no journal, a crash re-runs the agent",
    "idempotency": "idempotency key only: stable key, no lease or premise checks",
    "durable": "durable execution: decision recorded and replayed, step re-run",
    "kernel": "kernel: write-ahead intent, re-check, recovery by tier",
}


class BuildError(Exception):
    """Missing or malformed input: printed as one line."""


def dumps(value: Any) -> str:
    """Compact, key-sorted, ASCII-only JSON: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BuildError(f"{path} is missing: run `python run_all.py` first") from None
    except ValueError as exc:
        raise BuildError(f"{path} is not valid JSON ({exc})") from None


# ---------------------------------------------------------------- the state diagram


def diagram() -> dict[str, Any]:
    """Nodes, edges and a layered layout from the kernel's own transition table."""
    edges = [list(e) for e in kernel.edges()]
    states = [s.value for s in kernel.State]
    nodes = ["(new)"] + states
    rank = {n: 0 for n in nodes}
    for _ in nodes:  # longest path from (new): the table is acyclic apart from self-loops
        for src, _event, dst in edges:
            rank[dst] = max(rank[dst], rank[src] + 1)
    rows: dict[int, int] = {}
    layout = []
    for n in nodes:
        r = rank[n]
        layout.append({"id": n, "rank": r, "row": rows.get(r, 0),
                       "final": n in {s.value for s in kernel.FINAL_STATES}})
        rows[r] = rows.get(r, 0) + 1
    loops: dict[str, list[str]] = {}
    for (state, event), rule in kernel.TRANSITIONS.items():
        name = state.value if state is not None else "(new)"
        if state is not None and state in rule.targets:
            loops.setdefault(name, []).append(event.__name__)
    return {"edges": edges, "nodes": layout, "self_loops": {k: sorted(v) for k, v in loops.items()},
            "source": "kernel.edges() and kernel.TRANSITIONS"}


# ---------------------------------------------------------------- one fixed-table run

_DOLLARS = re.compile(r"\$(\d+)")


def _money(run: dict[str, Any]) -> list[int]:
    """Dollars refunded on the order after each event (system and support by hand)."""
    total, out = 0, []
    for ev in run.get("events", []):
        details = ev.get("details") or {}
        if ev.get("actor") == "target" and ev.get("kind") == "applied" and "refunded" in details:
            total = int(details["refunded"])
        elif ev.get("actor") == "world" and ev.get("kind") == "manual_refund":
            if "refunded" in details:
                total = int(details["refunded"])
            elif "amount" in details:
                total += int(details["amount"])
            else:
                m = _DOLLARS.search(ev.get("label", ""))
                total += int(m.group(1)) if m else 0
        out.append(total)
    return out


def _receipt_steps(run: dict[str, Any]) -> list[list[Any]]:
    """[event index, receipts after that journal entry] wherever the receipts change."""
    journal = run.get("journal") or []
    if run.get("system") != "kernel" or not journal:
        return []
    by_seq = {e.get("seq"): i for i, e in enumerate(journal)}
    steps: list[list[Any]] = []
    last: Any = None
    for i, ev in enumerate(run.get("events", [])):
        seq = (ev.get("details") or {}).get("seq")
        if ev.get("actor") != "journal" or seq not in by_seq:
            continue
        now = [r.as_json() for r in kernel.receipts(journal[: by_seq[seq] + 1])]
        if now != last:
            steps.append([i, now])
            last = now
    return steps


def compact_run(run: dict[str, Any]) -> dict[str, Any]:
    """The trace as the page needs it, plus money and receipts after every event."""
    out = dict(run)
    out["money"] = _money(run)
    out["receipt_steps"] = _receipt_steps(run)
    return out


def check_run(run: dict[str, Any]) -> list[str]:
    """Inconsistencies between the timeline and the run's own totals (warnings, not errors)."""
    money = run["money"]
    final = money[-1] if money else 0
    if final != run.get("refunded"):
        return [f"{run.get('id')}: events add up to ${final}, the run says ${run.get('refunded')}"]
    return []


# ---------------------------------------------------------------- the sweep


class _Codes:
    """Dictionary encoding: each distinct value once, referenced by its index."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.index: dict[str, int] = {}

    def code(self, value: Any) -> int:
        key = dumps(value)
        if key not in self.index:
            self.index[key] = len(self.values)
            self.values.append(value)
        return self.index[key]


def _cell(raw: Any) -> dict[str, Any]:
    """A sweep cell in either documented shape: a list or an object."""
    if isinstance(raw, list):
        cell = {"refunded": raw[0], "outcome": raw[1], "reasons": raw[2],
                "resolution_ms": raw[3] if len(raw) > 3 else None}
        if len(raw) > 4 and isinstance(raw[4], dict):
            cell.update(raw[4])
        return cell
    return dict(raw)


def sweep(path: Path) -> dict[str, Any]:
    """Every sweep case, columns fixed, strings dictionary-encoded.

    A case is ``[seed, plan, kinds code, cells]``; a cell is ``[refunded, outcome code,
    reasons code, resolution_ms, extra code]`` where extra holds any other field the sweep
    wrote (ambiguous count, oracle verdict, world race), 0 meaning none.
    """
    if not path.exists():
        return {"columns": [], "cases": [], "codes": [], "missing": path.name}
    codes = _Codes()
    codes.code(None)  # code 0: nothing to say
    columns: list[str] = []
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            raise BuildError(f"{path}:{n} is not valid JSON ({exc})") from None
        cells = case.get("cells", {})
        if not columns:
            columns = sorted(cells)
        row: list[Any] = []
        for col in columns:
            c = _cell(cells[col]) if col in cells else None
            if c is None:
                row.append(0)
                continue
            extra = {k: v for k, v in c.items()
                     if k not in ("refunded", "outcome", "reasons", "resolution_ms", "ok")}
            row.append([c.get("refunded"), codes.code(c.get("outcome")),
                        codes.code(c.get("reasons") or []), c.get("resolution_ms"),
                        codes.code(extra) if extra else 0])
        cases.append([case["seed"], case.get("plan", ""), codes.code(case.get("kinds", [])), row])
    return {"columns": columns, "cases": cases, "codes": codes.values}


def coding_cells(doc: Any) -> list[dict[str, Any]]:
    """The coding table's cells (a list, or under ``traces``, as ``sim.coding`` writes them, or
    ``cells``/``rows``), each with its events."""
    cells = doc if isinstance(doc, list) else \
        (doc.get("traces") or doc.get("cells") or doc.get("rows") or [])
    out = []
    for c in cells:
        if not isinstance(c, dict):
            continue
        trace = c.get("trace") or {}
        out.append({k: c.get(k) for k in ("id", "row", "guarantee", "system", "verdict", "harms",
                                          "lost", "landed", "outcomes", "matches_reference")} |
                   {"events": trace.get("events") or c.get("events") or [],
                    "journal": trace.get("journal") or c.get("journal") or []})
    return out


# ---------------------------------------------------------------- putting it together


def build(results_dir: Path) -> dict[str, str]:
    """The data files' text, by file name. Raises BuildError on missing or bad input."""
    return build_with_warnings(results_dir)[0]


def build_with_warnings(results_dir: Path, jobs: int = 1,
                        replay_limit: int | None = None) -> tuple[dict[str, str], list[str]]:
    """build(), plus where a timeline disagrees with its run's own totals.

    ``replay_limit`` keeps the sweep replays to seeds below it (the browser tests use it).
    """
    from viewer import replays

    results_dir = Path(results_dir)
    index = _read_json(results_dir / "traces" / "index.json")
    table = _read_json(results_dir / "fixed_table.json")
    by_fault: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    fault_files: dict[str, str] = {}
    for entry in index.get("traces", []):
        run = compact_run(_read_json(results_dir / "traces" / entry["file"]))
        warnings += check_run(run)
        slug = str(run["id"]).split("__")[0]
        fault_files[run["fault"]] = f"faults/{slug}.js"
        by_fault.setdefault(run["fault"], {})[run["id"]] = run
    traced = {}
    for entry in index.get("sweep_traces") or []:
        run = compact_run(_read_json(results_dir / "traces" / entry["file"]))
        warnings += check_run(run)
        traced[f"{entry['seed']}|{run['system']}|{run['tier']}"] = run
    summary_path = results_dir / "sweep_summary.json"
    shrunk_path = results_dir / "shrunk.json"
    shrunk = _read_json(shrunk_path) if shrunk_path.exists() else {"stories": []}
    data = {
        "version": DATA_VERSION,
        "trace_format": index.get("version"),
        "faults": index.get("faults", []),
        "systems": index.get("systems", []),
        "tiers": index.get("tiers", []),
        "tier_labels": TIER_LABELS,
        "system_labels": SYSTEM_LABELS,
        "fixed_seed": table.get("seed"),
        "rows": table.get("rows", []),
        "fault_files": fault_files,
        "diagram": diagram(),
        "warnings": warnings,
        "sweep_file": SWEEP_NAME,
        "sweep_traces_file": SWEEP_TRACES_NAME,
        "sweep_summary": _read_json(summary_path) if summary_path.exists() else None,
        "shrunk": [{k: s.get(k) for k in ("system", "found", "failing_tiers", "summary",
                                          "reasons", "refunded", "command")}
                   for s in shrunk.get("stories", [])],
    }
    swept = sweep(results_dir / "sweep_cases.jsonl")
    swept["traced"] = sorted(traced)
    cases = replays.read_cases(results_dir / "sweep_cases.jsonl")
    chunks = replays.sweep_chunks(cases, jobs, replay_limit)
    head = "// Generated by viewer/build.py from results/: do not edit.\n"
    files = {
        "traces.js": head + "window.VIEWER_DATA = " + dumps(data) + ";\n",
        SWEEP_NAME: head + "window.VIEWER_SWEEP = " + dumps(swept) + ";\n",
    }
    for fault, name in fault_files.items():
        files[name] = (head + "(window.VIEWER_RUNS = window.VIEWER_RUNS || {})[" +
                       dumps(fault) + "] = " + dumps(by_fault[fault]) + ";\n")
    replay_index: dict[str, Any] = {"chunk": replays.CHUNK, "files": {}, "limit": replay_limit}
    for n, packed in chunks.items():
        name = f"replays/s{n:04d}.js"
        replay_index["files"][str(n)] = name
        files[name] = (head + "(window.VIEWER_REPLAYS = window.VIEWER_REPLAYS || {})[" +
                       dumps(name) + "] = " + dumps(packed) + ";\n")
    stories = replays.shrunk_runs(shrunk)
    replay_index["shrunk_file"] = "replays/shrunk.js"
    replay_index["shrunk_keys"] = sorted(list(stories["runs"]) + list(stories["same"]))
    files["replays/shrunk.js"] = (head + "(window.VIEWER_REPLAYS = window.VIEWER_REPLAYS || "
                                  "{})[\"replays/shrunk.js\"] = " + dumps(stories) + ";\n")
    coding = results_dir / "coding" / "coding_traces.json"
    if coding.exists():  # the coding-agents scenario (sim/coding), shown when it exists
        files[CODING_NAME] = head + "window.VIEWER_CODING = " + dumps(coding_cells(
            _read_json(coding))) + ";\n"
        data["coding_file"] = CODING_NAME
        files["traces.js"] = head + "window.VIEWER_DATA = " + dumps(data) + ";\n"
    files[SWEEP_TRACES_NAME] = (head + "window.VIEWER_SWEEP_TRACES = " +
                                dumps({"runs": traced, "replays": replay_index}) + ";\n")
    return files, warnings


def main(results_dir: str | Path = ROOT / "results",
         out_path: str | Path = ROOT / "viewer" / "traces.js", jobs: int | None = None,
         replay_limit: int | None = None) -> int:
    """Write traces.js at out_path, the other data files beside it (faults/, replays/).

    Returns 0, or 2 on missing or bad input (one line on stderr, nothing written).
    """
    out_path = Path(out_path)
    try:
        files, warnings = build_with_warnings(Path(results_dir), jobs or os.cpu_count() or 1,
                                              replay_limit)
    except BuildError as exc:
        print(f"viewer/build.py: error: {exc}", file=sys.stderr)
        return 2
    folder = out_path.parent
    for sub in ("faults", "replays"):  # generated folders: stale files would mislead
        for old in sorted((folder / sub).glob("*.js")):
            old.unlink()
    (folder / CODING_NAME).unlink(missing_ok=True)
    total = 0
    for name, text in files.items():
        target = out_path if name == "traces.js" else folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        total += len(text)
    for w in warnings:
        print(f"viewer/build.py: warning: {w}", file=sys.stderr)
    sizes = ", ".join(f"{n} {len(files[n]) // 1024} KiB" for n in ("traces.js", SWEEP_NAME))
    print(f"viewer: wrote {len(files)} files, {total // 1024} KiB ({sizes})")
    return 0


def cli(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m viewer.build",
        description="Write the viewer's data files (traces.js, and sweep.js and "
                    "sweep_traces.js beside it) from "
                    "the results/ that run_all.py wrote. Same results, same bytes.")
    p.add_argument("--results", default=str(ROOT / "results"),
                   help="results directory to read (default: the repository's results/)")
    p.add_argument("--out", default=str(ROOT / "viewer" / "traces.js"),
                   help="traces.js to write; the sweep files go beside it "
                        "(default: viewer/traces.js)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="processes for the sweep replays (default: all cores)")
    args = p.parse_args(argv)
    return main(args.results, args.out, args.jobs)


if __name__ == "__main__":
    raise SystemExit(cli())
