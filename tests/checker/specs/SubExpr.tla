---- MODULE SubExpr ----
\* Positional subexpression references: Inv!2 is the second conjunct of Inv, Th!: the
\* formula of theorem Th, Step(1)!2 the second conjunct of Step's body with d = 1,
\* Guard!<< and Guard!>> the sides of an infix operator, Inv!3!1 the condition of an IF,
\* Diff!(1, 2) the body of Diff's quantifier with p = 1 and q = 2.
\* The symmetry set holds one model value only: there is nothing to rename.
EXTENDS Naturals, TLC
CONSTANT a
VARIABLES x, y
Inv == /\ x \in 0..4
       /\ y \in {a}
       /\ IF x > 2 THEN x < 5 ELSE TRUE
THEOREM Th == \A n \in 0..3 : n + 0 = n
ASSUME Th!:
Step(d) == /\ x < 4
           /\ x' = x + d
Guard == x # 7 => x < 9
Init == x = 0 /\ y = a
Next == Step(1)!1 /\ Step(1)!2 /\ UNCHANGED y
Parts == Inv!1 /\ Inv!2 /\ (Inv!3!1 => x > 2) /\ (Guard!<< => Guard!>>)
Low == ~Inv!3!1
Diff == \E p \in 0..9, q \in 0..9 : p - q + x < 3
Inst == Diff!(1, 2)
Sym == Permutations({a})
====
