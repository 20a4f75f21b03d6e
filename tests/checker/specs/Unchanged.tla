---- MODULE Unchanged ----
\* UNCHANGED of an expression: e' = e.
EXTENDS Naturals
VARIABLES a, b
Init == a = 0 /\ b = 2
Next == a < 2 /\ a' = a + 1 /\ b' \in 0..3 /\ UNCHANGED (a + b)
Keeps == [][UNCHANGED <<a + b, 2 * (a + b)>>]_<<a, b>>
Moves == [][UNCHANGED b]_<<a, b>>
====
