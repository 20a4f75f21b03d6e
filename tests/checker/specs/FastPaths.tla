---- MODULE FastPaths ----
\* The evaluator's shortcuts, each on a value it must not get wrong: f[K] for a constant
\* model value K (inline, and hoisted with a unit's other state lookups), f[k] with a bound
\* k of unknown kind, nested EXCEPT on functions over model values, k \in DOMAIN s inline,
\* x = K for a constant record set K (compared as a frozenset), membership of
\* [S -> [S -> T]], record sets and SUBSET remembered per object, and (FastPaths_constraint)
\* a successor met before skipping the state constraint.
EXTENDS Naturals, Sequences, FiniteSets
CONSTANTS Proc, P1, P2
VARIABLES f, g, log, rs
Recs == [who : Proc]
Init == /\ f = [p \in Proc |-> 0]
        /\ g = [p \in Proc |-> [q \in Proc |-> "none"]]
        /\ log = <<>>
        /\ rs = {}
Bump == \E p \in Proc : f[p] < 2 /\ f' = [f EXCEPT ![p] = f[p] + 1] /\ UNCHANGED <<g, log, rs>>
Flip == \E p, q \in Proc :
          /\ g' = [g EXCEPT ![p][q] = IF g[p][q] = "none" THEN "set" ELSE "none"]
          /\ UNCHANGED <<f, log, rs>>
Note == Len(log) < 2 /\ log' = Append(log, f[P1]) /\ UNCHANGED <<f, g, rs>>
Add == rs # Recs /\ \E p \in Proc : rs' = rs \cup {[who |-> p]} /\ UNCHANGED <<f, g, log>>
Reset == rs = Recs /\ rs' = {} /\ UNCHANGED <<f, g, log>>
Next == Bump \/ Flip \/ Note \/ Add \/ Reset
Inv == /\ f[P1] <= 2 /\ f[P2] <= 2 /\ f[P1] + f[P2] = f[P2] + f[P1]
       /\ g[P1][P2] \in {"none", "set"} /\ g[P2][P1] \in {"none", "set"}
       /\ (1 \in DOMAIN log) = (Len(log) >= 1) /\ (2 \in DOMAIN log) = (Len(log) = 2)
       /\ \A i \in DOMAIN log : log[i] <= f[P1]
       /\ (rs = Recs) = (Cardinality(rs) = 2)
TypeOK == /\ g \in [Proc -> [Proc -> {"none", "set"}]] /\ f \in [Proc -> 0..2]
          /\ rs \in SUBSET Recs /\ {f[P1], f[P2]} \in SUBSET (0..2)
          /\ \A r \in rs : r \in Recs
\* violated once some g[p][q] is "set" (one Flip step): a remembered answer must not hide it
NoneSet == g \in [Proc -> [Proc -> {"none"}]]
\* violated once f[P1] = 2 (two Bump steps)
Small == {f[P1]} \in SUBSET (0..1)
Constraint == f[P2] + Len(log) <= 2
====
