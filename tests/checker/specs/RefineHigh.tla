---- MODULE RefineHigh ----
VARIABLE b
Init == b = FALSE
Next == b' = ~b
Spec == Init /\ [][Next]_b /\ WF_b(Next)
====
