---- MODULE Overloaded ----
\* The configuration's value for the constant K is the root module's: the instanced
\* module's own definition named K (K == C, with C <- 42) keeps its meaning.
EXTENDS Naturals
CONSTANT K
VARIABLE x
A == INSTANCE OverloadedInner WITH C <- 42, y <- x
Init == x = 0
Next == x < 2 /\ x' = x + 1
Inv == K = 7 /\ A!K = 42
Refines == A!Spec
====
---- MODULE OverloadedInner ----
EXTENDS Naturals
CONSTANT C
VARIABLE y
K == C
Spec == y = 0 /\ [][y' = y + 1 /\ K = 42]_y
====
