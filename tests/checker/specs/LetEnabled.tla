---- MODULE LetEnabled ----
\* ENABLED inside the body of a LET, in an action and in an invariant, where the LET's
\* definition is a record of a state variable read only through cheap field lookups (so the
\* definition gets no memo), as in tlaplus/Examples' MultiCarElevator: each door opens, its
\* counter climbs to 2, and it closes (resetting the counter) once Step is not enabled.
EXTENDS Naturals
VARIABLE r
Ids == {1, 2}
Open(e) == LET st == r[e] IN ~st.open /\ r' = [r EXCEPT ![e].open = TRUE]
Step(e) == LET st == r[e] IN st.open /\ st.n < 2 /\ r' = [r EXCEPT ![e].n = st.n + 1]
Close(e) == LET st == r[e] IN
            /\ ~ENABLED Step(e)
            /\ st.open
            /\ r' = [r EXCEPT ![e] = [open |-> FALSE, n |-> 0]]
Init == r = [e \in Ids |-> [open |-> FALSE, n |-> 0]]
Next == \E e \in Ids : Open(e) \/ Step(e) \/ Close(e)
Inv == \A e \in Ids : LET st == r[e] IN (ENABLED Close(e)) = (st.open /\ st.n = 2)
====
