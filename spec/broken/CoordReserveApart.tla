------------------------------- MODULE CoordReserveApart -------------------------------
(***************************************************************************)
(* Several units of work on one journal (DESIGN.md section 8), as          *)
(* kernel/machine.py runs coordinated units: claims with fencing tokens, a *)
(* target that rejects stale tokens, a shared budget, plan versions and    *)
(* verified completion.  Kernel.tla checks one effect's machinery at every *)
(* tier; this module keeps that machinery at tier 2 (the target can be     *)
(* looked up, lag 0) and adds what several units share.                    *)
(*                                                                         *)
(* Theory of operation.  Every unit starts PROPOSED.  Admission (the       *)
(* kernel's Authorize of a unit) reads the whole journal and decides in    *)
(* one fsync'd entry: it waits while another unit's live claim covers its  *)
(* write set; otherwise it refuses on a superseded plan, on a read overlap *)
(* whose writer was already sent, or over the cap; else it claims the      *)
(* write set with token = the entry's place in the journal order (`seq`),  *)
(* records the units whose live claims cover its reads, and reserves its   *)
(* cost (1).  A claim lives until `until` (journal time) or the unit's     *)
(* final entry.  Dispatch and recovery re-check claim, plan and overlaps   *)
(* like a lease.  Every request carries the token; the target applies it  *)
(* only if no higher token was seen for its items.  With Verify, an ack   *)
(* journals LANDED and only a passing verification (good[u]) commits; a   *)
(* failing one refuses the unit (the change is restored; its cost stays    *)
(* reserved, as for anything that may have been applied).  A REFUSED unit *)
(* never applied releases its reservation.                                 *)
(*                                                                         *)
(* Every entry of a coordinated unit is fsync'd, so a crash loses only a  *)
(* worker's memory (its lookup answers).  Storm until MaxTime (crashes,    *)
(* lost messages, the plan superseded), then calm, as in Kernel.tla.      *)
(* Lines marked DECISION are removed by spec/broken/make.py.               *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS
  Units,           \* units of work, e.g. {1, 2}
  Workers,
  Shared,          \* both units write item 1 (else unit u writes item u)
  Reads,           \* unit 2 also reads item 1 (when not Shared)
  Cap,             \* the shared budget; every unit costs 1
  Verify,          \* the target requires a passing verification
  TTL, SendTimeout, SettleMargin,
  MaxTime, MaxCrashes, MaxLoss,
  Supersedable     \* the plan may be superseded during the storm

ASSUME /\ TTL > 0 /\ SendTimeout > 0 /\ SettleMargin > 0 /\ Cap \in Nat
       /\ {Shared, Reads, Verify, Supersedable} \subseteq BOOLEAN

VARIABLES
  now,
  rec,       \* the journal folded per unit
  seq,       \* the journal order: the next admission's token
  up, ans,   \* workers, and the lookup answers they hold (volatile)
  net, acks,
  tgt,       \* target: applications per unit
  hi,        \* target: highest token seen per item
  plan,      \* the plan's current version (every unit was made under 1)
  good,      \* the change passes its verification (chosen by the world)
  crashes, losses,
  stale,     \* history: a write landed with a token lower than one seen
  fenced     \* history: the target rejected a stale token

vars == <<now, rec, seq, up, ans, net, acks, tgt, hi, plan, good, crashes, losses,
          stale, fenced>>

-----------------------------------------------------------------------------
Write(u) == IF Shared THEN {1} ELSE {u}
ReadSet(u) == IF Reads /\ ~Shared /\ u = 2 THEN {1} ELSE {}
Items == UNION {Write(u) : u \in Units}

Final == {"COMMITTED", "REFUSED", "AMBIGUOUS"}
Holding == {"AUTHORIZED", "DISPATCHED", "LANDED"}
NoRec == [st |-> "PROPOSED", tok |-> -1, until |-> 0, att |-> 0, claim |-> 0,
          ex |-> "false", ver |-> "none", ovl |-> {}, res |-> FALSE, why |-> "none"]
NoAns == [found |-> FALSE, asked |-> -1]
Storm == now < MaxTime

LiveClaim(v) == rec[v].st \in Holding /\ now < rec[v].until
Claimed(u) == \E v \in Units \ {u} : LiveClaim(v) /\ Write(v) \cap Write(u) # {}
Overlaps(u) == {v \in Units \ {u} : LiveClaim(v) /\ Write(v) \cap ReadSet(u) # {}}
Moved(v) == rec[v].att > 0 /\ rec[v].ex # "false"
Reserved == Cardinality({u \in Units : rec[u].res})
Spent == Cardinality({u \in Units : tgt[u] > 0})

PlanOK == plan = 1                                          \* DECISION plan
ClaimOK(u) == now < rec[u].until
ReadsOK(u) == \A v \in rec[u].ovl : ~Moved(v)
BudgetOK == Reserved + 1 <= Cap
ReserveNow == FALSE                    \* BROKEN: reserved by a later append
Fresh(m) == \A i \in Write(m.id) : hi[i] <= m.tok           \* DECISION fencing
AckCommits == ~Verify                                       \* DECISION verify
\* What a check at this instant would say, whatever the kernel checked.
Why(u) == IF ~(plan = 1) THEN "plan" ELSE IF ~ClaimOK(u) THEN "claim" ELSE "reads"

Refuse(u, ex, why) ==
  rec' = [rec EXCEPT ![u].st = "REFUSED", ![u].ex = ex, ![u].why = why,
                     ![u].res = (@ /\ ex # "false")]

Send(u, att) ==
  /\ rec' = [rec EXCEPT ![u].st = "DISPATCHED", ![u].att = att, ![u].ex = "unknown",
                        ![u].claim = now + SendTimeout + SettleMargin]
  /\ net' = net \cup {[id |-> u, att |-> att, dl |-> now + SendTimeout, tok |-> rec[u].tok,
                       auth |-> ClaimOK(u), plan |-> plan = 1, reads |-> ReadsOK(u)]}

Landed(u) == IF AckCommits THEN [rec EXCEPT ![u].st = "COMMITTED", ![u].ex = "true"]
             ELSE [rec EXCEPT ![u].st = "LANDED", ![u].ex = "true"]

-----------------------------------------------------------------------------
(* Kernel events of coordinated units.                                     *)

\* Admission: enabled only when no live claim of another unit covers the write set.
Admit(w, u) ==
  /\ up[w] /\ rec[u].st = "PROPOSED" /\ ~Claimed(u)
  /\ CASE ~PlanOK -> Refuse(u, "false", "plan") /\ UNCHANGED seq
       [] \E v \in Overlaps(u) : Moved(v) -> Refuse(u, "false", "reads") /\ UNCHANGED seq
       [] ~BudgetOK -> Refuse(u, "false", "budget") /\ UNCHANGED seq
       [] OTHER -> /\ rec' = [rec EXCEPT ![u].st = "AUTHORIZED", ![u].tok = seq,
                                         ![u].until = now + TTL, ![u].ovl = Overlaps(u),
                                         ![u].res = ReserveNow]
                   /\ seq' = seq + 1
  /\ UNCHANGED <<now, up, ans, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

Dispatch(w, u) ==
  /\ up[w] /\ rec[u].st = "AUTHORIZED"
  /\ IF PlanOK /\ ClaimOK(u) /\ ReadsOK(u)
       THEN Send(u, 1)
       ELSE Refuse(u, "false", Why(u)) /\ UNCHANGED net
  /\ UNCHANGED <<now, seq, up, ans, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

Ack(w, m) ==
  /\ up[w] /\ m \in acks
  /\ acks' = acks \ {m}
  /\ IF rec[m.id].st = "DISPATCHED" THEN rec' = Landed(m.id) ELSE UNCHANGED rec
  /\ UNCHANGED <<now, seq, up, ans, net, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

\* Recover a sent unit once its send's claim expired, with a fresh lookup answer.
Recover(w, u) ==
  LET a == ans[w][u] IN
  /\ up[w] /\ rec[u].st = "DISPATCHED" /\ now >= rec[u].claim
  /\ a.asked >= rec[u].claim
  /\ ans' = [ans EXCEPT ![w][u] = NoAns]
  /\ CASE a.found -> rec' = Landed(u) /\ UNCHANGED net
       [] ~(PlanOK /\ ClaimOK(u) /\ ReadsOK(u)) -> Refuse(u, "false", Why(u)) /\ UNCHANGED net
       [] OTHER -> Send(u, rec[u].att + 1)
  /\ UNCHANGED <<now, seq, up, acks, tgt, hi, plan, good, crashes, losses, stale, fenced>>

Lookup(w, u) ==
  /\ up[w] /\ rec[u].st = "DISPATCHED" /\ now >= rec[u].claim
  /\ ~(ans[w][u].asked >= rec[u].claim)
  /\ ans' = [ans EXCEPT ![w][u] = [found |-> tgt[u] > 0, asked |-> now]]
  /\ UNCHANGED <<now, rec, seq, up, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

\* The control plane runs the verification on the landed change.
Verification(w, u) ==
  /\ up[w] /\ rec[u].st = "LANDED"
  /\ IF good[u] THEN rec' = [rec EXCEPT ![u].st = "COMMITTED", ![u].ver = "passed"]
     ELSE rec' = [rec EXCEPT ![u].st = "REFUSED", ![u].ver = "failed", ![u].why = "verify"]
  /\ UNCHANGED <<now, seq, up, ans, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

-----------------------------------------------------------------------------
(* Environment.                                                            *)

Crash(w) ==
  /\ Storm /\ up[w] /\ crashes < MaxCrashes
  /\ up' = [up EXCEPT ![w] = FALSE] /\ ans' = [ans EXCEPT ![w] = [u \in Units |-> NoAns]]
  /\ crashes' = crashes + 1
  /\ UNCHANGED <<now, rec, seq, net, acks, tgt, hi, plan, good, losses, stale, fenced>>

Restart(w) ==
  /\ ~up[w] /\ up' = [up EXCEPT ![w] = TRUE]
  /\ UNCHANGED <<now, rec, seq, ans, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

\* The target applies a request that arrives by its deadline and carries a token at
\* least as high as any it has seen for its items; a stale one is rejected unanswered.
Deliver(m) ==
  /\ m \in net /\ now <= m.dl
  /\ net' = net \ {m}
  /\ IF Fresh(m)
       THEN /\ tgt' = [tgt EXCEPT ![m.id] = @ + 1]
            /\ hi' = [i \in Items |-> IF i \in Write(m.id) /\ hi[i] < m.tok THEN m.tok
                                      ELSE hi[i]]
            /\ acks' = acks \cup {[id |-> m.id, att |-> m.att]}
            /\ stale' = (stale \/ \E i \in Write(m.id) : hi[i] > m.tok)
            /\ UNCHANGED fenced
       ELSE /\ fenced' = TRUE
            /\ UNCHANGED <<tgt, hi, acks, stale>>
  /\ UNCHANGED <<now, rec, seq, up, ans, plan, good, crashes, losses>>

LoseReq(m) ==
  /\ Storm /\ losses < MaxLoss /\ m \in net
  /\ net' = net \ {m} /\ losses' = losses + 1
  /\ UNCHANGED <<now, rec, seq, up, ans, acks, tgt, hi, plan, good, crashes, stale, fenced>>

LoseAck(m) ==
  /\ Storm /\ losses < MaxLoss /\ m \in acks
  /\ acks' = acks \ {m} /\ losses' = losses + 1
  /\ UNCHANGED <<now, rec, seq, up, ans, net, tgt, hi, plan, good, crashes, stale, fenced>>

\* A newer plan version supersedes the one every unit was made under.
Supersede ==
  /\ Storm /\ Supersedable /\ plan = 1 /\ plan' = 2
  /\ UNCHANGED <<now, rec, seq, up, ans, net, acks, tgt, hi, good, crashes, losses, stale,
                 fenced>>

Waiting(u) == \/ rec[u].st = "DISPATCHED" /\ now < rec[u].claim
              \/ rec[u].st = "PROPOSED" /\ Claimed(u)

Tick ==
  /\ \/ Storm
     \/ net = {} /\ acks = {} /\ \E u \in Units : Waiting(u)
  /\ now' = now + 1
  /\ net' = {m \in net : m.dl >= now + 1}
  /\ UNCHANGED <<rec, seq, up, ans, acks, tgt, hi, plan, good, crashes, losses, stale, fenced>>

-----------------------------------------------------------------------------
\* BROKEN: the admission's budget check and the reservation are two appends.
Reserve(u) ==
  /\ rec[u].st \in Holding \cup {"COMMITTED"} /\ ~rec[u].res
  /\ rec' = [rec EXCEPT ![u].res = TRUE]
  /\ UNCHANGED <<now, seq, up, ans, net, acks, tgt, hi, plan, good, crashes, losses, stale,
                 fenced>>

Init ==
  /\ now = 0 /\ rec = [u \in Units |-> NoRec] /\ seq = 0
  /\ up = [w \in Workers |-> TRUE] /\ ans = [w \in Workers |-> [u \in Units |-> NoAns]]
  /\ net = {} /\ acks = {} /\ tgt = [u \in Units |-> 0] /\ hi = [i \in Items |-> -1]
  /\ plan = 1
  /\ good \in IF Verify THEN [Units -> BOOLEAN] ELSE {[u \in Units |-> TRUE]}
  /\ crashes = 0 /\ losses = 0 /\ stale = FALSE /\ fenced = FALSE

KernelNext ==
  \/ \E w \in Workers, u \in Units :
        Admit(w, u) \/ Dispatch(w, u) \/ Recover(w, u) \/ Lookup(w, u) \/ Verification(w, u)
  \/ \E w \in Workers, m \in acks : Ack(w, m)

EnvNext ==
  \/ \E w \in Workers : Crash(w) \/ Restart(w)
  \/ \E m \in net : Deliver(m) \/ LoseReq(m)
  \/ \E m \in acks : LoseAck(m)
  \/ Supersede \/ Tick

Next == KernelNext \/ EnvNext \/ \E u \in Units : Reserve(u)

KernelProgress == \E w \in Workers, u \in Units :
                    Admit(w, u) \/ Dispatch(w, u) \/ Recover(w, u) \/ Lookup(w, u)
                    \/ Verification(w, u)
AckProgress == \E w \in Workers, m \in acks : Ack(w, m)
TargetProgress == \E m \in net : Deliver(m)
RestartProgress == \E w \in Workers : Restart(w)

Spec == Init /\ [][Next]_vars
FairSpec == Spec /\ WF_vars(KernelProgress) /\ WF_vars(TargetProgress)
                 /\ WF_vars(AckProgress) /\ WF_vars(RestartProgress) /\ WF_vars(Tick)

-----------------------------------------------------------------------------
(* Invariants: the guarantees of DESIGN.md section 8, then K1-K9 per unit. *)

Horizon == MaxTime + 2 * (TTL + SendTimeout + SettleMargin) + 2
States == {"PROPOSED", "AUTHORIZED", "DISPATCHED", "LANDED"} \cup Final
TypeOK ==
  /\ now \in 0..Horizon /\ seq \in 0..Cardinality(Units)
  /\ \A u \in Units : /\ rec[u].st \in States /\ rec[u].tok \in -1..seq
                      /\ rec[u].ex \in {"true", "false", "unknown"}
                      /\ rec[u].ovl \subseteq Units /\ rec[u].res \in BOOLEAN
  /\ \A m \in net : m.id \in Units /\ m.att >= 1 /\ m.dl >= now
  /\ plan \in {1, 2} /\ good \in [Units -> BOOLEAN]
  /\ crashes \in 0..MaxCrashes /\ losses \in 0..MaxLoss

\* G1 one order: tokens come from the journal order, one per admission.
G1_OneOrder == \A u, v \in Units :
                 (u # v /\ rec[u].tok >= 0) => (rec[u].tok # rec[v].tok /\ rec[u].tok < seq)

\* G2 exclusive fenced ownership: at most one live claim per item, and no write
\* lands with a token lower than one the target has seen for its items.
G2_ExclusiveClaims ==
  /\ \A u, v \in Units : (u # v /\ LiveClaim(u) /\ LiveClaim(v)) => Write(u) \cap Write(v) = {}
  /\ ~stale

\* G5 verified completion: nothing COMMITTED without a journaled pass (of a good change).
G5_VerifiedCompletion ==
  \A u \in Units : (Verify /\ rec[u].st = "COMMITTED") => (rec[u].ver = "passed" /\ good[u])

\* G6 (limited form): no request leaves once a unit whose claim covered its reads at
\* admission was sent (and not proven unapplied).
G6_ReadsAtSend == \A m \in net : m.reads

\* G7 bounded cost: reserved <= cap, spent (applied at the target) <= reserved.
G7_Budget == Reserved <= Cap /\ Spent <= Reserved
\* The harm G7 prevents: more applied than the cap allows.
G7_SpentWithinCap == Spent <= Cap

\* G8 intent freshness: no request leaves under a superseded plan.
G8_PlanAtSend == \A m \in net : m.plan

K1_WriteAhead == /\ \A m \in net : rec[m.id].att >= m.att
                 /\ \A u \in Units : tgt[u] > 0 => rec[u].att > 0
K2_AtMostOnce == \A u \in Units : tgt[u] <= 1
\* K4 authority at send: the unit's claim was live when its request left.
K4_AuthorityAtSend == \A m \in net : m.auth
K6_NoSelfRace == \A u \in Units : Cardinality({m \in net : m.id = u}) <= 1
K7_HonestOutcomes ==
  \A u \in Units : /\ rec[u].st \in {"COMMITTED", "LANDED"} => tgt[u] >= 1
                   /\ rec[u].ex = "true" => tgt[u] >= 1
                   /\ (rec[u].st \in Final /\ rec[u].ex = "false") => tgt[u] = 0
                   /\ rec[u].st # "AMBIGUOUS"

\* K9 resolution: every unit of the journal, wherever it stopped, reaches a final state.
K9_Resolution == \A u \in Units : rec[u].st \notin Final ~> rec[u].st \in Final

-----------------------------------------------------------------------------
(* Reachability witnesses: each must be VIOLATED.                          *)
NeverCommitted == \A u \in Units : rec[u].st # "COMMITTED"
NeverBothAdmitted == ~\A u \in Units : rec[u].tok >= 0
NeverOverBudget == \A u \in Units : rec[u].why # "budget"
NeverSuperseded == \A u \in Units : rec[u].why # "plan"
NeverReadsMoved == \A u \in Units : rec[u].why # "reads"
NeverClaimExpired == \A u \in Units : rec[u].why # "claim"
NeverFenced == ~fenced
NeverVerifyFailed == \A u \in Units : rec[u].why # "verify"
=============================================================================
