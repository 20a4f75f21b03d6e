"""Run the checker on the models of a tlaplus/Examples checkout and compare with its manifests.

    python -m spec.checker.examples_run EXAMPLES_DIR [--cpu S] [--timeout S] [--max-tlc-seconds 60]
                                        [--only TEXT[,TEXT...]] [--after NAME] [--json OUT]
                                        [--list] [--tlc TLA2TOOLS_JAR [--tlc-library DIR]]

Every `specifications/*/manifest.json` lists modules and their models with TLC's recorded
`result`, `runtime` and, for most, `distinctStates`. We select the models whose mode is
"exhaustive search", whose recorded runtime is at most --max-tlc-seconds and whose modules
(the root and everything it EXTENDS or INSTANCEs, transitively) are found beside the spec or
are TLC's standard modules. Each one runs in its own child process (`nice`, one at a time,
at most --cpu CPU seconds and --timeout wall-clock seconds; the time reported is the
child's CPU time, since the machine may be shared) and gets one verdict:

  agree          same result as TLC and, where recorded, the same distinct-state count
  disagree       a different result or count that is not one of the two cases below
  blamed         TLC succeeded but we reported a violation or a spec error
  refused        we declined a construct by name ("not supported"/"unsupported")
  unclear        timeout, crash, or output we cannot read

--only keeps the models whose cfg path contains one of the comma-separated texts, --after
those whose name sorts after NAME (to resume a run). The summary gives each verdict's count
and share, then names every model refused, timed out or still blamed.
Nothing of the Examples repository is copied: the checkout's path is an argument.

--tlc JAR also runs TLC itself on each model, on this machine, right after ours: `java -cp
JAR tlc2.TLC -workers 1`, under the same CPU limit, its CPU time (JVM start, JIT and garbage
collector threads included) and wall time measured the same way. The manifests' runtimes
come from other machines and TLC versions; this is the same-machine baseline. TLC's own
distinct-state count is then compared too (where the manifest has none, e.g. a random
graph). --tlc-library DIR is TLC's library path: the Examples' proofs EXTEND TLAPS and
the *Theorems modules, which TLC's jar lacks (the TLA+ proof system's library has them).
A cfg line `CHECK_DEADLOCK FALSE`, which older TLCs do not read, becomes -deadlock.
"""
import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .difftest import read_tlc

STANDARD = {"Naturals", "Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC",
            "TLCExt", "Json", "Randomization", "RealTime", "Toolbox",
            "TLAPS", "NaturalsInduction", "WellFoundedInduction", "FiniteSetTheorems",
            "SequenceTheorems", "FunctionTheorems", "SequencesExtTheorems",
            "FiniteSetsExtTheorems", "FoldsTheorems", "BagsTheorems"}
TLC_RESULT = {"success": "ok", "safety failure": "safety", "deadlock failure": "deadlock",
              "liveness failure": "property", "assumption failure": "assumption"}
REFUSAL = re.compile(r"not supported|unsupported|is outside the checker")


def runtime_seconds(text):
    if not re.fullmatch(r"\d\d:\d\d:\d\d", text or ""):
        return None
    h, m, s = (int(x) for x in text.split(":"))
    return h * 3600 + m * 60 + s


def extends_names(path):
    text = re.sub(r"\(\*.*?\*\)", " ", path.read_text(errors="replace"), flags=re.S)
    text = re.sub(r"\\\*[^\n]*", " ", text)
    names = set()
    for m in re.finditer(r"\bEXTENDS\s+(\w+(?:\s*,\s*\w+)*)", text):
        names.update(n.strip() for n in m.group(1).split(","))
    for m in re.finditer(r"\bINSTANCE\s+(\w+)", text):
        names.add(m.group(1))
    return names


def module_names(path):
    """The modules a file defines: its first, those nested in it and those that follow it."""
    return set(re.findall(r"^\s*-{4,}\s*MODULE\s+(\w+)", path.read_text(errors="replace"),
                          flags=re.M))


def standard_only(spec):
    """True if every module spec needs is beside it (in a file of its own or in a file
    read before) or standard."""
    seen, todo, defined, elsewhere = set(), [spec.stem], set(), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        local = spec.parent / f"{name}.tla"
        if local.exists():
            todo.extend(extends_names(local))
            defined |= module_names(local)
        elif name not in STANDARD:
            elsewhere.add(name)
    return elsewhere <= defined


def select(root, max_seconds):
    """[(spec path, cfg path, model entry)] in a stable order."""
    out = []
    for manifest in sorted(root.glob("specifications/*/manifest.json")):
        data = json.loads(manifest.read_text())
        for module in data.get("modules", []):
            spec = root / module["path"]
            for model in module.get("models", []):
                secs = runtime_seconds(model.get("runtime"))
                if model.get("mode") != "exhaustive search" or secs is None:
                    continue
                if secs > max_seconds or model.get("result") not in TLC_RESULT:
                    continue
                if spec.exists() and standard_only(spec):
                    out.append((spec, root / model["path"], model))
    return out


def cpu_limit(seconds):
    """preexec_fn for the child: at most `seconds` of CPU time (SIGXCPU, then SIGKILL)."""
    def apply():
        limit = max(1, int(seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    return apply


def run_one(spec, cfg, timeout, cpu_seconds):
    cmd = ["nice", "-n", "10", sys.executable, "-m", "spec.checker", "--json",
           "-config", str(cfg), str(spec)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              cwd=Path(__file__).resolve().parents[2],
                              preexec_fn=cpu_limit(cpu_seconds))
    except subprocess.TimeoutExpired:
        return None, timeout, "timeout (wall clock)"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) or elapsed >= cpu_seconds:
        return None, elapsed, f"timeout ({cpu_seconds:.0f} s of CPU)"
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line), elapsed, ""
            except ValueError:
                break
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return None, elapsed, f"exit {proc.returncode}: {tail}"


def run_tlc(jar, library, spec, cfg, timeout, cpu_seconds):
    """TLC on one model: (outcome, distinct states or None, CPU seconds, wall seconds),
    the outcome as difftest.read_tlc reads TLC's text ("invariant" is "safety" here)."""
    with tempfile.TemporaryDirectory(prefix="tlc-") as tmp:
        text = cfg.read_text(errors="replace")
        flags = ["-deadlock"] if re.search(r"CHECK_DEADLOCK\s+FALSE", text) else []
        local = Path(tmp) / cfg.name
        local.write_text(re.sub(r"CHECK_DEADLOCK\s+(FALSE|TRUE)", "", text))
        cmd = ["nice", "-n", "10", "java", "-XX:+UseParallelGC", f"-DTLA-Library={library}",
               f"-Djava.io.tmpdir={tmp}",  # TLC 2.15 unpacks its standard modules there
               "-cp", str(jar), "tlc2.TLC",
               "-workers", "1", "-metadir", str(Path(tmp) / "states"), *flags,
               "-config", str(local), spec.name]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  cwd=spec.parent, preexec_fn=cpu_limit(cpu_seconds))
        except subprocess.TimeoutExpired:
            return "timeout", None, timeout, timeout
        wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) or cpu >= cpu_seconds:
        return "timeout", None, cpu, wall
    answer = read_tlc(proc.stdout)
    outcome = {"invariant": "safety"}.get(answer["result"], answer["result"])
    if outcome in ("error", "skip"):
        errors = [ln for ln in proc.stdout.splitlines() if ln.startswith(("Error", "Parsing"))]
        outcome = "error: " + (errors[0] if errors else f"exit {proc.returncode}")[:120]
    return outcome, answer["distinct_states"], cpu, wall


def verdict(model, got):
    """(verdict, one-line detail) for our JSON `got` against TLC's manifest entry."""
    want = TLC_RESULT[model["result"]]
    if got is None:
        return "unclear", ""
    ours = got.get("result")
    error = got.get("error") or ""
    if ours == "error":
        if REFUSAL.search(error):
            return "refused", error
        if want == "assumption" and "ASSUME" in error:
            return "agree", error
        return ("blamed" if want == "ok" else "disagree"), error
    if want == "ok" and ours != "ok":
        return "blamed", f"{ours} {got.get('violated')}"
    same = ours == want or (want == "safety" and ours in ("invariant", "property"))
    if not same:
        return "disagree", f"ours {ours} {got.get('violated') or ''}, TLC {model['result']}"
    expected = model.get("distinctStates")
    if want == "ok" and expected is not None and got.get("distinct_states") != expected:
        return "disagree", f"distinct states {got.get('distinct_states')}, TLC {expected}"
    return "agree", ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples")
    ap.add_argument("--timeout", type=float, default=3600.0, help="wall-clock seconds")
    ap.add_argument("--cpu", type=float, default=300.0, help="CPU seconds per model")
    ap.add_argument("--max-tlc-seconds", type=int, default=60)
    ap.add_argument("--only", default="")
    ap.add_argument("--after", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--tlc", default="", metavar="JAR",
                    help="also run TLC (java -cp JAR tlc2.TLC, one worker) on each model")
    ap.add_argument("--tlc-library", default="", metavar="DIR",
                    help="modules TLC's jar lacks (TLAPS, *Theorems), for --tlc")
    args = ap.parse_args(argv)
    if args.tlc:  # TLC runs in each spec's folder
        args.tlc = Path(args.tlc).resolve()
        args.tlc_library = args.tlc_library and str(Path(args.tlc_library).resolve())
        if not args.tlc.is_file():
            print(f"error: no TLC jar at {args.tlc}", file=sys.stderr)
            return 2
    root = Path(args.examples).resolve()
    if not (root / "specifications").is_dir():
        print(f"error: {root} has no specifications/ folder", file=sys.stderr)
        return 2
    only = [t for t in args.only.split(",") if t] or [""]
    chosen = [c for c in select(root, args.max_tlc_seconds)
              if any(t in str(c[1]) for t in only)
              and str(c[1].relative_to(root / "specifications")) > args.after]
    rows = []
    for spec, cfg, model in chosen:
        name = str(cfg.relative_to(root / "specifications"))
        if args.list:
            print(name)
            continue
        got, secs, failure = run_one(spec, cfg, args.timeout, args.cpu)
        kind, detail = verdict(model, got)
        detail = detail or failure
        tlc = runtime_seconds(model["runtime"])
        ours = got.get("distinct_states") if got else None
        print(f"{kind:9} {name}  ours {secs:.1f}s cpu, TLC {tlc}s  states {ours} "
              f"TLC {model.get('distinctStates')}  {detail[:160]}", flush=True)
        row = {"model": name, "verdict": kind, "seconds": round(secs, 2),
               "tlc_seconds": tlc, "states": ours,
               "tlc_states": model.get("distinctStates"), "detail": detail}
        if args.tlc:
            row.update(here_tlc(args, spec, cfg, got, secs))
        rows.append(row)
        if args.json:  # after every model, so an interrupted run keeps what it measured
            Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if not args.list:
        print(summary(rows))
    return 0


def here_tlc(args, spec, cfg, got, secs):
    """Run TLC on this machine too; print and return its measures beside ours."""
    outcome, states, cpu, wall = run_tlc(args.tlc, args.tlc_library, spec, cfg,
                                         args.timeout, args.cpu)
    ours = got.get("distinct_states") if got else None
    same = "same states" if states == ours else f"STATES DIFFER ({ours} ours)"
    ratio = f"{secs / cpu:.2f}" if cpu else "-"
    print(f"          TLC here: {outcome}, {states} states ({same}), {cpu:.1f}s cpu, "
          f"{wall:.1f}s wall; ours/TLC cpu {ratio}", flush=True)
    return {"here_outcome": outcome, "here_states": states, "here_cpu": round(cpu, 2),
            "here_wall": round(wall, 2)}


def summary(rows):
    """Counts and shares per verdict, then the models that did not agree, by verdict."""
    total = len(rows)
    kinds = ["agree", "blamed", "disagree", "refused", "unclear"]
    counts = {k: sum(r["verdict"] == k for r in rows) for k in kinds}
    share = ", ".join(f"{k} {n} ({100 * n / total:.0f}%)" if total else f"{k} 0"
                      for k, n in counts.items())
    lines = [f"{total} models: {share}"]
    for k in kinds[1:]:
        for r in rows:
            if r["verdict"] == k:
                lines.append(f"  {k:9} {r['model']}: {r['detail'][:140]}")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into `head`: stop quietly
        sys.stderr.close()
        sys.exit(0)
