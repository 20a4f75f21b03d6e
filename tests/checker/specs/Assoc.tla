---- MODULE Assoc ----
\* Chains of an associative infix operator need no parentheses; the Bags operators
\* SubBag and BagOfAll (whose first argument is an operator).
EXTENDS Naturals, Sequences, Bags
VARIABLE x
B1 == (1 :> 2) (+) (2 :> 1) (+) (1 :> 1)
ASSUME B1 = (1 :> 3) @@ (2 :> 1)
ASSUME (1 :> 3) (-) (1 :> 1) (-) (1 :> 1) = (1 :> 1)
ASSUME <<1>> \o <<2>> \o <<3>> = <<1, 2, 3>>
ASSUME 2 * 3 * 4 = 24 /\ 9 - 3 - 2 = 4
ASSUME SubBag(1 :> 2) = {EmptyBag, 1 :> 1, 1 :> 2}
ASSUME (1 :> 1) \in SubBag(B1) /\ (2 :> 2) \notin SubBag(B1)
ASSUME BagOfAll(LAMBDA e : e % 2, B1) = (1 :> 3) @@ (0 :> 1)
ASSUME BagOfAll(LAMBDA e : 0, EmptyBag) = EmptyBag
Init == x = EmptyBag
Next == /\ BagCardinality(x) < 3
        /\ x' = x (+) SetToBag({BagCardinality(x) % 2}) (+) EmptyBag
====
