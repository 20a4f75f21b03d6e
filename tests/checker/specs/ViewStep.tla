---- MODULE ViewStep ----
\* VIEW x: (1, 5) is stored first for the class x = 1, later reached again by the real
\* step (2, 0) -> (1, 0). Steady holds on every real step, not on (2, 0) -> (1, 5);
\* Jump fails on the real first step (0, 0) -> (1, 5).
EXTENDS Naturals
VARIABLES x, y
Init == x = 0 /\ y = 0
Next == \/ x = 0 /\ x' = 1 /\ y' = 5
        \/ x = 0 /\ x' = 2 /\ y' = 0
        \/ x = 2 /\ x' = 1 /\ y' = 0
Steady == [][x = 2 => y' = y]_<<x, y>>
Jump == [][x = 0 => y' = y]_<<x, y>>
====
