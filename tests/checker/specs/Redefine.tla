---- MODULE Redefine ----
\* A configuration override whose definition names what it overrides means the original
\* there, as in TLC: with Next <- SlowNext and Inc <- Twice, SlowNext's Next is the
\* spec's Next (whose Inc is Twice) and Twice's Inc is the spec's Inc: x goes 0, 2, 4.
EXTENDS Naturals
VARIABLE x
Inc(n) == n + 1
Init == x = 0
Next == x' = Inc(x)
SlowNext == Next /\ x < 3
Twice(n) == Inc(Inc(n))
Even == x % 2 = 0 /\ x <= 4
====
