---- MODULE ThmName ----
\* A named THEOREM or LEMMA defines its name as its formula (TLC evaluates it where it is
\* used); an unnamed theorem and a named ASSUME ... PROVE define nothing.
EXTENDS Naturals
CONSTANT M
NatO == 0 .. M
THEOREM Doubled == \A n \in Nat : (n + n) % 2 = 0
  BY DEF NatO
LEMMA Small == M < 10
THEOREM \A n \in Nat : n >= 0
PROPOSITION Square == ASSUME NEW y \in Nat PROVE y * y >= 0
ASSUME Doubled /\ Small
VARIABLE x
Init == x = 0
Next == x < M /\ x' = x + 1
Inv == Doubled /\ x <= M
====
