---- MODULE FilterMember ----
\* Membership in a set filter {y \in S : P} is decided as y \in S /\ P, never by building
\* the filter: SUBSET SUBSET (1..5) has 2^32 elements. Also through a definition with
\* arguments, and of a constant filter that is folded at load.
EXTENDS Naturals, FiniteSets
CONSTANT N, Limit
VARIABLE U
Init == U = {1..N}
Split == \E I \in U : \E A \in SUBSET I :
            /\ A # {} /\ A # I
            /\ U' = (U \ {I}) \cup {A, I \ A}
Partitions(k) == {DP \in SUBSET SUBSET (1..k) :
                    /\ UNION DP = 1..k
                    /\ {} \notin DP
                    /\ \A I, J \in DP : I # J => I \cap J = {}}
Few == {DP \in Partitions(N) : Cardinality(DP) <= Limit}
Pairs == {f \in [1..2 -> 1..N] : f[1] < f[2]}
TypeOK == /\ U \in Partitions(N)
          /\ <<1, 2>> \in Pairs /\ <<2, 1>> \notin Pairs
Bounded == U \in Few
====
