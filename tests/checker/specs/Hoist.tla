---- MODULE Hoist ----
\* What the evaluator computes once instead of at every use must keep its value and its
\* errors: a subexpression of a quantifier's or set filter's body that does not read the
\* bound variable (evaluated on first use, never when unreached), LET definitions inside
\* constant expressions, CHOOSE e \in S : TRUE, the least element in TLC's order, and
\* membership in a..b and S \cup T decided without building the set.
EXTENDS Naturals, Sequences, FiniteSets
VARIABLE x
Least(S) == CHOOSE e \in S : TRUE
RECURSIVE Sum(_)
Sum(S) == IF S = {} THEN 0 ELSE LET m == Least(S) IN m + Sum(S \ {m})
Below(n) == {k \in 0..n : k < n}
Init == x = 0
Next == x < 3 /\ x' = x + 1
Inv == /\ \A a \in 0..x : \A b \in {a} : Below(a) = 0..(b - 1)
       /\ \A a \in 1..x : {c \in 1..3 : c \in Below(a + x)} = 1..IF a + x > 3 THEN 3 ELSE a + x - 1
       /\ \A i \in 1..x : i > 5 => Head(<<>>) = 1
       /\ \A i \in {} : Cardinality(Nat) = 0
       /\ \E i \in 1..2 : i = 2 /\ Len(SelectSeq(<<x, 1>>, LAMBDA e : e > 0)) = IF x > 0 THEN 2 ELSE 1
       /\ [i \in 1..2 |-> Sum({i, x + 4})] = <<x + 5, x + 6>>
       /\ Least({3, 1, 2} \cup {x + 5}) = 1
       /\ Least({"b", "a"}) = "a"
       /\ Least({<<2, 1>>, <<1, 5>>, <<1, 2, 0>>, <<x + 3>>}) = <<x + 3>>
       /\ Least({<<2, 1>>, <<1, 5>>, <<1, 2, 0>>}) = <<1, 5>>
       /\ Least({<<x, "b">>, <<x, "a">>}) = <<x, "a">>
       /\ Least({<<{1, 2}>>, <<{x + 3}>>}) = <<{x + 3}>>
       /\ Least({{1, 2}, {x + 3}}) = {x + 3}
       /\ Least(BOOLEAN) = FALSE
       /\ Least({<<TRUE, 1>>, <<FALSE, 2>>}) = <<FALSE, 2>>
       /\ Sum({1, 2, x}) = IF x \in {1, 2} THEN 3 ELSE 3 + x
       /\ x \in 0..3 /\ x \notin 4..10 /\ x + 1 \in 1..(x + 1) /\ x \notin (x + 1)..x
       /\ x \in (0..1) \cup {2, 3} /\ x + 7 \notin (0..1) \cup ({2, 3} \cup 5..6)
       /\ [i \in 0..x |-> i] \in [0..x -> 0..x \cup {-1}]
       /\ [i \in 0..x |-> i] \notin [0..x -> {-1} \cup 1..3]
       /\ [i \in 0..x |-> i] \notin [0..(x + 1) -> 0..x \cup {-1}]
       /\ <<x, x>> \in [1..2 -> 0..x] /\ <<x>> \notin [1..2 -> 0..x] /\ <<>> \in [{} -> 0..x]
ASSUME \A n \in 1..3 : LET s == {k \in 1..n : k > 1}
                       IN  /\ Cardinality(s) = n - 1
                           /\ \A k \in s : s \subseteq 2..n /\ k \in s
ASSUME \A N \in 0..2 : \A R \in SUBSET (1..N) :
         LET S == R \cup {0}
         IN  {<<s, t>> \in S \X S : \E p \in {<<u, v>> : u, v \in S} : p = <<s, t>>} = S \X S
====
