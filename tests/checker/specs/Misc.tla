---- MODULE Misc ----
\* Labels, PrintT in the spec formula, named ASSUMEs, a LET-bound INSTANCE, a LET RECURSIVE
\* operator that uses a bound variable of its context, overrides of Nat and Seq from the cfg,
\* UNION a \cup b read as (UNION a) \cup b.
EXTENDS Naturals, Sequences, TLC
CONSTANT Limit, Bump(_)
VARIABLE x
ASSUME Positive == Limit > 0
ASSUME \A n \in 1..3 : LET RECURSIVE Sum(_)
                           Sum(k) == IF k = 0 THEN 0 ELSE n + Sum(k - 1)
                       IN Sum(n) = n * n
SmallNat == 0..Limit
ShortSeq(S) == UNION {[1..k -> S] : k \in 0..1}
Init == x = 0
Next == x < Limit /\ x' = Bump(x)
Spec == Init /\ [][Next]_x
TestSpec == PrintT("starting") /\ Spec
Inv == \/ P0:: x \in Nat
       \/ P1:: FALSE
Twice(v) == LET Dbl == INSTANCE MiscDouble WITH y <- v IN Dbl!Double
Typed == /\ Positive
         /\ Twice(x) = 2 * x
         /\ <<x>> \in Seq(Nat)
         /\ UNION {{x}} \cup {Limit} = {x, Limit}
Overridden == <<1, 2>> \notin Seq(Nat) /\ 4 \notin Nat
There(v) == LET D == INSTANCE MiscDouble WITH y <- v IN D!InNat
Scoped == There(4) = FALSE /\ There(2) /\ 4 \in Nat
AddOne(v) == v + 1
====
