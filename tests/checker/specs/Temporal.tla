---- MODULE Temporal ----
\* Temporal forms: c => <>P, c => []P, IF c THEN <>P ELSE <>Q, [](P => []P), [](P => <>[]Q).
EXTENDS Naturals
CONSTANT Start
VARIABLE n
Init == n \in Start
Next == n < 3 /\ n' = n + 1
Spec == Init /\ [][Next]_n /\ WF_n(Next)
Unfair == Init /\ [][Next]_n
Reaches == (n = 0) => <>(n = 3)
Stays == (n = 2) => [](n >= 2)
Branch == IF n = 0 THEN <>(n = 2) ELSE <>(n = 3)
Monotone == [](n >= 1 => [](n >= 1))
Settles == [](n = 1 => <>[](n = 3))
NeverBack == (n = 1) => [](n # 0)
Guarded == [](n # 3) => <>(n = 3)
WrongGuarded == [](n < 3) => <>(n = 3)
WrongStays == (n = 0) => [](n < 3)
WrongBranch == IF n = 1 THEN <>(n = 0) ELSE <>(n = 3)
WrongMonotone == [](n >= 1 => [](n <= 1))
====
