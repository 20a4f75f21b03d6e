---- MODULE InstSpec ----
\* The behaviour spec taken from a parameterised instance: SPECIFICATION Spec with
\* Spec == C(3)!Spec, a counter modulo 3 with fairness.
EXTENDS Naturals
VARIABLE v
C(n) == INSTANCE InstSpecCounter
Spec == C(3)!Spec
Small == v < 3
Cycles == C(3)!Cycles
====
---- MODULE InstSpecCounter ----
EXTENDS Naturals
CONSTANT n
VARIABLE v
Init == v = 0
Next == v' = (v + 1) % n
Spec == Init /\ [][Next]_v /\ WF_v(Next)
Cycles == []<>(v = 0)
====
