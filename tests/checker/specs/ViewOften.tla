---- MODULE ViewOften ----
\* VIEW x: the classes x = 0 and x = 1 are stored as (0, 0) and (1, 1); the real step from
\* (1, 1) goes to (0, 2), the stored edge to (0, 0). Every real step from x = 1 is an
\* Up step, so OftenUp holds (it does not on the stored edge (1, 1) -> (0, 0)).
EXTENDS Naturals
VARIABLES x, y
vars == <<x, y>>
Next == x' = 1 - x /\ y' = y + 1
Spec == x = 0 /\ y = 0 /\ [][Next]_vars /\ WF_vars(Next)
OftenUp == []<><<x = 1 /\ y' = y + 1>>_y
OftenUpOrZero == []<>(x = 5) \/ []<><<x = 1 /\ y' = y + 1>>_y
====
