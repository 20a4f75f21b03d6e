"""The checker's output does not depend on the interpreter's hash seed: sets of model values
and of strings are iterated in an order that RandomElement's draws (and so the reachable
states) follow, and that order must come out the same from run to run."""
import os
import subprocess
import sys
from pathlib import Path

from .conftest import write_spec

REPO = Path(__file__).resolve().parents[2]

DRAWS = """
CONSTANT N
VARIABLE x
S == {"a", "b", "c", "d", "e", "f", "g", "h"}
Pick == [n \\in N |-> RandomElement(N)]
Word == [w \\in S |-> RandomElement(S)]
Init == x = <<Pick, Word, {n \\in N : Pick[n] = n}>>
Next == \\E n \\in N : x[1][n] # n /\\ x' = <<[x[1] EXCEPT ![n] = x[1][x[1][n]]], x[2], x[3]>>
Never == x[1] # [n \\in N |-> x[1][n]]
"""
CFG = ("CONSTANT N = {m1, m2, m3, m4, m5, m6, m7, m8}\nINIT Init\nNEXT Next\n"
       "INVARIANT Never\nCHECK_DEADLOCK FALSE\n")


def run_cli(spec, cfg, seed, cwd):
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "spec.checker", spec, "-config", cfg]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    out = [line for line in proc.stdout.splitlines() if not line.startswith("Finished in")]
    return out, f"cd {cwd} && PYTHONPATH={REPO} PYTHONHASHSEED={seed} {' '.join(cmd)}"


def test_cli_output_is_the_same_under_any_hash_seed(tmp_path):
    """Other seeds (strings); the same seed from another folder (an identity hash of model
    values follows the allocations made before the check starts)."""
    spec, cfg = write_spec(tmp_path, DRAWS, CFG)
    runs = [run_cli(spec, cfg, seed, cwd) for seed, cwd in
            (("0", REPO), ("0", "/"), ("1", REPO), ("2", tmp_path), ("random", REPO))]
    first, first_cmd = runs[0]
    assert first and first[0].startswith("Error: Invariant Never"), "\n".join(first)
    for out, cmd in runs[1:]:
        assert out == first, f"output differs from that of {first_cmd}; reproduce: {cmd}"


def test_model_values_iterate_in_the_same_order_whatever_was_allocated_before(tmp_path):
    """Under one hash seed: k model values made before the check moves the addresses of
    the spec's own (an identity hash would follow them), not the order of their sets."""
    spec, cfg = write_spec(tmp_path, DRAWS, CFG)
    outs, codes = {}, {}
    for k in (0, 1, 2, 5):
        code = (f"from spec.checker.values import ModelValue\n"
                f"junk = [ModelValue('junk%d' % i) for i in range({k})]\n"
                f"from spec.checker.__main__ import main\n"
                f"main([{spec!r}, '-config', {cfg!r}])")
        codes[k] = code
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=120)
        outs[k] = [line for line in proc.stdout.splitlines() if not line.startswith("Finished")]
    assert outs[0] and outs[0][0].startswith("Error: Invariant Never"), proc.stderr
    for k, out in outs.items():
        assert out == outs[0], (f"{k} model values made first change the output; reproduce: "
                                f"PYTHONHASHSEED=0 {sys.executable} -c {codes[k]!r}")
