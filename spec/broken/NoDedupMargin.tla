------------------------------- MODULE NoDedupMargin -------------------------------
(***************************************************************************)
(* The exactly-once effect kernel (DESIGN.md section 4) and the world it   *)
(* runs in, small enough to model-check with our own checker.              *)
(*                                                                         *)
(* Theory of operation.  An agent proposes a decision (key k, amount a);   *)
(* its effect id is the key, so a re-decided amount is the same effect     *)
(* with another payload and is REJECTED.  Workers step effects through     *)
(* PROPOSED -> AUTHORIZED -> DISPATCHED -> COMMITTED | REFUSED | AMBIGUOUS *)
(* exactly as kernel/machine.py does; every kernel step reads and appends  *)
(* the one shared journal atomically (the hash chain makes the journal a   *)
(* compare-and-append log).  `rec` is the journal folded per effect (what  *)
(* kernel.replay gives), `dur` how much of it is fsync'd: PROPOSED and     *)
(* AUTHORIZED are appended without fsync, so a crash may lose or tear them *)
(* (a torn line is dropped whole); every other entry is fsync'd.           *)
(* DISPATCHED is durable before the request enters the network (K1); the   *)
(* request carries the deadline after which the target drops it, and the   *)
(* claim (deadline + settle margin) is what recovery waits out.  A request *)
(* lost on the wire models "crash before send" as well.                    *)
(*                                                                         *)
(* Time is a small integer.  Until MaxTime the world is a storm: crashes,  *)
(* lost requests and acks, lease revocation, premises changed by hand,    *)
(* idempotency keys pruned after the dedup window.  From MaxTime on it is  *)
(* calm: no faults, the network and target are prompt, and the clock only *)
(* advances to let pending claims expire; so every behaviour is finite and *)
(* K9 (every open effect reaches a final state) is meaningful.             *)
(*                                                                         *)
(* Lines marked DECISION are the design decisions; spec/broken/make.py     *)
(* removes each one in turn and the checker finds a counterexample.        *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS
  Keys,            \* decision keys (one effect each)
  Amounts,         \* what the model may decide; {1, 2} lets it re-decide
  Workers,
  Dedupes,         \* the target dedupes by idempotency key (tier 1)
  Queryable,       \* the target can be looked up by effect id (tier 2)
  SendTimeout, SettleMargin, DedupWindow, DedupMargin, LookupLag,
  MaxTime,         \* end of the storm
  MaxCrashes, MaxLoss,
  Revocable, PremiseMovable, Prunable   \* world-event groups

ASSUME /\ SendTimeout > 0 /\ SettleMargin > 0
       /\ DedupWindow >= 0 /\ DedupMargin >= 0 /\ LookupLag >= 0
       /\ MaxTime \in Nat /\ MaxCrashes \in Nat /\ MaxLoss \in Nat
       /\ 1 \in Amounts
       /\ {Dedupes, Queryable, Revocable, PremiseMovable, Prunable} \subseteq BOOLEAN

VARIABLES
  now,       \* the clock
  rec,       \* journal folded per effect id: [st, pay, att, first, claim, ex]
  dur,       \* "ALL", or the last state whose entries are all fsync'd
  up,        \* worker is running
  ans,       \* volatile: the last lookup answer each worker holds per effect
  net,       \* requests in flight to the target
  acks,      \* acknowledgements in flight back to the workers
  tgt,       \* target: applications, time of the first, key remembered
  lease,     \* the authority is live
  prem,      \* the premises of each decision still hold
  crashes, losses,
  sent,      \* history: requests sent per effect id
  sentPay,   \* history: payloads sent per decision key
  alarm      \* history: the kernel raised an invariant alert (K7)

vars == <<now, rec, dur, up, ans, net, acks, tgt, lease, prem, crashes, losses,
          sent, sentPay, alarm>>

-----------------------------------------------------------------------------
(* Identity: the effect id is the decision key, never the payload.         *)
Id(k, a) == k          \* DECISION identity
Ids == Keys            \* DECISION identity
KeyOf(i) == i          \* DECISION identity

Final == {"COMMITTED", "REFUSED", "AMBIGUOUS"}
States == {"NONE", "PROPOSED", "AUTHORIZED", "DISPATCHED"} \cup Final
Rank(s) == CASE s = "NONE" -> 0 [] s = "PROPOSED" -> 1 [] s = "AUTHORIZED" -> 2
             [] s = "DISPATCHED" -> 3 [] OTHER -> 4

NoRec == [st |-> "NONE", pay |-> 0, att |-> 0, first |-> -1, claim |-> 0, ex |-> "false"]
NoAns == [found |-> FALSE, asked |-> -1]
Storm == now < MaxTime

Checks(i) == lease /\ prem[KeyOf(i)]
\* Recovery re-checks lease and premises before anything could be sent again.
Recheck(i) == Checks(i)                                     \* DECISION recheck
\* Never race yourself: time t is past the claim of the last send.
Settled(i, t) == t >= rec[i].claim                          \* DECISION wait
\* A resend with the same key lands while the target surely remembers it.
DedupOpen(i) == /\ Dedupes /\ rec[i].first >= 0
                /\ now < rec[i].first + DedupWindow   \* BROKEN: no margin
\* Tier 3 is never resent.
BlindResend == FALSE                                        \* DECISION tier3

Visible(i) == tgt[i].n > 0 /\ tgt[i].at + LookupLag <= now

\* fsync makes the whole journal durable, every effect's tail included.
Fsync(i) == dur' = [j \in Ids |-> "ALL"]
Lazy(i)  == dur' = [dur EXCEPT ![i] = IF @ = "ALL" THEN rec[i].st ELSE @]

Dispatched(i, att, first) ==
  [st |-> "DISPATCHED", pay |-> rec[i].pay, att |-> att, first |-> first,
   claim |-> now + SendTimeout + SettleMargin, ex |-> "unknown"]

SendReq(i, att) ==
  /\ net' = net \cup {[id |-> i, att |-> att, dl |-> now + SendTimeout,
                       auth |-> lease, prem |-> prem[KeyOf(i)]]}
  /\ sent' = [sent EXCEPT ![i] = @ + 1]
  /\ sentPay' = [sentPay EXCEPT ![KeyOf(i)] = @ \cup {rec[i].pay}]

Finish(i, st, ex) ==
  /\ rec' = [rec EXCEPT ![i].st = st, ![i].ex = ex]
  /\ Fsync(i)
  /\ UNCHANGED <<net, sent, sentPay>>

Resend(i) ==
  /\ rec' = [rec EXCEPT ![i] = Dispatched(i, rec[i].att + 1, rec[i].first)]
  /\ Fsync(i)
  /\ SendReq(i, rec[i].att + 1)

\* A late answer is journaled; it settles an AMBIGUOUS receipt, and the kernel
\* alerts when it contradicts the recorded outcome.  A "not found" is evidence
\* only when it was asked after the last send's claim.
Late(i, confirms, evidence) ==
  /\ rec' = [rec EXCEPT ![i].ex = IF confirms /\ @ = "unknown" THEN "true" ELSE @]
  /\ alarm' = \/ alarm
              \/ confirms /\ rec[i].ex = "false"
              \/ ~confirms /\ evidence /\ rec[i].ex = "true"
  /\ Fsync(i)                 \* the LATE entry is fsync'd

-----------------------------------------------------------------------------
(* Kernel events (kernel/machine.py), each run by a worker that is up.     *)

Propose(w, k, a) ==
  LET i == Id(k, a) IN
  /\ up[w]
  /\ \/ /\ rec[i].st = "NONE"
        /\ rec' = [rec EXCEPT ![i] = [NoRec EXCEPT !.st = "PROPOSED", !.pay = a]]
        /\ Lazy(i)
     \/ /\ rec[i].st # "NONE" /\ rec[i].pay # a   \* REJECTED conflicting_payload, fsync'd
        /\ UNCHANGED rec /\ Fsync(i)
  /\ UNCHANGED <<now, up, ans, net, acks, tgt, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

Authorize(w, i) ==
  /\ up[w] /\ rec[i].st = "PROPOSED"
  /\ IF Checks(i)
       THEN rec' = [rec EXCEPT ![i].st = "AUTHORIZED"] /\ Lazy(i)
       ELSE rec' = [rec EXCEPT ![i].st = "REFUSED"] /\ Fsync(i)
  /\ UNCHANGED <<now, up, ans, net, acks, tgt, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

Dispatch(w, i) ==
  /\ up[w] /\ rec[i].st = "AUTHORIZED"
  /\ IF Checks(i)
       THEN /\ rec' = [rec EXCEPT ![i] = Dispatched(i, 1, now)]
            /\ Fsync(i)                                     \* DECISION intent
            /\ SendReq(i, 1)
       ELSE /\ rec' = [rec EXCEPT ![i].st = "REFUSED"] /\ Fsync(i)
            /\ UNCHANGED <<net, sent, sentPay>>
  /\ UNCHANGED <<now, up, ans, acks, tgt, lease, prem, crashes, losses, alarm>>

\* The target confirmed attempt m.att: commit, or journal a late answer.
Ack(w, m) ==
  /\ up[w] /\ m \in acks
  /\ acks' = acks \ {m}
  /\ CASE rec[m.id].st = "DISPATCHED" ->
            Finish(m.id, "COMMITTED", "true") /\ UNCHANGED alarm
       [] rec[m.id].st \in Final ->
            Late(m.id, TRUE, TRUE) /\ UNCHANGED <<net, sent, sentPay>>
       [] OTHER -> UNCHANGED <<rec, dur, net, sent, sentPay, alarm>>
  /\ UNCHANGED <<now, up, ans, tgt, lease, prem, crashes, losses>>

\* Recover, in DESIGN's order; its "wait" and "query" outcomes change nothing
\* (the driver then ticks or runs Lookup), so Recover is enabled only when it
\* decides something.
Recover(w, i) ==
  LET a      == ans[w][i]
      fresh  == a.asked >= 0 /\ Settled(i, a.asked)
      absent == Queryable /\ fresh
  IN
  /\ up[w] /\ rec[i].st = "DISPATCHED" /\ Settled(i, now)
  /\ ~(Queryable /\ ~fresh)
  /\ ans' = [ans EXCEPT ![w][i] = NoAns]
  /\ CASE absent /\ a.found -> Finish(i, "COMMITTED", "true")
       [] ~Recheck(i) ->
            IF absent THEN Finish(i, "REFUSED", "false") ELSE Finish(i, "AMBIGUOUS", "unknown")
       [] DedupOpen(i) \/ absent \/ BlindResend -> Resend(i)
       [] OTHER -> Finish(i, "AMBIGUOUS", "unknown")
  /\ UNCHANGED <<now, up, acks, tgt, lease, prem, crashes, losses, alarm>>

\* The driver's Query command: look the effect up once its claim has expired.
Lookup(w, i) ==
  /\ Queryable /\ up[w] /\ rec[i].st = "DISPATCHED"
  /\ Settled(i, now) /\ ~(ans[w][i].asked >= 0 /\ Settled(i, ans[w][i].asked))
  /\ ans' = [ans EXCEPT ![w][i] = [found |-> Visible(i), asked |-> now]]
  /\ UNCHANGED <<now, rec, dur, up, net, acks, tgt, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

\* LookupAnswer: an answer a worker holds for an effect that is already final.
LateLookup(w, i) ==
  /\ up[w] /\ rec[i].st \in Final /\ ans[w][i].asked >= 0
  /\ ans' = [ans EXCEPT ![w][i] = NoAns]
  /\ Late(i, ans[w][i].found, ans[w][i].asked >= rec[i].claim)
  /\ UNCHANGED <<now, up, net, acks, tgt, lease, prem, crashes, losses, sent, sentPay>>

-----------------------------------------------------------------------------
(* Environment: workers crash and restart, the network and the target,     *)
(* the clock, and the world moving during an outage.                       *)

Cut(r, s) == IF s = "NONE" THEN NoRec
             ELSE IF Rank(s) < 3 THEN [NoRec EXCEPT !.st = s, !.pay = r.pay] ELSE r
Survivors(i) ==
  IF dur[i] = "ALL" THEN {rec[i]}
  ELSE {Cut(rec[i], s) : s \in {s2 \in {"NONE", "PROPOSED", "AUTHORIZED", "DISPATCHED"} :
                                 Rank(dur[i]) <= Rank(s2) /\ Rank(s2) <= Rank(rec[i].st)}}

\* A crash loses the worker's memory and the journal's unflushed tail (any
\* prefix of it survives, a torn last line is dropped).
Crash(w) ==
  /\ Storm /\ up[w] /\ crashes < MaxCrashes
  /\ up' = [up EXCEPT ![w] = FALSE]
  /\ ans' = [ans EXCEPT ![w] = [i \in Ids |-> NoAns]]
  /\ rec' \in {r \in [Ids -> UNION {Survivors(i) : i \in Ids}] :
                 \A i \in Ids : r[i] \in Survivors(i)}
  /\ dur' = [i \in Ids |-> "ALL"]
  /\ crashes' = crashes + 1
  /\ UNCHANGED <<now, net, acks, tgt, lease, prem, losses, sent, sentPay, alarm>>

\* Restart: the worker replays the durable journal (which is `rec` now).
Restart(w) ==
  /\ ~up[w] /\ up' = [up EXCEPT ![w] = TRUE]
  /\ UNCHANGED <<now, rec, dur, ans, net, acks, tgt, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

\* The target applies a request that arrives by its deadline, unless it
\* remembers the key; either way it acknowledges.
Deliver(m) ==
  /\ m \in net /\ now <= m.dl
  /\ net' = net \ {m}
  /\ acks' = acks \cup {[id |-> m.id, att |-> m.att]}
  /\ tgt' = IF Dedupes /\ tgt[m.id].kept THEN tgt
            ELSE [tgt EXCEPT ![m.id] = [n |-> @.n + 1, at |-> IF @.n = 0 THEN now ELSE @.at,
                                        kept |-> Dedupes]]
  /\ UNCHANGED <<now, rec, dur, up, ans, lease, prem, crashes, losses, sent, sentPay, alarm>>

LoseReq(m) ==
  /\ Storm /\ losses < MaxLoss /\ m \in net
  /\ net' = net \ {m} /\ losses' = losses + 1
  /\ UNCHANGED <<now, rec, dur, up, ans, acks, tgt, lease, prem, crashes, sent, sentPay,
                 alarm>>

LoseAck(m) ==
  /\ Storm /\ losses < MaxLoss /\ m \in acks
  /\ acks' = acks \ {m} /\ losses' = losses + 1
  /\ UNCHANGED <<now, rec, dur, up, ans, net, tgt, lease, prem, crashes, sent, sentPay,
                 alarm>>

Revoke ==
  /\ Storm /\ Revocable /\ lease /\ lease' = FALSE
  /\ UNCHANGED <<now, rec, dur, up, ans, net, acks, tgt, prem, crashes, losses, sent,
                 sentPay, alarm>>

\* Someone changes a premise by hand (a manual refund during the outage).
ChangePremise(k) ==
  /\ Storm /\ PremiseMovable /\ prem[k] /\ prem' = [prem EXCEPT ![k] = FALSE]
  /\ UNCHANGED <<now, rec, dur, up, ans, net, acks, tgt, lease, crashes, losses, sent,
                 sentPay, alarm>>

\* The target forgets an idempotency key once its dedup window has passed.
Prune(i) ==
  /\ Storm /\ Prunable /\ tgt[i].kept /\ now >= tgt[i].at + DedupWindow
  /\ tgt' = [tgt EXCEPT ![i].kept = FALSE]
  /\ UNCHANGED <<now, rec, dur, up, ans, net, acks, lease, prem, crashes, losses, sent,
                 sentPay, alarm>>

\* Time passes freely during the storm; when calm, only to let claims expire,
\* and only once nothing is in flight.  Requests past their deadline are dropped.
Tick ==
  /\ \/ Storm
     \/ /\ net = {} /\ acks = {}
        /\ \E i \in Ids : rec[i].st = "DISPATCHED" /\ now < rec[i].claim
  /\ now' = now + 1
  /\ net' = {m \in net : m.dl >= now + 1}
  /\ UNCHANGED <<rec, dur, up, ans, acks, tgt, lease, prem, crashes, losses, sent, sentPay,
                 alarm>>

-----------------------------------------------------------------------------
Init ==
  /\ now = 0
  /\ rec = [i \in Ids |-> NoRec]
  /\ dur = [i \in Ids |-> "ALL"]
  /\ up = [w \in Workers |-> TRUE]
  /\ ans = [w \in Workers |-> [i \in Ids |-> NoAns]]
  /\ net = {} /\ acks = {}
  /\ tgt = [i \in Ids |-> [n |-> 0, at |-> -1, kept |-> FALSE]]
  /\ lease = TRUE /\ prem = [k \in Keys |-> TRUE]
  /\ crashes = 0 /\ losses = 0
  /\ sent = [i \in Ids |-> 0] /\ sentPay = [k \in Keys |-> {}]
  /\ alarm = FALSE

KernelNext ==
  \/ \E w \in Workers, k \in Keys, a \in Amounts : Propose(w, k, a)
  \/ \E w \in Workers, i \in Ids :
        Authorize(w, i) \/ Dispatch(w, i) \/ Recover(w, i) \/ Lookup(w, i) \/ LateLookup(w, i)
  \/ \E w \in Workers, m \in acks : Ack(w, m)

EnvNext ==
  \/ \E w \in Workers : Crash(w) \/ Restart(w)
  \/ \E m \in net : Deliver(m) \/ LoseReq(m)
  \/ \E m \in acks : LoseAck(m)
  \/ Revoke \/ (\E k \in Keys : ChangePremise(k)) \/ (\E i \in Ids : Prune(i))
  \/ Tick

Next == KernelNext \/ EnvNext

\* Recovery resolves every open effect of the journal: a DISPATCHED one by Recover and
\* Lookup, a PROPOSED or AUTHORIZED one (never sent) by Authorize and Dispatch with fresh
\* lease and premise checks, refused when a check fails (DESIGN.md section 4).
RecoveryProgress == \E w \in Workers, i \in Ids :
                      Recover(w, i) \/ Lookup(w, i) \/ Authorize(w, i) \/ Dispatch(w, i)
AckProgress == \E w \in Workers, m \in acks : Ack(w, m)
TargetProgress == \E m \in net : Deliver(m)
RestartProgress == \E w \in Workers : Restart(w)

ForwardProgress == \E w \in Workers, i \in Ids : Authorize(w, i) \/ Dispatch(w, i)

Spec == Init /\ [][Next]_vars
FairSpec == Spec /\ WF_vars(RecoveryProgress) /\ WF_vars(TargetProgress)
                 /\ WF_vars(AckProgress) /\ WF_vars(RestartProgress) /\ WF_vars(Tick)
\* For K10: the kernel also keeps stepping a proposal forward.
ProgressSpec == FairSpec /\ WF_vars(ForwardProgress)

-----------------------------------------------------------------------------
(* Invariants K1-K8 (DESIGN.md section 4), each named separately.          *)

Horizon == MaxTime + 2 * (SendTimeout + SettleMargin)
Recs == [st : States, pay : Amounts \cup {0}, att : Nat, first : -1..Horizon,
         claim : 0..Horizon, ex : {"true", "false", "unknown"}]
TypeOK ==
  /\ now \in 0..Horizon
  /\ rec \in [Ids -> Recs]
  /\ dur \in [Ids -> {"ALL", "NONE", "PROPOSED", "AUTHORIZED", "DISPATCHED"}]
  /\ up \in [Workers -> BOOLEAN]
  /\ ans \in [Workers -> [Ids -> [found : BOOLEAN, asked : -1..Horizon]]]
  /\ \A m \in net : m.id \in Ids /\ m.att >= 1 /\ m.dl >= now /\ m.auth \in BOOLEAN
  /\ \A m \in acks : m.id \in Ids /\ m.att >= 1
  /\ tgt \in [Ids -> [n : Nat, at : -1..Horizon, kept : BOOLEAN]]
  /\ lease \in BOOLEAN /\ prem \in [Keys -> BOOLEAN]
  /\ crashes \in 0..MaxCrashes /\ losses \in 0..MaxLoss
  /\ sent \in [Ids -> Nat] /\ sentPay \in [Keys -> SUBSET Amounts] /\ alarm \in BOOLEAN

Durable(i) == Rank(rec[i].st) >= 3 /\ dur[i] = "ALL"

\* K1 write-ahead: nothing is in flight or applied without a durable DISPATCHED.
K1_WriteAhead == /\ \A m \in net : Durable(m.id) /\ m.att <= rec[m.id].att
                 /\ \A i \in Ids : tgt[i].n > 0 => Rank(rec[i].st) >= 3

\* K2 at most once: tiers 1-2 apply an effect at most once; tier 3 sends it once.
K2_AtMostOnce == \A i \in Ids : /\ tgt[i].n <= 1
                                /\ (~Dedupes /\ ~Queryable) => sent[i] <= 1

\* K3 payload binding: one decision, one payload on the wire.
K3_PayloadBinding == \A k \in Keys : Cardinality(sentPay[k]) <= 1

\* K4, K5: every request left under a live lease and holding premises.
K4_AuthorityAtSend == \A m \in net : m.auth
K5_PremisesAtSend == \A m \in net : m.prem

\* K6 no self-race: at most one request of an effect may still land.
K6_NoSelfRace == \A i \in Ids : Cardinality({m \in net : m.id = i}) <= 1

\* K7 honest outcomes: COMMITTED and executed=true only if applied;
\* executed=false at the end only if never applied; AMBIGUOUS only where no
\* lookup exists; and the kernel never raises a contradiction alert.
K7_HonestOutcomes ==
  /\ \A i \in Ids : /\ rec[i].st = "COMMITTED" => tgt[i].n >= 1
                    /\ rec[i].ex = "true" => tgt[i].n >= 1
                    /\ (rec[i].st \in Final /\ rec[i].ex = "false") => tgt[i].n = 0
                    /\ rec[i].st = "AMBIGUOUS" => ~Queryable
  /\ ~alarm

\* K8 (crash half; the hash chain half is kernel/journal.verify): only
\* PROPOSED and AUTHORIZED entries are ever beyond the fsync'd prefix, so a
\* crash never loses an intent or an outcome.
K8_DurableJournal ==
  \A i \in Ids : dur[i] # "ALL" => /\ Rank(dur[i]) < Rank(rec[i].st)
                                   /\ rec[i].st \in {"PROPOSED", "AUTHORIZED"}

\* K9 resolution (liveness, under FairSpec): every effect the journal holds that is not
\* final (PROPOSED, AUTHORIZED or DISPATCHED) reaches a final state, or, for an unflushed
\* PROPOSED/AUTHORIZED tail, drops out of the journal at a crash (it was never sent).
Open == {"PROPOSED", "AUTHORIZED", "DISPATCHED"}
K9_Resolution == \A i \in Ids : rec[i].st \in Open ~> rec[i].st \in Final \cup {"NONE"}

\* K10 progress (liveness, under ProgressSpec, in a world without faults: MaxTime = 0,
\* so the network is prompt, and no crash, loss or world event).
K10_Progress == \A i \in Ids : rec[i].st = "PROPOSED" ~> rec[i].st = "COMMITTED"

-----------------------------------------------------------------------------
(* Reachability witnesses: each must be VIOLATED, proving the outcome is   *)
(* reachable, so no invariant above holds vacuously.                       *)
NeverCommitted == \A i \in Ids : rec[i].st # "COMMITTED"
NeverRefused == \A i \in Ids : rec[i].st # "REFUSED"
NeverAmbiguous == \A i \in Ids : rec[i].st # "AMBIGUOUS"
NeverResent == \A i \in Ids : rec[i].att <= 1
NeverRefusedAtRecovery == \A i \in Ids : ~(rec[i].st = "REFUSED" /\ rec[i].att > 0)
NeverSettledAmbiguous == \A i \in Ids : ~(rec[i].st = "AMBIGUOUS" /\ rec[i].ex = "true")
=============================================================================
