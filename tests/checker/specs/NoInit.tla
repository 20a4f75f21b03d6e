---- MODULE NoInit ----
\* A specification without an initial predicate has no initial state (TLC: 0 states).
VARIABLE x
Spec == [][x' = x]_x
====
