---- MODULE EnabledPrimed ----
\* The variable of an assignment found through an instance's definition (I!F, with
\* F == x' and x <- a) and through a LET, in Next and inside ENABLED, as TLC finds it.
EXTENDS Naturals
VARIABLE a
I == INSTANCE EnabledPrimedInner WITH x <- a
Init == a = 0
Next == a < 2 /\ I!F \in {a + 1}
Inv == ENABLED ((LET y == a' IN y) = 5) /\ ENABLED (I!F \in {7})
====
---- MODULE EnabledPrimedInner ----
VARIABLE x
F == x'
====
