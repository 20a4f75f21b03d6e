---- MODULE OftenAny ----
\* Disjunctions of []<>P and []<><<A>>_v (the form WF_v(A) unfolds to) as PROPERTY.
\* Under Spec x cycles 0 -> 1 -> 2 -> 0 forever.
EXTENDS Naturals
VARIABLES x
A == x < 2 /\ x' = x + 1
B == x = 2 /\ x' = 0
Next == A \/ B
Spec == x = 0 /\ [][Next]_x /\ WF_x(Next)
Unfair == x = 0 /\ [][Next]_x
LiveA == []<>(x = 2) \/ []<><<A>>_x
Either == []<>(x = 5) \/ []<><<B>>_x
OftenTwo == \/ []<>(x = 2)
            \/ []<><<x' = 9>>_x
Neither == []<>(x = 5) \/ []<><<x' = 7>>_x
====
