---- MODULE FairSub ----
\* Fairness of a sub-action that assigns only some variables; []<><<A>>_v properties.
EXTENDS Naturals
VARIABLES x, y
A == x' = (x + 1) % 2
Next == A /\ y' = 1 - y
Spec == x = 0 /\ y = 0 /\ [][Next]_<<x, y>> /\ WF_x(A)
Unfair == x = 0 /\ y = 0 /\ [][Next]_<<x, y>>
Live == []<>(x = 1)
OftenA == []<><<A>>_x
NeverFive == []<>(x = 5)
====
