---- MODULE SFStutter ----
\* SF_vars(A) with A enabled only when y = 1, WF_vars(Toggle) with Toggle always enabled:
\* y toggles forever, so A is enabled infinitely often and taken, and x ends at 1. Staying
\* at (0, 0) by stuttering meets SF(A) (A disabled there) but not WF(Toggle): the tableau
\* path once took it for fair (an internal error, StopIteration, when it built the lasso).
EXTENDS Naturals
VARIABLES x, y
vars == <<x, y>>
Init == x = 0 /\ y = 0
Toggle == y' = 1 - y /\ x' = x
A == y = 1 /\ x = 0 /\ x' = 1 /\ y' = y
Spec == Init /\ [][Toggle \/ A]_vars /\ SF_vars(A) /\ WF_vars(Toggle)
NotStuck == ~<>[](x = 0)
====
