---- MODULE PrimedArg ----
\* A primed variable passed to an operator is assigned inside it.
EXTENDS Naturals
VARIABLE x
Set(old, new) == new = old + 1
Pick(v, S) == v \in S
Init == x = 0
Next == \/ x < 2 /\ Set(x, x')
        \/ x = 2 /\ Pick(x', {3, 4})
====
