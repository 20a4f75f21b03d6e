---- MODULE SpecThrough ----
\* The spec formula written through operators with parameters and a LET, as TLC takes
\* it: the fairness reaches the checker only through Id and the LET.
EXTENDS Naturals
VARIABLE x
vars == x
Init == x = 0
Next == x < 2 /\ x' = x + 1
Box(A) == [][A]_vars
Id(F) == F
Spec == Id(Init) /\ Box(Next) /\ LET Fair == WF_vars(Next) IN Id(Fair)
Done == <>(x = 2)
====
