---- MODULE InstMid ----
\* Helper of InstNested: it names an instance of InstLeaf, W.
EXTENDS Naturals
CONSTANT N
VARIABLE k
W == INSTANCE InstLeaf WITH Lim <- N, v <- k
Init == k = 0
Next == W!Up
====
