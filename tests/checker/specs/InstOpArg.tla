---- MODULE InstOpArg ----
\* Operator arguments passed to an instance's operators, on through another of them, and
\* a reference into the instance (L!Pos) as the argument: properties as TLC takes them.
EXTENDS Naturals
VARIABLE s
L == INSTANCE InstOpArgLib
Init == s = 0
Next == s' = (s + 1) % 4
Spec == Init /\ [][Next]_s
Small(n) == n < 4
NotThree(n) == n # 3
Prop == L!Always(Small, s)
Twice == L!Twice(Small, s)
Inner == L!Twice(L!Pos, s)
Fails == L!Always(NotThree, s)
====
---- MODULE InstOpArgLib ----
EXTENDS Naturals
Always(P(_), x) == [](P(x))
Twice(P(_), x) == Always(P, x)
Pos(n) == n >= 0
====
