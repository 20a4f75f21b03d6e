---- MODULE TlapsProof ----
\* A spec with a TLAPS proof: EXTENDS TLAPS (its names are cited only in proofs).
EXTENDS Naturals, TLAPS
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 3
Spec == Init /\ [][Next]_x
TypeOK == x \in 0..2
THEOREM TypeCorrect == Spec => []TypeOK
<1>1. Init => TypeOK
  BY DEF Init, TypeOK
<1>2. TypeOK /\ [Next]_x => TypeOK'
  BY SMT DEF TypeOK, Next
<1>. QED
  BY <1>1, <1>2, PTL DEF Spec
====
