---- MODULE RecNat ----
\* A recursive function over Nat \X S (evaluated on demand, as TLC does) and membership in
\* a product with an infinite factor.
EXTENDS Naturals
CR[n \in Nat, v \in 1..3] == IF n = 0 THEN v ELSE CR[n - 1, v] + 1
VARIABLE x
Init == x = 0
Next == x < 3 /\ x' = x + 1
Inv == /\ CR[x, 2] = x + 2
       /\ <<x, 2>> \in Nat \X (1..3)
       /\ <<x, 5>> \notin Nat \X (1..3)
Outside == <<x, 2>> \notin Nat \X {2}
ASSUME CR[4, 1] = 5
====
