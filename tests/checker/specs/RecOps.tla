---- MODULE RecOps ----
\* A RECURSIVE operator with an operator parameter, called with a definition and a LAMBDA.
EXTENDS Naturals, Sequences
VARIABLE s
RECURSIVE Fold(_, _, _)
Fold(Op(_, _), acc, seq) == IF seq = <<>> THEN acc ELSE Fold(Op, Op(acc, Head(seq)), Tail(seq))
Add(a, b) == a + b
Init == s = <<1, 2, 3>>
Next == Len(s) > 0 /\ s' = Tail(s)
Inv == /\ Fold(Add, 0, s) = IF s = <<>> THEN 0 ELSE 6 - Fold(Add, 0, SubSeq(<<1, 2, 3>>, 1, 3 - Len(s)))
       /\ Fold(LAMBDA a, b : a * 10 + b, 0, s) \in {123, 23, 3, 0}
====
