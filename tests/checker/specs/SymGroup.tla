---- MODULE SymGroup ----
\* SYMMETRY Permutations(A) \cup Permutations(B) means the group the two generate (TLC
\* closes the set under composition). f grows to any subset of A \X B (a 2x2 grid): 16
\* states, 7 up to swapping rows and swapping columns. Under a VIEW (or a SYMMETRY) an
\* action property is tested on the real steps, not on the class member first found.
EXTENDS TLC, FiniteSets
CONSTANTS a1, a2, b1, b2
A == {a1, a2}
B == {b1, b2}
VARIABLES f
Init == f = {}
Next == \E p \in A \X B : p \notin f /\ f' = f \cup {p}
Sym == Permutations(A) \cup Permutations(B)
Grows == [][Cardinality(f') = Cardinality(f) + 1]_f
====
