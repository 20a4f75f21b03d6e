---- MODULE InfSets ----
\* Membership in infinite sets is decided without enumerating them.
EXTENDS Integers, Sequences
CONSTANT W
VARIABLES f, q, r
Init == f = [w \in W |-> 0] /\ q = <<>> /\ r = [a |-> -1, b |-> <<>>]
Next == /\ f' = [f EXCEPT ![CHOOSE w \in W : TRUE] = @ - 1]
        /\ q' = IF Len(q) < 2 THEN Append(q, Len(q)) ELSE q
        /\ UNCHANGED r
TypeOK == /\ f \in [W -> Int]
          /\ q \in Seq(Nat)
          /\ r \in [a : Int, b : Seq(STRING)]
          /\ (f \in [W -> Nat]) = (\A w \in W : f[w] >= 0)
          /\ f \notin [W -> Nat \ {0}]
          /\ q \in UNION {[1..n -> Nat] : n \in 0..2}
Bound == f[CHOOSE w \in W : TRUE] > -3
====
