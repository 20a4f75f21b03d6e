---- MODULE Embedded ----
\* A configuration inside the module file, read when -config names the .tla (as TLC
\* does): only the section named like the file counts. Without a spec formula (the
\* section Other is not read) there would be no initial state.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 3
Spec == [][Next]_x
Small == x < 2
====
---- CONFIG Other ----
INVARIANT Small
====
---- CONFIG Embedded ----
INIT Init
NEXT Next
====
