---- MODULE OpSymbols ----
\* A standard module's operator symbol passed as an operator argument: `+` to a recursive
\* fold, `-`, `-.`, `\cup`, `\leq` to plain operators, `<` to SortSeq.
EXTENDS Integers, Sequences, TLC
RECURSIVE FoldSet(_, _, _)
FoldSet(Op(_, _), base, S) ==
    IF S = {} THEN base
    ELSE LET e == CHOOSE e \in S : TRUE IN Op(e, FoldSet(Op, base, S \ {e}))
Ap2(Op(_, _), a, b) == Op(a, b)
Ap1(Op(_), a) == Op(a)
VARIABLE x
Init == x = FoldSet(+, 0, {1, 2, 3})
Next == /\ x > 0
        /\ x' = Ap2(-, x, 2)
Inv == /\ Ap1(-., x) = 0 - x
       /\ Ap2(\cup, {x}, {1}) = {x, 1}
       /\ FoldSet( *, 1, {1, 2, 3}) = 6
       /\ SortSeq(<<3, 1, 2>>, <) = <<1, 2, 3>>
       /\ Ap2(\leq, x, 6)
====
