---- MODULE GuardedFair ----
\* Fairness conjuncts of a SPECIFICATION guarded by a constant condition inside \A:
\* `(i # j) => WF_v(A)` and `IF c THEN WF_v(A) ELSE TRUE`.
EXTENDS Naturals
P == 1..2
VARIABLE done
Init == done = [i \in P |-> FALSE]
Step(i) == ~done[i] /\ done' = [done EXCEPT ![i] = TRUE]
Next == \E i \in P : Step(i)
Spec == Init /\ [][Next]_done /\ \A i, j \in P : (i # j) => WF_done(Step(i))
SpecOne == Init /\ [][Next]_done /\ \A i \in P : IF i = 1 THEN WF_done(Step(i)) ELSE TRUE
AllDone == <>(\A i \in P : done[i])
OneDone == <>done[1]
====
