"""``python -m sim.coding``: the coding-agents results under results/coding_*.

How it works. The seed and knobs are printed first. Then the fixed table (13 rows x 5
systems, traced; ``coding_table.md/json`` and ``coding_traces.json`` for the viewer), the
sweep (``--cases`` seeded plans x 5 systems, streamed to ``coding_sweep_cases.jsonl``;
``coding_sweep.md/json`` and the plot ``coding_harm_by_system.png/svg``), with ``--real``
the same fixed table on real temporary repositories with real pytest runs
(``coding_real_table.md/json``) compared cell by cell (the repository target is handed in by
``python3 run_all.py --coding``, as sim/ may not import gate/), and the G1-G8 table
(``coding_guarantees.md``). ``--replay SEED --system S`` re-runs one sweep case and prints
its timeline; ``--row NAME --system S`` does the same for a fixed row.
Exit 0 when the kernel holds everything, 1 when not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


class UsageError(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    from sim.coding.registry import SYSTEM_NAMES
    from sim.coding.table import ROWS

    p = argparse.ArgumentParser(
        prog="python -m sim.coding",
        description="Several coding agents on one repository (DESIGN.md section 8): the fixed "
                    "13-row table for every system, a seeded sweep, the G1-G8 table, and "
                    "with --real the same table on real repositories with real pytest runs.",
        epilog="Systems: " + ", ".join(SYSTEM_NAMES) + ". Rows: " + ", ".join(ROWS) + ".")
    p.add_argument("--out", default="results", help="output directory (default results)")
    p.add_argument("--cases", type=int, default=2_000, help="sweep cases (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="first sweep seed (default 0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes for the sweep (default: all cores)")
    p.add_argument("--real", action="store_true",
                   help="also run the fixed table on real repositories with real pytest "
                        "(through python3 run_all.py --coding, which hands in gate.repo)")
    p.add_argument("--replay", type=int, metavar="SEED", help="re-run one sweep case")
    p.add_argument("--row", help="re-run one fixed row")
    p.add_argument("--system", help="the system for --replay or --row")
    return p


def check(args: argparse.Namespace, open_repo: Any) -> None:
    from sim.coding.registry import SYSTEM_NAMES
    from sim.coding.table import ROWS

    if args.cases < 0:
        raise UsageError(f"--cases must be 0 or more, not {args.cases}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.replay is not None and args.row is not None:
        raise UsageError("give --replay SEED or --row NAME, not both")
    if (args.replay is not None or args.row is not None) and args.system not in SYSTEM_NAMES:
        raise UsageError(f"--system must be one of {', '.join(SYSTEM_NAMES)} "
                         f"(got {args.system!r})")
    if args.real and open_repo is None:
        raise UsageError("--real lands changes through the real repository target (gate/), "
                         "which sim/ may not import: run python3 run_all.py --coding")
    if args.row is not None and args.row not in ROWS:
        raise UsageError(f"unknown row {args.row!r}; known: {', '.join(ROWS)}")


def timeline(run: Any, verdict: dict[str, Any]) -> str:
    lines = [f"plan: {run.story.plan.as_json()}"]
    lines += [f"{e['t']:>7} {e['actor']:>8}  {e['label']}" for e in run.events or []]
    lines += ["units: " + "; ".join(f"{j.unit.name} {j.outcome}" for j in run.jobs),
              f"verdict: {'ok' if verdict['ok'] else 'FAIL'} harms={verdict['harms']} "
              f"refused_for_no_reason={verdict['lost']} spent={verdict['spent']}"]
    return "\n".join(lines)


def replay(args: argparse.Namespace) -> int:
    from sim.coding import sweep, table
    from sim.coding.judge import judge
    from sim.coding.registry import SYSTEMS
    from sim.coding.story import simulate

    if args.row is not None:
        plan, seed = table.ROWS[args.row][1], table.FIXED_SEED
    else:
        plan, seed = sweep.plan_from_seed(args.replay), args.replay
    run = simulate(plan, SYSTEMS[args.system], seed, trace=True)
    verdict = judge(run)
    print(timeline(run, verdict))
    return 0 if verdict["ok"] else 1


def generate(args: argparse.Namespace, open_repo: Any) -> int:
    from sim import parallel
    from sim.coding import report, sweep, table
    from sim.coding.registry import SYSTEM_NAMES

    out = Path(args.out)
    print(f"sim.coding: seed={args.seed} cases={args.cases} jobs={args.jobs} out={out} "
          f"fixed_seed={table.FIXED_SEED} systems={','.join(SYSTEM_NAMES)} real={args.real}",
          flush=True)
    rows = table.table()
    bad = [r for r in rows if r["system"] == "kernel" and r["verdict"] != "ok"]
    slim = [{k: v for k, v in r.items() if k != "trace"} for r in rows]
    report.write_json(out / "coding_table.json", {"seed": table.FIXED_SEED, "rows": slim})
    report.write_text(out / "coding_table.md", report.table_markdown(
        rows, SYSTEM_NAMES, table.FIXED_SEED, "Coding agents: the fixed table (simulated)"))
    report.write_json(out / "coding_traces.json", report.traces_document(rows, table.FIXED_SEED))
    print(f"[1] fixed table: {len(rows)} cells, kernel failing {len(bad)}", flush=True)
    for r in bad:
        print(f"    KERNEL FAIL {r['id']}: python -m sim.coding --row {r['row']} --system kernel")
    summary = None
    if args.cases:
        with parallel.pool(args.jobs) as pool:
            summary = sweep.run(pool, args.seed, args.cases, out, lambda m: print(m, flush=True))
        report.write_json(out / "coding_sweep.json", summary)
        report.write_text(out / "coding_sweep.md", report.sweep_markdown(summary, args.seed))
        from sim import plots

        plots.coding(out, summary, SYSTEM_NAMES, report.SYSTEM_LABEL)
        k = summary["systems"]["kernel"]
        print(f"[2] sweep: {args.cases} cases; kernel harmed {k['harmed']}, refused for no "
              f"reason {k['lost_availability']}; below floor {summary['below_floor']}",
              flush=True)
        for cmd in summary["replay"].get("kernel", []):
            print(f"    KERNEL HARM: {cmd}")
    agrees = None
    if args.real:
        from sim.coding import real

        real_rows, diffs = real.compare(rows, open_repo)
        agrees = not diffs
        report.write_json(out / "coding_real_table.json", {"seed": table.FIXED_SEED,
                                                           "rows": real_rows, "diffs": diffs})
        report.write_text(out / "coding_real_table.md", report.table_markdown(
            real_rows, SYSTEM_NAMES, table.FIXED_SEED,
            "Coding agents: the fixed table on real repositories with real pytest runs"))
        print(f"[3] real table: {len(real_rows)} cells, {len(diffs)} differ from the simulation",
              flush=True)
        for d in diffs:
            print(f"    differs: {d}")
    report.write_text(out / "coding_guarantees.md",
                      report.guarantees_markdown(rows, summary, agrees))
    failed = bad or (summary and (summary["systems"]["kernel"]["harmed"]
                                  or summary["below_floor"])) or agrees is False
    print(f"done: results in {out}/ (exit {int(bool(failed))})")
    return int(bool(failed))


def main(argv: list[str] | None = None, open_repo: Any = None) -> int:
    """``open_repo(root, timeout)`` opens a real repository target (``gate.repo.Repo``) for
    ``--real``; ``run_all.py --coding`` hands it in."""
    args = parser().parse_args(argv)
    try:
        check(args, open_repo)
        if args.replay is not None or args.row is not None:
            return replay(args)
        return generate(args, open_repo)
    except UsageError as exc:
        print(f"python -m sim.coding: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("python -m sim.coding: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
