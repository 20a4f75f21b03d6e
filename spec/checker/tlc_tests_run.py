"""Run the checker on the models of TLC's own regression tests and compare with what each
Java test expects.

    python -m spec.checker.tlc_tests_run TLATOOLS_DIR [--cpu S] [--only TEXT[,TEXT...]]
                                         [--json OUT]

TLATOOLS_DIR is `tlatools/org.lamport.tlatools` of a tlaplus/tlaplus checkout: its `test/`
holds the Java tests, its `test-model/` the specs and configs they run. Each test that
extends ModelCheckerTestCase names its spec, folder, TLC flags and expected exit status in
its constructor's `super(...)` call, and often the distinct-state count in an assertion on
EC.TLC_STATS. The expectation is read from those texts: the ExitStatus named, else the
violation the test asserts was recorded, else success. This reading is approximate (a
test may check more than the exit status, or set it in code), so the verdicts are a lead
to look at, not a judge:

  agree          the expected outcome (and the recorded count, where one is given)
  count          the expected outcome with another distinct-state count
  blamed         the test expects success, we reported a violation or an error
  missed         the test expects a violation or an error, we reported success
  other          another outcome (a violation of another kind, say)
  refused        we declined a construct by name
  module         a module that is neither beside the spec nor standard (TLC-internal
                 or a community module)
  timeout        over the CPU cap
  crash          a Python traceback (always a bug of ours)
  skipped        flags the checker has no counterpart for (-simulate, PlusCal's
                 translator flags, ...), tests TLC's own suite ignores, or no spec found

Each model runs in its own child process with TLC's test defaults (deadlock not checked
unless the test asks for it), at most --cpu CPU seconds. Nothing of the tlaplus repository
is copied: its path is an argument.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

EXIT = {"SUCCESS": 0, "VIOLATION_DEADLOCK": 11, "VIOLATION_SAFETY": 12, "VIOLATION_LIVENESS": 13}
RECORDED = {"TLC_TEMPORAL_PROPERTY_VIOLATED": 13, "TLC_INVARIANT_VIOLATED_BEHAVIOR": 12,
            "TLC_INVARIANT_VIOLATED_INITIAL": 12, "TLC_DEADLOCK_REACHED": 11}
IGNORED_FLAGS = {"-lncheck": 1, "-seed": 1, "-coverage": 1, "-maxSetSize": 1, "-deadlock": 0,
                 "-nowarning": 0, "-gzip": 0, "-dumpTrace": 2}


def read_test(path, root):
    """The model a Java test runs and what it expects, or None if it runs none."""
    src = path.read_text(errors="replace")
    call = re.search(r'super\(\s*"([^"]+)"(.*?)\);', src, re.S)
    if call is None or "@Ignore" in src:
        return None
    name, rest = call.groups()
    folder = re.match(r'\s*,\s*"([^"]*)"', rest)
    flags = re.findall(r'"([^"]*)"', rest.split("{", 1)[1].split("}", 1)[0]) if "{" in rest else []
    named = re.search(r"ExitStatus\.(\w+)", rest)
    if named:
        want = named.group(1)
    else:
        asserted = [code for code in RECORDED
                    if re.search(rf"assertTrue\(recorder\.recorded\w*\(EC\.{code}\b", src)]
        want = {13: "VIOLATION_LIVENESS", 12: "VIOLATION_SAFETY",
                11: "VIOLATION_DEADLOCK"}[RECORDED[asserted[0]]] if asserted else "SUCCESS"
    stats = re.search(r'EC\.TLC_STATS,\s*"(\d+)",\s*"(\d+)"', src)
    return {"test": str(path.relative_to(root)), "spec": name,
            "folder": folder.group(1) if folder else "", "flags": flags, "want": want,
            "distinct": int(stats.group(2)) if stats else None,
            "deadlock": bool(re.search(r"checkDeadLock\(\)\s*\{\s*return true", src))}


def command(case, root):
    """(argv, folder) of the checker's run, or (None, reason) when it is skipped."""
    folder = root / "test-model" / case["folder"]
    spec, cfg = folder / f"{case['spec']}.tla", folder / f"{case['spec']}.cfg"
    flags = list(case["flags"])
    while flags:
        flag = flags.pop(0)
        if flag == "-config" and flags:
            cfg = folder / flags.pop(0)
        elif flag in IGNORED_FLAGS:
            del flags[:IGNORED_FLAGS[flag]]
        else:
            return None, f"flag {flag}"
    if case["folder"] == "pcal":
        return None, "PlusCal translation"
    if not spec.exists() or not cfg.exists():
        return None, "no spec or config"
    argv = [sys.executable, "-m", "spec.checker", str(spec), "-config", str(cfg), "--json"]
    return argv + ([] if case["deadlock"] else ["-deadlock"]), folder


def verdict(case, code, out, err):
    if "Traceback" in err:
        return "crash"
    if code is None or code < 0:
        return "timeout"
    message = out.get("error") or ""
    if re.search(r"not supported|unsupported", message):
        return "refused"
    if "cannot find module" in message:
        return "module"
    want = EXIT.get(case["want"])
    if want is None:  # an error status: any error of ours is the same outcome
        return "agree" if code not in (0, 11, 12, 13) else "missed" if code == 0 else "other"
    if code == want or (want == 12 and code == 13):  # a temporal safety part: either code
        count = out.get("distinct_states")  # TLC's count is partial after a violation
        same = want != 0 or case["distinct"] is None or count is None \
            or count == case["distinct"]
        return "agree" if same else "count"
    return "blamed" if want == 0 else "missed" if code == 0 else "other"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tlatools", type=Path,
                        help="tlatools/org.lamport.tlatools of a tlaplus/tlaplus checkout")
    parser.add_argument("--cpu", type=int, default=20, help="CPU seconds per model")
    parser.add_argument("--only", default="", help="tests whose path contains one of these")
    parser.add_argument("--json", type=Path, help="write every case and verdict here")
    args = parser.parse_args(argv)
    root = args.tlatools
    if not (root / "test").is_dir() or not (root / "test-model").is_dir():
        parser.error(f"{root} has no test/ and test-model/ folders")
    only = [t for t in args.only.split(",") if t]
    cases = [c for p in sorted((root / "test").rglob("*.java"))
             if (c := read_test(p, root)) and (not only or any(t in c["test"] for t in only))]

    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (args.cpu, args.cpu + 1))

    env = {**os.environ, "PYTHONHASHSEED": "0",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    started, results = time.monotonic(), []
    for n, case in enumerate(cases, 1):
        run, where = command(case, root)
        if run is None:
            results.append({**case, "verdict": "skipped", "detail": where})
            continue
        try:
            p = subprocess.run(run, cwd=where, capture_output=True, text=True, env=env,
                               timeout=args.cpu * 3, preexec_fn=limit)
            code, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            code, out, err = None, "", ""
        try:
            got = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        except ValueError:
            got = {}
        v = verdict(case, code, got, err)
        detail = "" if v == "agree" else (got.get("error") or err.strip()[-300:])
        results.append({**case, "verdict": v, "exit": code,
                        "states": got.get("distinct_states"), "detail": detail})
        rate = n / max(time.monotonic() - started, 1e-9)
        print(f"[{n}/{len(cases)}, {rate:.1f}/s, ETA {(len(cases) - n) / rate:.0f}s] {v:8} "
              f"{case['test']} {detail[:120]}", file=sys.stderr, flush=True)
    counts = Counter(r["verdict"] for r in results)
    print(f"{len(results)} tests: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    for r in results:
        if r["verdict"] in ("blamed", "missed", "other", "count", "crash"):
            print(f"  {r['verdict']:8} {r['test']}: want {r['want']}, exit {r.get('exit')}, "
                  f"states {r.get('states')} (TLC {r['distinct']}) {r['detail'][:150]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
