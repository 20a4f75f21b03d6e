---- MODULE SettleStep ----
\* <>[][A]_v: from some point on, every step is an A step or leaves v unchanged.
EXTENDS Naturals
VARIABLE x
Up == x < 3 /\ x' = x + 1
Reset == x = 3 /\ x' = 0
Climb == x = 0 /\ [][Up]_x /\ WF_x(Up)
Cycle == x = 0 /\ [][Up \/ Reset]_x /\ WF_x(Up \/ Reset)
OnlyUp == <>[][Up]_x
Still == <>[][FALSE]_x
====
