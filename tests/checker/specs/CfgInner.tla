---- MODULE CfgInner ----
Mark == CHOOSE x : x \notin {}
====
