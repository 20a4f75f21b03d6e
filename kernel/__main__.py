"""Command line: ``python -m kernel check JOURNAL.jsonl [--history H.jsonl] [--complete]``.

Prints the verdict and the first divergence in one sentence. Exit status: 0 valid,
1 invalid, 2 unknown, 254 bad usage (missing file, unreadable history). This module is the
only part of the package that reads files; the kernel itself stays pure. A journal line
longer than ``kernel.journal.MAX_LINE`` bytes stops the reading there (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from kernel.errors import JournalError, KernelError
from kernel.forked import Forked
from kernel.journal import MAX_LINE, decode, render
from kernel.oracle import check, target_records

EXIT = {True: 0, False: 1, "unknown": 2}
DEFAULT_WORKERS = 2 if (os.cpu_count() or 1) > 1 and hasattr(os, "fork") else 1
BAD_USAGE = 254


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(BAD_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m kernel",
                     description="The exactly-once kernel's reference oracle.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    c = sub.add_parser("check", help="judge a journal (and optionally a target history)",
                       description="Verify a journal's hash chain and schema, check that "
                       "every recorded decision is the reference kernel's, and check the "
                       "invariants K1-K10. Exit 0 valid, 1 invalid, 2 unknown, 254 bad usage.")
    c.add_argument("journal", help="the journal file: JSON lines, or a JSON array of entries "
                   "(or a simulator trace with a \"journal\" list)")
    c.add_argument("--history", help="the target's record: JSON lines of "
                   '{"op": "send"|"apply", "effect_id", "ts", ...}')
    c.add_argument("--complete", action="store_true",
                   help="recovery ran to the end: every effect must be final (K9)")
    c.add_argument("--now", type=int, help="current time in ms since the epoch (default: "
                   "this machine's clock); entries later than this come from the future")
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.add_argument("--workers", type=int, choices=(1, 2), default=DEFAULT_WORKERS,
                   help="processes to judge a large journal with: 2 forks one helper "
                   "(the re-execution is split in two; same verdict), "
                   f"1 keeps to this process (default here: {DEFAULT_WORKERS})")
    return parser


def _invalid(explanation: str, where: str, as_json: bool) -> NoReturn:
    """Stop with the verdict invalid for input that is no journal at all (exit 1), in the
    form asked for: two lines, or the JSON verdict with one K8 anomaly."""
    if as_json:
        anomaly = {"type": "malformed", "invariant": "K8", "explanation": explanation,
                   "witnesses": [where]}
        print(json.dumps({"valid": False, "entries": 0, "anomalies": [anomaly], "notes": []},
                         indent=2, sort_keys=True))
    else:
        print("valid: false")
        print(explanation)
    sys.exit(EXIT[False])


def _read_history(path: str) -> str:
    """The history's text; unreadable or not UTF-8 is bad usage (the journal is not judged)."""
    try:
        return Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        print(f"python -m kernel: cannot read history {path}: {exc.strerror}", file=sys.stderr)
    except UnicodeDecodeError as exc:
        print(f"python -m kernel: history {path}: not valid UTF-8 (byte {exc.start})",
              file=sys.stderr)
    sys.exit(BAD_USAGE)


def _read_journal(path: str, as_json: bool = False) -> str:
    """The journal's text, read line by line and never more than MAX_LINE + 1 bytes of a
    line at a time: a longer line stops the reading (one line, exit 1). Only a first line
    that may be a whole JSON document (an array of entries, a simulator trace) is read on."""
    parts: list[bytes] = []
    try:
        with open(path, "rb") as f:
            while line := f.readline(MAX_LINE + 1):
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    if parts or line[:1] not in (b"[", b"{"):
                        _invalid(f"line {len(parts) + 1}: longer than the limit of "
                                 f"{MAX_LINE:,} bytes for a journal line",
                                 f"line {len(parts) + 1}", as_json)
                    line += f.read()  # perhaps one JSON document: _as_lines decides
                parts.append(line)
    except OSError as exc:
        print(f"python -m kernel: cannot read journal {path}: {exc.strerror}", file=sys.stderr)
        sys.exit(BAD_USAGE)
    try:
        return decode(b"".join(parts))
    except JournalError as exc:
        _invalid(f"journal: {exc}", f"line {exc.line_no}", as_json)


def _history(path: str) -> list[dict[str, Any]]:
    """The target's record: JSON lines, or one JSON array (see oracle.target_records)."""
    text = _read_history(path)
    if text.lstrip().startswith("["):
        numbered = [("element", i + 1, item) for i, item in enumerate(_json(text, path))]
    else:
        numbered = [("line", no, _json(line, f"line {no}"))
                    for no, line in enumerate(text.splitlines(), 1) if line.strip()]
    records: list[dict[str, Any]] = []
    for where, no, item in numbered:
        try:
            records += target_records([item]) or []
        except KernelError as exc:
            reason = str(exc).split(": ", 1)[-1]
            print(f"python -m kernel: history {where} {no}: {reason}", file=sys.stderr)
            sys.exit(BAD_USAGE)
    return records


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        print(f"python -m kernel: history {where}: nests too deep", file=sys.stderr)
        sys.exit(BAD_USAGE)
    except ValueError as exc:
        print(f"python -m kernel: history {where}: not valid JSON ({exc})", file=sys.stderr)
        sys.exit(BAD_USAGE)


def _as_lines(text: str, as_json: bool = False) -> str:
    """JSON lines as they are; a JSON array of entries (or a simulator trace document with a
    "journal" list) is rendered to canonical lines first."""
    head = text.lstrip()[:1]
    if head not in ("[", "{"):
        return text
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return text
    entries = doc.get("journal") if isinstance(doc, dict) else doc
    if not isinstance(entries, list):
        return text
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            _invalid(f"entry {i + 1} of the journal array is not a JSON object",
                     f"line {i + 1}", as_json)
    try:
        return render(entries)
    except (KernelError, TypeError, AttributeError) as exc:
        _invalid(f"the journal's entries cannot be rendered as canonical JSON lines: {exc}",
                 "line 1", as_json)


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate quoted in a verdict prints
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    text = _as_lines(_read_journal(args.journal, args.json), args.json)
    history = _history(args.history) if args.history else None
    now = args.now if args.now is not None else time.time_ns() // 1_000_000
    verdict = check(text, history, complete=args.complete, now=now,
                    spawn=Forked if args.workers == 2 else None)
    if args.json:
        print(json.dumps(verdict.as_json(), indent=2, sort_keys=True))
    else:
        shown = {True: "true", False: "false", "unknown": "unknown"}[verdict.valid]
        print(f"valid: {shown}")
        print(verdict.first)
        for note in verdict.notes:
            if note != verdict.first:
                print(f"note: {note}")
    return EXIT[verdict.valid]


if __name__ == "__main__":
    sys.exit(main())
