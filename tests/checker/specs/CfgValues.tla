---- MODULE CfgValues ----
\* Tuples and records as cfg values, `c = [M]v` scoped values, a tuple pattern in a recursive
\* function, the Json and Randomization modules.
EXTENDS Naturals, Sequences, TLC, Json, Randomization
CONSTANTS Pair, Rec, Start
VARIABLE v
Inner == INSTANCE CfgInner
Init == v = Start
Next == v < 2 /\ v' = v + 1
Sum[<<i, j>> \in (0..2) \X (0..2)] == IF i = 0 THEN j ELSE Sum[<<i - 1, j>>] + 1
Inv == /\ Pair = <<1, "a">>
       /\ Rec.a = 1 /\ Rec.b = {2}
       /\ Sum[<<2, 1>>] = 3
       /\ RandomElement({7}) = 7
       /\ RandomSubset(1, {3}) = {3}
       /\ ToJson(<<1, [a |-> TRUE]>>) = "[1,{\"a\":true}]"
       /\ Inner!Mark = 5
====
