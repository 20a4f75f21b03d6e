---- MODULE ConstMemo ----
\* A record built from locals bound to elements of constant sets is remembered per
\* site by the identities of their values (memo.const_memo): each of the 18 records
\* [x |-> Vals, b |-> BOOLEAN] must stay itself, whichever was built before. (Vals has
\* more than 8 elements, so the quantifier is a loop, not unrolled into constants.)
EXTENDS Naturals
VARIABLE seen
Vals == {1, 2, 3, 4, 5, 6, 7, 8, 9}
Init == seen = {}
Next == \E x \in Vals, b \in BOOLEAN :
          /\ [x |-> x, b |-> b] \notin seen
          /\ seen' = {[x |-> x, b |-> b]}
Inv == \A r \in seen : r.x \in Vals /\ r.b \in BOOLEAN
====
