---- MODULE MiscDouble ----
EXTENDS Naturals
CONSTANT y
InNat == y \in Nat
Double == y + y
====
