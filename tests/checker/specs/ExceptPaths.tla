---- MODULE ExceptPaths ----
EXTENDS Naturals
\* EXCEPT clauses on one path but for the last key are applied in one walk
\* (rt.except_many): each clause's @ must see the clauses before it, a key outside
\* the domain changes nothing, and a sequence on the path takes the general route.
VARIABLES a, b
P == {"p1", "p2"}
Zero == [f |-> 0, g |-> 0]
Init == /\ a = [p \in P |-> Zero]
        /\ b = <<Zero>>
StepA(p) == /\ a[p].f < 2 /\ a[p].g < 3
            /\ a' = [a EXCEPT ![p].f = @ + 1, ![p].g = @ + 1, ![p].f = @ * 2, ![p].h = 7]
            /\ UNCHANGED b
StepB == /\ b[1].f < 2 /\ b[1].g < 3
         /\ b' = [b EXCEPT ![1].f = @ + 1, ![1].g = @ + 1, ![1].f = @ * 2]
         /\ UNCHANGED a
Next == (\E p \in P : StepA(p)) \/ StepB
Inv == /\ \A p \in P : a[p] \in {Zero, [f |-> 2, g |-> 1]}
       /\ b[1] \in {Zero, [f |-> 2, g |-> 1]}
====
