---- MODULE InstSeq ----
\* The cfg's Seq <- Upto2 also holds inside a parameterised instance, whose scope is built
\* where it is used: W(B)!Words is the finite set of words of length 0, 1 or 2 over B.
EXTENDS Naturals, Sequences, FiniteSets
Upto2(S) == UNION {[1 .. n -> S] : n \in 0 .. 2}
W(Base) == INSTANCE InstSeqLib
VARIABLE x
Init == x = 0
Next == x < Cardinality(W({7, 8})!Words) /\ x' = x + 1
Inv == W({1})!Words = {<<>>, <<1>>, <<1, 1>>}
====
