---- MODULE InstNested ----
\* An unnamed INSTANCE imports every definition of the instanced module, the named
\* instances among them: W (W == INSTANCE InstLeaf in InstMid) is usable here as W!Ok.
EXTENDS Naturals
VARIABLE k
INSTANCE InstMid WITH N <- 4
Inv == W!Ok /\ k <= 4
Low == W!Ok /\ k < 3
====
