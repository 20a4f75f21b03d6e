"""Write spec/broken/*.tla: Kernel.tla with one design decision removed per file.

How it works. Each variant is a list of exact (old, new) line edits applied to
spec/Kernel.tla, whose DECISION-marked lines carry the design decisions; the
module is renamed after the file. `python spec/broken/make.py` rewrites the
files; `variants()` returns their text so a test can assert they are current.
Every variant has a same-named .cfg here under which the checker finds the
counterexample recorded in spec/manifest.json.
"""
from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
KERNEL = HERE.parent / "Kernel.tla"

STALE_RECOVER = r"""\* BROKEN: recovery decides on the worker's own copy of the journal (`view`),
\* which another worker's append may have made stale, and appends without checking.
StaleRecover(w, i) ==
  LET v      == view[w][i]
      a      == ans[w][i]
      fresh  == a.asked >= 0 /\ a.asked >= v.claim
      absent == Queryable /\ fresh
      open   == Dedupes /\ v.first >= 0 /\ now < v.first + DedupWindow - DedupMargin
  IN
  /\ up[w] /\ v.st = "DISPATCHED" /\ now >= v.claim
  /\ ~(Queryable /\ ~fresh)
  /\ ans' = [ans EXCEPT ![w][i] = NoAns]
  /\ CASE absent /\ a.found -> Finish(i, "COMMITTED", "true")
       [] ~Recheck(i) ->
            IF absent THEN Finish(i, "REFUSED", "false") ELSE Finish(i, "AMBIGUOUS", "unknown")
       [] open \/ absent ->
            /\ rec' = [rec EXCEPT ![i] = Dispatched(i, v.att + 1, v.first)]
            /\ Fsync(i) /\ SendReq(i, v.att + 1)
       [] OTHER -> Finish(i, "AMBIGUOUS", "unknown")
  /\ view' = [view EXCEPT ![w][i] = rec'[i]]
  /\ UNCHANGED <<now, up, acks, tgt, lease, prem, crashes, losses, alarm>>

\* A worker re-reads the journal.
Refresh(w, i) ==
  /\ up[w] /\ view[w][i] # rec[i] /\ view' = [view EXCEPT ![w][i] = rec[i]]
  /\ UNCHANGED <<now, rec, dur, up, ans, net, acks, tgt, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

"""

VARIANTS: dict[str, list[tuple[str, str]]] = {
    # identity derived from the payload: a re-decided amount is a new effect
    "NoIdentity": [
        ("Id(k, a) == k          \\* DECISION identity",
         "Id(k, a) == <<k, a>>   \\* BROKEN: identity from the payload"),
        ("Ids == Keys            \\* DECISION identity",
         "Ids == Keys \\X Amounts \\* BROKEN"),
        ("KeyOf(i) == i          \\* DECISION identity",
         "KeyOf(i) == i[1]       \\* BROKEN"),
    ],
    # DISPATCHED appended without fsync before the send
    "NoDurableIntent": [
        ("            /\\ Fsync(i)                                     \\* DECISION intent",
         "            /\\ Lazy(i)                        \\* BROKEN: intent not fsync'd"),
    ],
    # recovery resends without re-checking lease and premises
    "NoRecheck": [
        ("Recheck(i) == Checks(i)                                     \\* DECISION recheck",
         "Recheck(i) == TRUE                           \\* BROKEN: no re-check"),
    ],
    # recovery does not wait out the claim of the in-flight send
    "NoWait": [
        ("Settled(i, t) == t >= rec[i].claim                          \\* DECISION wait",
         "Settled(i, t) == TRUE                        \\* BROKEN: no claim"),
    ],
    # a tier-1 resend trusts the whole dedup window, no margin
    "NoDedupMargin": [
        ("                /\\ now < rec[i].first + DedupWindow - DedupMargin",
         "                /\\ now < rec[i].first + DedupWindow   \\* BROKEN: no margin"),
    ],
    # tier 3 resends at recovery
    "Tier3Resend": [
        ("BlindResend == FALSE                                        \\* DECISION tier3",
         "BlindResend == ~Dedupes /\\ ~Queryable       \\* BROKEN: tier 3 resends"),
    ],
    # the Python kernel today: a late "not found" alerts whenever it was asked
    "LateLookupNoAskedAt": [
        ("  /\\ Late(i, ans[w][i].found, ans[w][i].asked >= rec[i].claim)",
         "  /\\ Late(i, ans[w][i].found, TRUE)   \\* BROKEN: asked_at ignored"),
    ],
    # two workers, no conditional append: recovery acts on a stale view of the journal
    "StaleView": [
        ("  alarm      \\* history: the kernel raised an invariant alert (K7)",
         "  alarm,     \\* history: the kernel raised an invariant alert (K7)\n"
         "  view       \\* BROKEN: each worker's own copy of the journal"),
        ("          sent, sentPay, alarm>>\n", "          sent, sentPay, alarm, view>>\n"),
        ("  /\\ alarm = FALSE\n",
         "  /\\ alarm = FALSE\n  /\\ view = [w \\in Workers |-> [i \\in Ids |-> NoRec]]\n"),
        ("Dispatch(w, i) \\/ Recover(w, i) \\/ Lookup(w, i)", "Dispatch(w, i) \\/ Lookup(w, i)"),
        ("Next == KernelNext \\/ EnvNext",
         "Next == \\/ (KernelNext \\/ EnvNext) /\\ UNCHANGED view\n"
         "        \\/ \\E w \\in Workers, i \\in Ids : StaleRecover(w, i) \\/ Refresh(w, i)"),
        ("\nInit ==\n", "\n" + STALE_RECOVER + "Init ==\n"),
    ],
}


RESERVE_LATER = r"""\* BROKEN: the admission's budget check and the reservation are two appends.
Reserve(u) ==
  /\ rec[u].st \in Holding \cup {"COMMITTED"} /\ ~rec[u].res
  /\ rec' = [rec EXCEPT ![u].res = TRUE]
  /\ UNCHANGED <<now, seq, up, ans, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

"""

# Coord.tla (several units on one journal) with one decision removed.
COORD_VARIANTS: dict[str, list[tuple[str, str]]] = {
    # the target accepts any token: a stale owner's late write lands
    "CoordNoFencing": [
        ("Fresh(m) == \\A i \\in Write(m.id) : hi[i] <= m.tok           \\* DECISION fencing",
         "Fresh(m) == TRUE                                 \\* BROKEN: no fencing"),
    ],
    # the reservation is a separate append after the admission's budget check
    "CoordReserveApart": [
        ("ReserveNow == TRUE                                          \\* DECISION reserve",
         "ReserveNow == FALSE                    \\* BROKEN: reserved by a later append"),
        ("\nInit ==\n", "\n" + RESERVE_LATER + "Init ==\n"),
        ("Next == KernelNext \\/ EnvNext",
         "Next == KernelNext \\/ EnvNext \\/ \\E u \\in Units : Reserve(u)"),
    ],
    # no plan check at admission, dispatch or recovery
    "CoordNoPlanCheck": [
        ("PlanOK == plan = 1                                          \\* DECISION plan",
         "PlanOK == TRUE                                   \\* BROKEN: no plan check"),
    ],
    # the agent's ack commits: no verification
    "CoordAgentsWord": [
        ("AckCommits == ~Verify                                       \\* DECISION verify",
         "AckCommits == TRUE                               \\* BROKEN: commit on the ack"),
    ],
}
BASES = {**{name: "Kernel" for name in VARIANTS}, **{name: "Coord" for name in COORD_VARIANTS}}
EDITS = {**VARIANTS, **COORD_VARIANTS}


def variant_text(name: str, base: str) -> str:
    module = BASES[name]
    text = base.replace(f"MODULE {module} ", f"MODULE {name} ", 1)
    for old, new in EDITS[name]:
        if text.count(old) != 1:
            raise ValueError(f"{name}: the edit target {old.strip()!r} is not in {module}.tla "
                             f"exactly once")
        text = text.replace(old, new)
    return text


def variants() -> dict[str, str]:
    """File name -> text of every broken variant, made from the current Kernel.tla and
    Coord.tla."""
    bases = {m: (HERE.parent / f"{m}.tla").read_text() for m in set(BASES.values())}
    return {f"{name}.tla": variant_text(name, bases[BASES[name]]) for name in EDITS}


def main() -> int:
    for fname, text in variants().items():
        (HERE / fname).write_text(text)
        print(f"wrote spec/broken/{fname}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
