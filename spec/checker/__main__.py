"""Command line: python -m spec.checker SPEC.tla [-config X.cfg] [--json] [--workers N].

Prints TLC-style text (trace, counts) or, with --json, one JSON object on
stdout; the same on every run (the interpreter's hash seed is pinned to 0).
Progress goes to stderr. Exit codes follow TLC: 0 ok, 12 invariant,
13 property, 11 deadlock, 150 spec/cfg/evaluation error, 254 bad usage.
"""
import json
import os
import subprocess
import sys

from .check import EXIT_CODES, check
from .values import show

USAGE = ("usage: python -m spec.checker SPEC.tla [-config CFG] [--json] [--workers N] "
         "[-deadlock]")


def parse_args(argv):
    """(spec, cfg, json?, workers, deadlock check override or None)."""
    spec, cfg, as_json, workers, deadlock = None, None, False, 1, None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-config", "--config"):
            if i + 1 >= len(argv):
                raise ValueError("-config needs a file name")
            cfg = argv[i + 1]
            i += 1
        elif arg == "--json":
            as_json = True
        elif arg == "-deadlock":  # TLC's flag: do not report deadlocks
            deadlock = False
        elif arg in ("--workers", "-workers"):
            if i + 1 >= len(argv):
                raise ValueError("--workers needs a number")
            value = argv[i + 1]
            workers = os.cpu_count() or 1 if value == "auto" else int(value)
            if workers < 1:
                raise ValueError("--workers must be at least 1")
            i += 1
        elif arg.startswith("-"):
            raise ValueError(f"unknown option {arg}")
        elif spec is None:
            spec = arg
        else:
            raise ValueError(f"unexpected argument {arg}")
        i += 1
    if spec is None:
        raise ValueError("missing SPEC.tla")
    return spec, cfg, as_json, workers, deadlock


def print_text(result):
    if result.result == "error":
        print(f"Error: {result.error}")
    elif result.result == "invariant":
        print(f"Error: Invariant {result.violated} is violated.")
    elif result.result == "property":
        print(f"Error: Temporal properties were violated ({result.violated}).")
    elif result.result == "deadlock":
        print("Error: Deadlock reached.")
    if result.trace is not None:
        print("Error: The behavior up to this point is:")
        for i, (label, state) in enumerate(result.trace, 1):
            print(f"State {i}: <{label}>")
            for name, value in state.items():
                print(f"/\\ {name} = {show(value)}")
            print()
        if result.cycle_back == "stuttering":
            print("Stuttering")
        elif result.cycle_back is not None:
            print(f"Back to state {result.cycle_back}")
    if result.result == "ok":
        print("Model checking completed. No error has been found.")
    if result.result != "error":
        print(f"{result.states_generated} states generated, {result.distinct_states} distinct "
              f"states found, 0 states left on queue.")
        print(f"The depth of the complete state graph search is {result.depth}.")
    print(f"Finished in {result.seconds:.2f}s")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help", "-help") for a in argv):
        print(f"{USAGE}\n\n{__doc__.split(chr(10), 1)[1].strip()}")
        return 0
    try:
        spec, cfg, as_json, workers, deadlock = parse_args(argv)
    except ValueError as exc:
        print(f"Error: {exc}\n{USAGE}", file=sys.stderr)
        return 254
    sys.setrecursionlimit(10000)
    result = check(spec, cfg, progress=True, workers=workers, check_deadlock=deadlock)
    if as_json:
        print(json.dumps(result.to_json()))
    else:
        print_text(result)
    return EXIT_CODES[result.result]


def pin_hash_seed():
    """Run again under PYTHONHASHSEED=0 unless already: a set of strings is iterated in an
    order that follows the hash seed, and RandomElement's draws, the successors' order and
    so the trace shown follow that order; pinned, every run prints the same."""
    if os.environ.get("PYTHONHASHSEED") == "0":
        return
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    args = [sys.executable] + sys.orig_argv[1:]
    if sys.platform == "win32":  # no exec there: run a child and pass its exit code on
        sys.exit(subprocess.call(args, env=env))
    sys.stdout.flush()
    os.execve(sys.executable, args, env)


def leave(code):
    """Exit with code once the output is out, without tearing the interpreter down: freeing
    every state and memo one by one took 1.9 s of MCLamportMutex's 24 (the memory goes
    back to the system at once, as it does for TLC's JVM)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    pin_hash_seed()
    try:
        leave(main())
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as TLC's
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # tools do
        sys.exit(141)
