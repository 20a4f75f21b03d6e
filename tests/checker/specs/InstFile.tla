---- MODULE InstFile ----
\* Several modules in one file. InstFileLib, written after this module, is extended
\* (SANY reads the modules that follow the first one). Pair is nested in this module: it
\* sees what this module has defined before it (Top, from InstFileLib) and is instantiated
\* with a parameter, P(e)!Op substituting e for Pair's variable y.
EXTENDS Naturals, InstFileLib
VARIABLE x

---- MODULE Pair ----
VARIABLE y
Ok == y \in 0 .. Top
Ahead(d) == y + d
====

P(y) == INSTANCE Pair
Q(a) == INSTANCE Pair WITH y <- a + 1
Init == x = 0
Next == x' = Bump(x)
Inv == P(x)!Ok /\ P(x + 1)!Ahead(1) = x + 2 /\ Q(x)!Ahead(0) = x + 1
Low == P(x)!Ahead(10) < 12
====

---- MODULE InstFileLib ----
EXTENDS Naturals
Top == 3
Bump(n) == (n + 1) % (Top + 1)
====
