---- MODULE InstSeqLib ----
\* Helper of InstSeq: words over Base through Seq, which InstSeq's cfg replaces.
EXTENDS Naturals, Sequences
CONSTANT Base
Words == {w \in Seq(Base) : Len(w) <= 2}
====
