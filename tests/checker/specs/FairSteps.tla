---- MODULE FairSteps ----
\* []<><<A>>_x under WF_x(A), where B takes some of A's steps and steps of its own.
\* The cycle of B's own steps 0 -> 2 -> 1 -> 0 takes no A step while A stays enabled:
\* it is not fair, and no fair behaviour avoids A steps (TLC: no violation).
EXTENDS Naturals
VARIABLE x
A == x' = (x + 1) % 3
B == x' \in 0..2
Spec == x = 0 /\ [][A \/ B]_x /\ WF_x(A)
OftenA == []<><<A>>_x
====
