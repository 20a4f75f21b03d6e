"""Differential test against TLC itself: random small specs, both checkers, every answer compared.

    python -m spec.checker.difftest --tlc TLA2TOOLS_JAR [--seed S] [--count N] [--start K]
                                    [--out DIR] [--keep]

Case k of seed S is a function of (S, k) alone, drawn by `random.Random(f"{S}/{k}")`:
- two to four typed variables: an integer, a boolean, a set, a sequence, a function, a
  record, a model value of a constant set P, a subset of P;
- Init, and two to four actions (some under `\\E e \\in S`, some operators A(e) that
  Next calls for each e of a constant set), from a typed grammar of everyday TLA+:
  arithmetic, sets and their comprehensions, quantifiers, CHOOSE, IF and CASE, LET, EXCEPT
  with @, :> and @@, records, sequences, Cardinality, DOMAIN, UNION, SUBSET, \\X, function
  and sequence sets, a RECURSIVE operator, a recursive function, a constant K ASSUMEd in
  range;
- invariants (one may read ENABLED), an optional state constraint and ACTION_CONSTRAINT,
  an optional temporal property under weak or strong fairness (of Next, of chosen actions
  or of each instance of one), an optional refinement of a random one-variable spec
  through INSTANCE ... WITH, SYMMETRY over P for some (no CHOOSE among P then), INIT and
  NEXT or SPECIFICATION in the cfg, deadlock checking on or off.
Values stay within small bounds, so every model is finite and small.

TLC (java -cp JAR tlc2.TLC -workers 1) and this checker (python -m spec.checker --json)
run on the same files. They must agree on the outcome (ok, invariant, deadlock, property,
or an error), on the violated invariant, on the distinct-state count and depth of a clean
run, and on the length of a safety counterexample (both search breadth-first, so both give
a shortest one). A disagreement prints the case, both answers and the command that
reproduces it, and its files stay under --out (all cases' files stay with --keep).
TLC is the judge here: nothing of this module is shared with the checker it judges.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
N = 4  # integers stay in 0..N


class Gen:
    """A typed random expression generator over the variables chosen for one case."""

    def __init__(self, rng, variables, symmetric=False):
        self.rng = rng
        self.vars = variables      # name -> type
        self.bound = []            # names of bound integer variables in scope
        self.symmetric = symmetric  # under SYMMETRY: nothing that tells p1 from p2

    def of(self, kind, depth):
        return getattr(self, kind)(max(depth, 0))

    def var_of(self, kind):
        names = [v for v, t in self.vars.items() if t == kind]
        return self.rng.choice(names) if names else None

    def bind(self, d, body):
        """A fresh bound integer over a set (depth d - 1), and body(d - 1) with it in scope:
        (its name, the set, the body)."""
        name = f"i{len(self.bound)}"
        s = self.set(d - 1)
        self.bound.append(name)
        inside = body(d - 1)
        self.bound.pop()
        return name, s, inside

    def leaf_int(self):
        choices = [str(self.rng.randint(0, N)), "K"] + self.bound
        v = self.var_of("int")
        if v:
            choices.append(v)
        return self.rng.choice(choices)

    def int(self, d):
        r = self.rng.randint(0, 15 if d else 0)
        if r == 0:
            return self.leaf_int()
        a, b = (lambda: self.int(d - 1)), (lambda: self.int(d - 1))
        forms = {
            1: lambda: f"(({a()}) + ({b()})) % {N + 1}",
            2: lambda: f"(({a()}) * ({b()})) % {N + 1}",
            3: lambda: f"(({a()}) - ({b()})) % {N + 1}",
            4: lambda: f"({a()}) \\div 2",
            5: lambda: f"Cardinality({self.set(d - 1)}) % {N + 1}",
            6: lambda: f"IF {self.bool(d - 1)} THEN {a()} ELSE {b()}",
            7: lambda: f"CHOOSE n{d} \\in 0..{N} : n{d} >= {a()}",
            8: lambda: f"CASE {self.bool(d - 1)} -> {a()} [] {self.bool(d - 1)} -> {b()} "
                       f"[] OTHER -> {self.leaf_int()}",
            9: lambda: f"LET m{d} == {a()} IN (m{d} + m{d}) % {N + 1}",
            10: lambda: self.access_int(d),
            11: lambda: f"-({a()}) + {N}",
            12: lambda: f"({a()}) %  ({b()} + 1)",
            13: lambda: self.quant_int(d),
            14: lambda: f"SumSet({self.set(d - 1)}) % {N + 1}",
            15: lambda: f"Fact[({a()}) % {N}] % {N + 1}",
        }
        return f"({forms[r]()})"  # whole: `a % 5 + 1` is a precedence conflict

    def quant_int(self, d):
        name, s, body = self.bind(d, self.bool)
        return f"Cardinality({{{name} \\in {s} : {body}}}) % {N + 1}"

    def access_int(self, d):
        options = []
        if "seq" in self.vars.values():
            q = self.var_of("seq")
            options.append(f"(IF {q} = <<>> THEN 0 ELSE Head({q}))")
            options.append(f"Len({q})")
            options.append(f"(IF Len({q}) > 1 THEN {q}[2] ELSE {N})")
        if "fn" in self.vars.values():
            options.append(f"{self.var_of('fn')}[({self.int(d - 1)}) % 3]")
        if "rec" in self.vars.values():
            options.append(f"{self.var_of('rec')}.p")
        if "procs" in self.vars.values():
            options.append(f"Cardinality({self.procs(d - 1)})")
        return self.rng.choice(options) if options else self.leaf_int()

    def bool(self, d):
        r = self.rng.randint(0, 13 if d else 0)
        if r == 0:
            choices = ["TRUE", "FALSE"]
            if self.var_of("bool"):
                choices += [self.var_of("bool")] * 2
            if self.var_of("rec"):
                choices.append(f"{self.var_of('rec')}.t")
            if self.var_of("proc") or self.var_of("procs"):
                choices += [f"({self.proc(0)} \\in {self.procs(0)})",
                            f"({self.procs(0)} = {{}})", f"({self.procs(0)} = P)"]
            return self.rng.choice(choices)
        i, j = (lambda: self.int(d - 1)), (lambda: self.int(d - 1))
        forms = {
            1: lambda: f"(({i()}) < ({j()}))",
            2: lambda: f"(({i()}) = ({j()}))",
            3: lambda: f"(({i()}) # ({j()}))",
            4: lambda: f"(({i()}) \\in {self.set(d - 1)})",
            5: lambda: f"({self.set(d - 1)} \\subseteq {self.set(d - 1)})",
            6: lambda: f"~({self.bool(d - 1)})",
            7: lambda: f"({self.bool(d - 1)} /\\ {self.bool(d - 1)})",
            8: lambda: f"({self.bool(d - 1)} \\/ {self.bool(d - 1)})",
            9: lambda: f"({self.bool(d - 1)} => {self.bool(d - 1)})",
            10: lambda: self.quant_bool(d, "\\E"),
            11: lambda: self.quant_bool(d, "\\A"),
            12: lambda: f"({self.seq(d - 1)} = {self.seq(d - 1)})" if self.var_of("seq")
            else f"({self.set(d - 1)} = {self.set(d - 1)})",
            13: lambda: self.rng.choice([
                f"(<<{i()}, {j()}>> \\in (0..2) \\X (0..{N}))",
                f"({self.set(d - 1)} \\in SUBSET (0..{N - 1}))",
                f"([k{d} \\in 0..2 |-> {i()}] \\in [0..2 -> 0..{N - 1}])",
                f"({self.seq(d - 1)} \\in Seq(0..2))"]),
        }
        return forms[r]()

    def quant_bool(self, d, q):
        name, s, body = self.bind(d, self.bool)
        return f"({q} {name} \\in {s} : {body})"

    def set(self, d):
        r = self.rng.randint(0, 11 if d else 0)
        if r == 0:
            choices = ["{}", f"0..{self.rng.randint(0, N)}", "{" + self.leaf_int() + "}"]
            if self.var_of("set"):
                choices += [self.var_of("set")] * 2
            return self.rng.choice(choices)
        a, b = (lambda: self.set(d - 1)), (lambda: self.set(d - 1))
        forms = {
            1: lambda: f"({a()} \\cup {b()})",
            2: lambda: f"({a()} \\cap {b()})",
            3: lambda: f"({a()} \\ {b()})",
            4: lambda: "{" + f"{self.int(d - 1)}, {self.int(d - 1)}" + "}",
            5: lambda: self.filter_set(d),
            6: lambda: self.map_set(d),
            7: lambda: f"0..({self.int(d - 1)})",
            8: lambda: f"UNION {{{a()}, {b()}}}",
            9: lambda: f"DOMAIN {self.var_of('seq')}" if self.var_of("seq") else a(),
            10: lambda: (f"{{{self.var_of('fn')}[k{d}] : k{d} \\in DOMAIN {self.var_of('fn')}}}"
                         if self.var_of("fn") else b()),
            11: lambda: f"UNION {{t{d} \\in SUBSET ({a()}) : Cardinality(t{d}) = 1}}",
        }
        return forms[r]()

    def filter_set(self, d):
        name, s, body = self.bind(d, self.bool)
        return f"{{{name} \\in {s} : {body}}}"

    def map_set(self, d):
        name, s, body = self.bind(d, self.int)
        return f"{{({body}) % {N + 1} : {name} \\in {s}}}"

    def seq(self, d):
        q = self.var_of("seq") or "<<>>"
        r = self.rng.randint(0, 6 if d else 0)
        forms = {
            0: lambda: self.rng.choice([q, "<<>>", f"<<{self.leaf_int()}>>"]),
            1: lambda: f"(IF Len({q}) < 3 THEN Append({q}, {self.int(d - 1)}) ELSE {q})",
            2: lambda: f"(IF {q} = <<>> THEN <<>> ELSE Tail({q}))",
            3: lambda: f"<<{self.int(d - 1)}, {self.int(d - 1)}>>",
            4: lambda: f"(IF Len({q}) < 2 THEN {q} \\o <<{self.int(d - 1)}>> ELSE {q})",
            5: lambda: f"SubSeq({q}, 2, Len({q}))",
            6: lambda: f"[j{d} \\in 1..Len({q}) |-> ({q}[j{d}] + 1) % {N + 1}]",
        }
        return forms[r]()

    def fn(self, d):
        f = self.var_of("fn")
        r = self.rng.randint(0, 4 if d else 0)
        if r == 0 or f is None:
            return f or f"[k \\in 0..2 |-> {self.leaf_int()}]"
        forms = {
            1: lambda: f"[{f} EXCEPT ![({self.int(d - 1)}) % 3] = {self.int(d - 1)}]",
            2: lambda: f"[{f} EXCEPT ![({self.int(d - 1)}) % 3] = (@ + 1) % {N + 1}]",
            3: lambda: f"[k{d} \\in 0..2 |-> IF k{d} = ({self.int(d - 1)}) % 3 THEN {f}[k{d}] "
                       f"ELSE ({f}[k{d}] + {self.int(d - 1)}) % {N + 1}]",
            4: lambda: f"((({self.int(d - 1)}) % 3) :> {self.int(d - 1)}) @@ {f}",
        }
        return forms[r]()

    def rec(self, d):
        r = self.var_of("rec")
        k = self.rng.choice([0, 1, 2] if d and r else [0])
        forms = {
            0: lambda: r or f"[p |-> {self.leaf_int()}, t |-> TRUE]",
            1: lambda: f"[{r} EXCEPT !.p = {self.int(d - 1)}]",
            2: lambda: f"[p |-> {self.int(d - 1)}, t |-> {self.bool(d - 1)}]",
        }
        return forms[k]()


    def proc(self, d):
        """A model value of P = {p1, p2, p3}."""
        o, h = self.var_of("proc"), self.var_of("procs") or "{}"
        c = f"c{d}"  # bound names differ by depth: TLA+ forbids shadowing one
        forms = [o or "(CHOOSE c0 \\in P : TRUE)"]
        if d and not self.symmetric:  # CHOOSE tells the model values apart
            forms += [f"(CHOOSE {c} \\in P : {c} # {forms[0]})",
                      f"(IF P \\ {h} = {{}} THEN {forms[0]} "
                      f"ELSE CHOOSE {c} \\in P \\ {h} : TRUE)"]
        return self.rng.choice(forms)

    def procs(self, d):
        """A subset of P."""
        h = self.var_of("procs") or "{}"
        if not d:
            return self.rng.choice([h, h, "{}", "P"])
        return self.rng.choice([f"({h} \\cup {{{self.proc(d - 1)}}})",
                                f"({h} \\ {{{self.proc(d - 1)}}})", f"(P \\ {h})",
                                f"{{c{d} \\in P : c{d} # {self.proc(d - 1)}}}", h])


INITIAL = {"int": "0", "bool": "FALSE", "set": "{}", "seq": "<<>>",
           "fn": "[k \\in 0..2 |-> 0]", "rec": "[p |-> 0, t |-> FALSE]",
           "proc": "(CHOOSE c0 \\in P : TRUE)", "procs": "{}"}
NAMES = {"int": "x", "bool": "b", "set": "s", "seq": "q", "fn": "f", "rec": "r",
         "proc": "o", "procs": "h"}


def make_case(seed, k):
    """({file name: text}, TLC flags) of case k of seed: Fuzz.tla, Fuzz.cfg, maybe Abs.tla."""
    rng = random.Random(f"{seed}/{k}")
    kinds = rng.sample(sorted(NAMES), rng.randint(2, 4))
    symmetric = bool({"proc", "procs"} & set(kinds)) and rng.random() < 0.4
    if symmetric and "proc" not in kinds:  # then every model value named is o's
        kinds.append("proc")
    variables = {NAMES[t]: t for t in kinds}
    g, constant = Gen(rng, variables, symmetric), Gen(rng, {})
    names = list(variables)
    lines = ["---- MODULE Fuzz ----", "EXTENDS Integers, Sequences, FiniteSets, TLC",
             "CONSTANTS P, K", f"ASSUME K \\in 0..{N}", f"VARIABLES {', '.join(names)}",
             f"vars == <<{', '.join(names)}>>", "Sym == Permutations(P)",
             "RECURSIVE SumSet(_)",
             "SumSet(S) == IF S = {} THEN 0 ELSE LET y == CHOOSE y \\in S : TRUE IN "
             "y + SumSet(S \\ {y})",
             "Fact[n \\in 0..4] == IF n = 0 THEN 1 ELSE n * Fact[n - 1]"]
    lines.append("Init == " + " /\\ ".join(
        f"{v} = {INITIAL[t]}" if rng.random() < 0.7 else f"{v} \\in {{{INITIAL[t]}, "
        f"{constant.of(t, 1)}}}" for v, t in variables.items()))
    steps, fairness = [], []
    for a in range(rng.randint(2, 4)):
        head, body, step, fair_forms = action(g, rng, variables, f"A{a}")
        steps.append(step)
        fairness.append(rng.choice(fair_forms))
        lines.append(f"{head} == {body}")
    lines.append("Next == " + " \\/ ".join(steps))
    fair = rng.random() < 0.35
    if fair and rng.random() < 0.5:  # weak or strong fairness of some actions
        chosen = [f for f in fairness if rng.random() < 0.6] or fairness[:1]
    else:
        chosen = ["WF_vars(Next)"] if fair else []
    lines.append(" /\\ ".join(["Spec == Init /\\ [][Next]_vars"] + chosen))
    lines.append(f"TypeOK == {typeok(variables)}")
    inv = state_predicate(g, rng, variables, 2)
    if rng.random() < 0.5:  # one that few states break: the search gets deeper first
        inv = (f"~({atom(rng, variables, symmetric)} /\\ {atom(rng, variables, symmetric)}"
               f" /\\ ({inv}))")
    if rng.random() < 0.2:  # ENABLED in a state predicate
        inv = f"({inv}) \\/ ~ENABLED {rng.choice(steps)}"
    lines.append(f"Inv == {inv}")
    behaviour = ["SPECIFICATION Spec"] if len(chosen) or rng.random() < 0.5 else \
        ["INIT Init", "NEXT Next"]  # no fairness: the cfg may name Init and Next instead
    cfg = [f"CONSTANTS P = {{p1, p2, p3}}  K = {rng.randint(0, N)}", *behaviour,
           "INVARIANT TypeOK", "INVARIANT Inv"] + (["SYMMETRY Sym"] if symmetric else [])
    if rng.random() < 0.3:
        lines.append(f"Constraint == {state_predicate(g, rng, variables)}")
        cfg.append("CONSTRAINT Constraint")
    if rng.random() < 0.2:
        v, t = rng.choice(sorted(variables.items()))
        lines.append(f"StepLimit == ({state_predicate(g, rng, variables)})' \\/ {v}' = {v}")
        cfg.append("ACTION_CONSTRAINT StepLimit")
    if fair and not symmetric and rng.random() < 0.8:
        p, q = atom(rng, variables), atom(rng, variables)
        lines.append("Prop == " + rng.choice([f"<>({p})", f"[]<>({p})", f"({p}) ~> ({q})",
                                              f"<>[]({p})"]))
        cfg.append("PROPERTY Prop")
    files = {}
    if not symmetric and rng.random() < 0.25:  # a refinement, through INSTANCE ... WITH
        # Fairness only when z maps to a variable: TLC 2.15 finds WF_z(A) violated where
        # z <- 0 makes <<A>>_z impossible (ENABLED after substitution is FALSE there)
        mapping = g.var_of("int") if rng.random() < 0.5 else None
        files["Abs.tla"] = abstract_module(rng, fair=mapping is not None)
        mapping = mapping or state_int(g, variables)
        lines.append(f"Abs == INSTANCE Abs WITH z <- {mapping}")
        lines.append("AbsSpec == Abs!SpecA")
        cfg.append("PROPERTY AbsSpec")
    lines.append("====")
    flags = ["-deadlock"] if rng.random() < 0.5 else []
    files["Fuzz.tla"], files["Fuzz.cfg"] = "\n".join(lines) + "\n", "\n".join(cfg) + "\n"
    return files, flags


def abstract_module(rng, fair):
    """A one-variable spec that Fuzz may or may not refine, with fairness if fair allows."""
    steps = rng.sample([f"z' = (z + {rng.randint(1, 2)}) % {N + 1}", "z' = z", "z' = 0",
                        f"z' \\in 0..{N} \\ {{z}}", f"z < {N} /\\ z' = z + 1",
                        f"z' = (z * 2) % {N + 1}"], rng.randint(1, 3))
    fair = " /\\ WF_z(NextA)" if fair and rng.random() < 0.6 else ""
    return "\n".join([
        "---- MODULE Abs ----", "EXTENDS Integers", "VARIABLE z",
        "InitA == " + rng.choice(["z = 0", "z \\in 0..1", "z \\in {0, 2}", f"z \\in 0..{N}"]),
        "NextA == " + " \\/ ".join(f"({a})" for a in steps),
        f"SpecA == InitA /\\ [][NextA]_z{fair}", "===="]) + "\n"


def state_int(g, variables):
    """An integer expression that reads a variable (the refinement mapping of z)."""
    reads = re.compile(r"\b(" + "|".join(variables) + r")\b")
    for _ in range(20):
        e = g.int(1)
        if reads.search(e):
            return e
    return "0"


def atom(rng, variables, symmetric=False):
    """A plain test of one variable, for temporal properties: TLC 2.15 reports `P ~> Q`
    violated where P is `\\E i \\in {} : b` (its liveness checker mishandles a subformula
    that is constant in effect), a bug of that TLC, not a disagreement to chase."""
    v, t = rng.choice(sorted(variables.items()))
    c = rng.randint(0, N)
    return {"int": f"{v} = {c}", "bool": rng.choice([v, f"~{v}"]), "set": f"{c} \\in {v}",
            "seq": f"Len({v}) = {c % 3}", "fn": f"{v}[{c % 3}] = {c}", "rec": f"{v}.p = {c}",
            "proc": f"{v} \\in " + ("P" if symmetric else "{CHOOSE c0 \\in P : TRUE}"),
            "procs": f"{v} = {{}}"}[t]  # under SYMMETRY, nothing tells p1 from p2


def state_predicate(g, rng, variables, depth=1):
    """A predicate that reads a variable. A constant one would be tested once, before the
    search (both checkers do), and TLC 2.15 finds `<>(TRUE => TRUE)` violated (its tableau
    mishandles a constant body): TLC's bug, not a disagreement to chase."""
    reads = re.compile(r"\b(" + "|".join(variables) + r")\b")
    for _ in range(20):
        p = g.bool(depth)
        if reads.search(p):
            return p
    v, t = rng.choice(sorted(variables.items()))
    return f"{v} = {INITIAL[t]}"


def action(g, rng, variables, name):
    """(head, body, its disjunct of Next, its fairness conditions): a guard, then every
    variable assigned (= or \\in) or left unchanged (alone or several in one UNCHANGED),
    maybe under `\\E e \\in S`, or as an operator A(e) that Next calls for each e of S."""
    parts = [g.bool(1)] if rng.random() < 0.6 else []
    shape = rng.choice(["plain", "plain", "exists", "operator"])
    if shape != "plain":
        g.bound.append("e")
    kept = []
    for v, t in variables.items():
        r = rng.random()
        if r < 0.3:
            kept.append(v)
        elif r < 0.4 and t == "int":
            parts.append(f"{v}' \\in {g.set(1)}")
        elif r < 0.5 and t == "proc":
            parts.append(f"{v}' \\in {g.procs(1)}")
        else:
            parts.append(f"{v}' = ({g.of(t, 2)})")
    if len(kept) > 1 and rng.random() < 0.5:
        parts.append(f"UNCHANGED <<{', '.join(kept)}>>")
    else:
        parts += [f"UNCHANGED {v}" for v in kept]
    body = " /\\ ".join(parts)
    if shape == "plain":
        return name, body, name, [f"WF_vars({name})", f"SF_vars({name})"]
    g.bound.pop()
    if shape == "exists":
        body = f"\\E e \\in {g.set(1)} : {body}"
        return name, body, name, [f"WF_vars({name})", f"SF_vars({name})"]
    domain = f"0..{rng.randint(0, 2)}"
    return (f"{name}(e)", body, f"(\\E e \\in {domain} : {name}(e))",
            [f"(\\A e \\in {domain} : WF_vars({name}(e)))",
             f"(\\A e \\in {domain} : SF_vars({name}(e)))",
             f"WF_vars(\\E e \\in {domain} : {name}(e))"])


def typeok(variables):
    kinds = {"int": "\\in 0..{N}", "bool": "\\in BOOLEAN", "set": "\\subseteq 0..{N}",
             "seq": "\\in Seq(0..{N})", "fn": "\\in [0..2 -> 0..{N}]",
             "rec": "\\in [p : 0..{N}, t : BOOLEAN]", "proc": "\\in P", "procs": "\\subseteq P"}
    return " /\\ ".join(f"{v} " + kinds[t].format(N=N) for v, t in variables.items())


# --- running both and reading their answers --------------------------------------------

TIMEOUT = 120  # seconds per checker and case; a case over it is counted, not compared


def run_tlc(jar, folder, flags):
    # its own temporary folder: TLC 2.15 unpacks the standard modules there, and two runs
    # sharing /tmp read each other's half-written files
    cmd = ["java", "-XX:+UseParallelGC", "-Xss16m", f"-Djava.io.tmpdir={folder}", "-cp",
           str(jar), "tlc2.TLC", "-workers", "1",
           "-nowarning", "-metadir", str(folder / "states"), *flags, "-config", "Fuzz.cfg",
           "Fuzz.tla"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"result": "timeout", "distinct_states": None}
    (folder / "tlc.out").write_text(proc.stdout + proc.stderr)
    if "TLC2 Version" not in proc.stdout:  # java itself failed: nothing to compare with
        raise SystemExit(f"TLC did not start ({' '.join(cmd)}):\n{proc.stderr.strip()}")
    return read_tlc(proc.stdout)


# TLC 2.15 (the jar CI installs) errors where later TLCs, and this checker, check on: a Next
# whose every disjunct is `\E i \in {} : ...` left it with no action (later TLCs keep one)
OLD_TLC_ONLY = ("No next state actions defined",)


def read_tlc(out):
    """TLC's text as {result, violated, distinct_states, depth, trace_length}; the result
    "skip" for an error of the old TLC alone."""
    answer = {"result": "error", "violated": None, "distinct_states": None, "depth": None,
              "trace_length": None}
    if any(text in out for text in OLD_TLC_ONLY):
        return {**answer, "result": "skip"}
    m = re.search(r"Error: Invariant (\w+) is violated", out)
    prop = re.search(r"Error: (Action property|Property) .* is violated", out)
    if "No error has been found" in out:
        answer["result"] = "ok"
    elif m:
        answer.update(result="invariant", violated=m.group(1))
    elif "Error: Deadlock reached" in out:
        answer["result"] = "deadlock"
    elif "Temporal properties were violated" in out or prop:
        answer["result"] = "property"
    elif re.search(r"Error: Assumption .* is false", out):
        answer["result"] = "assumption"
    found = re.findall(r"([\d,]+) distinct states found", out)
    if found:
        answer["distinct_states"] = int(found[-1].replace(",", ""))
    depth = re.search(r"depth of the complete state graph search is (\d+)", out)
    if depth:
        answer["depth"] = int(depth.group(1))
    trace = [int(n) for n in re.findall(r"^State (\d+):", out, flags=re.M)]
    if answer["result"] in ("invariant", "deadlock"):
        answer["trace_length"] = max(trace) if trace else 1  # "violated by the initial state"
    return answer


def run_ours(folder, flags):
    cmd = [sys.executable, "-m", "spec.checker", "--json", *flags, "-config",
           str(folder / "Fuzz.cfg"), str(folder / "Fuzz.tla")]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        return {"result": "timeout"}
    (folder / "ours.out").write_text(proc.stdout + proc.stderr)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"result": "crash", "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}


def differences(tlc, ours):
    """What the two answers disagree on (an empty list when they agree)."""
    if tlc["result"] != ours.get("result"):
        return [f"outcome: TLC {tlc['result']}, ours {ours.get('result')} "
                f"{ours.get('violated') or ours.get('error') or ''}".strip()]
    keys = {"ok": ["distinct_states", "depth"], "invariant": ["violated", "trace_length"],
            "deadlock": ["trace_length"]}.get(tlc["result"], [])
    if tlc["distinct_states"] == 0:  # TLC 2.15 reports depth 1 there, later TLCs 0, as we do
        keys = [k for k in keys if k != "depth"]
    return [f"{k}: TLC {tlc[k]}, ours {ours.get(k)}" for k in keys if tlc[k] != ours.get(k)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlc", required=True, metavar="JAR", help="TLC's tla2tools.jar")
    ap.add_argument("--seed", type=int, default=None, help="default: drawn and printed")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--out", default="difftest-out", help="where disagreements are kept")
    ap.add_argument("--keep", action="store_true", help="keep every case's files")
    args = ap.parse_args(argv)
    if not Path(args.tlc).is_file() or not shutil.which("java"):
        print(f"error: need java on the PATH and TLC's jar at {args.tlc}", file=sys.stderr)
        return 2
    args.tlc = Path(args.tlc).resolve()  # TLC runs in each case's folder
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    print(f"seed {seed}", flush=True)
    out = Path(args.out)
    tally, started = {"agree": 0, "disagree": 0, "skip": 0}, time.monotonic()
    for k in range(args.start, args.start + args.count):
        files, flags = make_case(seed, k)
        folder = out / f"{seed}-{k}"
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text)
        tlc, ours = run_tlc(args.tlc, folder, flags), run_ours(folder, flags)
        skip = tlc["result"] == "skip" or "timeout" in (tlc["result"], ours["result"])
        diff = [] if skip else differences(tlc, ours)
        tally["skip" if skip else "disagree" if diff else "agree"] += 1
        done = k - args.start + 1
        rate = done / (time.monotonic() - started)
        said = "DISAGREE " + "; ".join(diff) if diff else "skipped" if skip else "agree"
        print(f"case {k}: {said} (TLC {tlc['result']}, {tlc['distinct_states']} states)  "
              f"[{done}/{args.count}, {rate:.2f}/s, ETA {(args.count - done) / rate:.0f}s]",
              flush=True)
        if diff:
            print(f"  files: {folder}\n  again: python -m spec.checker.difftest --tlc {args.tlc} "
                  f"--seed {seed} --start {k} --count 1", flush=True)
        elif not args.keep:
            shutil.rmtree(folder)
    print(f"seed {seed}: {tally['agree']} agree, {tally['disagree']} disagree, "
          f"{tally['skip']} skipped (over {TIMEOUT} s, or an error of the old TLC alone)")
    return 1 if tally["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
