---- MODULE Refine ----
\* A whole spec formula as PROPERTY: the spec itself, and a refinement through INSTANCE.
EXTENDS Naturals
VARIABLE n
Init == n = 0
Next == n' = (n + 1) % 3
Spec == Init /\ [][Next]_n /\ WF_n(Next)
H == INSTANCE RefineHigh WITH b <- (n % 2 = 1)
HSpec == H!Spec
Unfair == Init /\ [][Next]_n
Wrong == INSTANCE RefineHigh WITH b <- (n < 2)
WrongSpec == Wrong!Spec
====
