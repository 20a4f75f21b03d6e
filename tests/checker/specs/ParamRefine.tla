---- MODULE ParamRefine ----
\* A refinement property through a parameterised instance under \A: each slot of log
\* refines a register that goes once from 0 to 1, and whose spec has fairness (under a
\* quantifier, as a spec may write it).
EXTENDS Naturals
CONSTANT Slots
VARIABLE log
Init == log = [s \in Slots |-> 0]
Next == \E s \in Slots : log[s] = 0 /\ log' = [log EXCEPT ![s] = 1]
Spec == Init /\ [][Next]_log /\ WF_log(Next)
Unfair == Init /\ [][Next]_log
Slot(s) == INSTANCE Register WITH r <- log[s]
Refines == \A s \in Slots : Slot(s)!Spec
====
---- MODULE Register ----
VARIABLE r
RInit == r = 0
RNext == r = 0 /\ r' = 1
Spec == RInit /\ [][RNext]_r /\ \A k \in {1, 2} : WF_r(RNext)
====
