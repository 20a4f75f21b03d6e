---- MODULE LeadsLazily ----
\* P ~> Q evaluates Q only where P holds or the search goes on from there, as TLC does:
\* x = "abc" would compare a number with a string, but x \notin Nat never holds.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 2 /\ x' = x + 1
Spec == Init /\ [][Next]_x /\ WF_x(Next)
Never == x \notin Nat ~> x = "abc"
Reach == x = 1 ~> x = 2
====
