---- MODULE PropParam ----
\* Temporal properties written through operators with parameters, as TLC takes them:
\* Always(A) == [][A]_x applied to an action, Both and Id wrapping temporal formulas.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 2 /\ x' = x + 1
Spec == Init /\ [][Next]_x /\ WF_x(Next)
Always(A) == [][A]_x
Both(P, Q) == P /\ Q
Id(F) == F
Grows == Always(x' > x)
Reaches == Both(<>(x = 2), Id([](x <= 2)))
Stuck == Always(x' = x)
====
