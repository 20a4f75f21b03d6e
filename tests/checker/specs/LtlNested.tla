---- MODULE LtlNested ----
\* Temporal properties beyond the forms liveness.py checks directly, checked through
\* their negation's tableau (ltl.py): x cycles 0, 1, 2 under WF_x(Next).
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == \/ x < 2 /\ x' = x + 1
        \/ x = 2 /\ x' = 0
Spec == Init /\ [][Next]_x /\ WF_x(Next)
Unfair == Init /\ [][Next]_x
Again == [](x = 2 => <>(x = 0 /\ <>(x = 1)))
NotStuck == ~<>[](x # 0)
Settles == <>(x = 1 /\ [](x # 0))
FairVisits == WF_x(Next) => []<>(x = 2)
FairSettles == WF_x(Next) => <>[](x = 2)
NoThree == ~[]<>(x = 3)
StartsAndCycles == ~(x = 0 /\ <>[](x # 2))
====
