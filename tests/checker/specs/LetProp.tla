---- MODULE LetProp ----
\* A temporal property written under LET (LET d IN []P, [](LET d IN P => <>Q)): the
\* definitions are abbreviations, so the property is its body with them defined.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 4
Spec == Init /\ [][Next]_x /\ WF_x(Next)
Bound == LET top == 3 IN [](x <= top)
Often == LET Hit(v) == x = v IN []<>Hit(2) /\ [](LET m == x + 1 IN m > 1 => <>(x = 0))
Never == LET goal == 5 IN <>(x = goal)
====
