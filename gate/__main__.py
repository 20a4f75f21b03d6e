"""Command line: ``python -m gate status|repair|export JOURNAL``.

``status`` reads a journal (JSON lines or SQLite) without changing it and says what is open,
which send holds a claim and until when, why recovery would wait, and what a person must
reconcile (the AMBIGUOUS effects). ``repair`` shows what a cut of a damaged JSON-lines journal
would remove and cuts only with ``--apply``. ``export`` prints a SQLite journal as JSON lines
(``python -m kernel check`` reads those). Exit 0 on success, 1 when the journal is damaged,
254 on a usage mistake; errors are one line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import kernel
from gate.journal import NO_MARKER, Refused, cut, plan_repair, reset_marker
from kernel import JournalError

BAD_USAGE = 254


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(BAD_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gate", description="Inspect and repair gate journals.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    s = sub.add_parser("status", help="what is open, who holds a claim, what to reconcile")
    s.add_argument("journal")
    s.add_argument("--now", type=int, help="time in ms since the epoch (default: the clock)")
    s.add_argument("--json", action="store_true", help="print the status as JSON")
    r = sub.add_parser("repair", help="show (and with --apply make) the cut of a damaged tail")
    r.add_argument("journal")
    r.add_argument("--apply", action="store_true", help="really cut the file")
    e = sub.add_parser("export", help="print a SQLite journal as JSON lines")
    e.add_argument("journal")
    return parser


def _fail(message: str, code: int = BAD_USAGE) -> NoReturn:
    print(f"python -m gate: {message}", file=sys.stderr)
    sys.exit(code)


def _entries(path: Path) -> list[dict[str, Any]]:
    """The valid entries of a journal, read-only (a damaged tail is reported, not cut)."""
    if path.suffix in (".db", ".sqlite", ".sqlite3"):
        return kernel.verify(_export(path)).entries
    plan = plan_repair(path)
    if not plan.clean:
        print(f"note: {plan.describe()} (python -m gate repair shows the cut)")
    return plan.entries


def _export(path: Path) -> str:
    """A SQLite journal's lines, read-only: a database that is not a gate journal (a user's
    own .db named by mistake) is reported and left exactly as it was."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        if "journal" not in tables:
            raise kernel.KernelError(f"{path} is a SQLite database without a journal table: "
                                     f"not a gate journal")
        return "".join(line + "\n" for (line,) in
                       db.execute("SELECT line FROM journal ORDER BY seq"))
    finally:
        db.close()


def status(entries: list[dict[str, Any]], now: int) -> dict[str, Any]:
    """Open effects with what they wait for, and the AMBIGUOUS list."""
    effects = kernel.replay(entries)
    last_dispatch = {e["effect_id"]: e for e in entries if e["kind"] == "DISPATCHED"}
    open_, ambiguous = [], []
    for eid, effect in effects.items():
        p = effect.proposal
        row: dict[str, Any] = {"effect_id": eid, "state": effect.state.value,
                               "target": p.target, "payload": p.payload, "lease": p.lease}
        if effect.state is kernel.State.AMBIGUOUS:
            ambiguous.append({**row, "reason": effect.reason,
                              "reconcile": _reconcile(effect.reason or "")})
        elif not effect.state.final:
            open_.append({**row, **_waiting(effect, last_dispatch.get(eid), now)})
    finals = sum(1 for e in effects.values() if e.state.final)
    return {"entries": len(entries), "effects": len(effects), "final": finals,
            "open": open_, "ambiguous": ambiguous}


def _waiting(effect: kernel.Effect, dispatch: dict[str, Any] | None, now: int
             ) -> dict[str, Any]:
    if effect.state is not kernel.State.DISPATCHED or dispatch is None:
        step = "Authorize" if effect.state is kernel.State.PROPOSED else "Dispatch"
        return {"why": f"never sent; recovery re-runs {step} with fresh lease and premise "
                       f"checks (REFUSED if one fails)"}
    claim = dispatch["claim_until"]
    holder = (f"attempt {dispatch['attempt']} sent at ts {dispatch['ts']} "
              f"(journal line {dispatch['seq'] + 1})")
    if now < claim:
        return {"claim": holder, "claim_until": claim,
                "why": f"waiting {(claim - now) / 1000:.1f} s more: until its claim expires "
                       f"a send may still land, so nobody may look it up or resend"}
    return {"claim": holder, "claim_until": claim,
            "why": "claim expired: the next recovery looks it up, resends or ends it AMBIGUOUS"}


def _reconcile(reason: str) -> str:
    if "no_lookup" in reason:
        return ("the target can neither deduplicate nor be queried: check its own records for "
                "this effect id and settle by hand; never resend blindly")
    return ("the lease or a premise failed and nothing can confirm whether it landed: check "
            "the target's records for this effect id")


def _print_status(report: dict[str, Any]) -> None:
    plural = "" if report["effects"] == 1 else "s"
    print(f"{report['effects']} effect{plural} in {report['entries']} entries: {report['final']} "
          f"final, {len(report['open'])} open, {len(report['ambiguous'])} AMBIGUOUS")
    for row in report["open"]:
        print(f"open {row['effect_id'][:12]} {row['state']} target {row['target']}")
        if "claim" in row:
            print(f"  claim held by {row['claim']} until ts {row['claim_until']}")
        print(f"  {row['why']}")
    if report["ambiguous"]:
        print("to reconcile by a person (AMBIGUOUS):")
    for row in report["ambiguous"]:
        print(f"  {row['effect_id']} target {row['target']} payload "
              f"{json.dumps(row['payload'], sort_keys=True)}")
        print(f"    reason {row['reason']}: {row['reconcile']}")


def _repair(path: Path, apply: bool) -> int:
    try:
        plan = plan_repair(path)
    except Refused as exc:  # the marker itself is damaged: the one case repair must handle
        return _new_marker(path, apply, str(exc).split(": ", 1)[-1])
    print(plan.describe())
    if plan.clean:
        return 0
    lost = [line for line in range(len(plan.entries) + 1, plan.marker.seq + 2)]
    if lost:
        print(f"warning: lines {lost[0]}-{lost[-1]} were durable; effects they record must be "
              f"reconciled by hand after the cut")
    if not apply:
        print("nothing changed (run again with --apply to cut)")
        return 1
    cut(path, plan)
    print(f"cut: {path} now holds {len(plan.entries)} entries")
    return 0


def _new_marker(path: Path, apply: bool, why: str) -> int:
    """An unreadable durable-head marker: nothing tells which entries were durable. Show
    what the journal holds; with --apply keep its intact entries and mark them durable."""
    plan = plan_repair(path, NO_MARKER)
    print(why.split(";")[0])
    print(f"the journal holds {len(plan.entries)} intact entries"
          + ("" if plan.clean else f"; then {plan.describe()}"))
    if not apply:
        print("nothing changed (run again with --apply to keep the intact entries, cut the "
              "rest and write a new marker)")
        return 1
    reset_marker(path, plan)
    print(f"new marker: {path} holds {len(plan.entries)} entries, all durable")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    path = Path(args.journal)
    if not path.exists():
        _fail(f"no journal at {path}")
    if path.is_dir():
        _fail(f"{path} is a directory, not a journal")
    try:
        if args.command == "export":
            sys.stdout.write(_export(path))
            return 0
        if args.command == "repair":
            if path.suffix in (".db", ".sqlite", ".sqlite3"):
                _fail("repair is for JSON-lines journals; SQLite recovers its own torn writes")
            return _repair(path, args.apply)
        now = args.now if args.now is not None else time.time_ns() // 1_000_000
        report = status(_entries(path), now)
    except (JournalError, kernel.KernelError, OSError, sqlite3.Error) as exc:
        _fail(str(exc), 1)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        _print_status(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
