---- MODULE InstLeaf ----
\* Helper of InstNested: a counter that wraps after Lim.
EXTENDS Naturals
CONSTANT Lim
VARIABLE v
Ok == v \in 0 .. Lim
Up == v' = IF v < Lim THEN v + 1 ELSE 0
====
