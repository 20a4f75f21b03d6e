---- MODULE MCRefine ----
\* The refinement of Refine checked from a module that extends it.
EXTENDS Refine
====
