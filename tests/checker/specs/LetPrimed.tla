---- MODULE LetPrimed ----
\* A primed variable passed to an operator and renamed there by a LET (or by a
\* definition without parameters) is still assigned by `\in` and `=`, as in TLC.
EXTENDS Naturals
VARIABLES x, y
Step(new, old) == LET n == new IN n \in {old + 1, old + 2}
Copy(v) == LET w == v IN w = x'
Init == x = 0 /\ y = 0
Next == x < 4 /\ Step(x', x) /\ Copy(y')
====
