"""The transition table, one test per transition and per error path, and the recovery order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernel as k
from kernel import State
from kernel.model import observed, stale_premises

STRIPE = k.Capabilities(dedupes=True, queryable=True, dedup_window=60_000, lookup_lag=100)
DEDUPE_ONLY = k.Capabilities(dedupes=True, queryable=False, dedup_window=60_000)
LOOKUP_ONLY = k.Capabilities(dedupes=False, queryable=True, lookup_lag=100)
NEITHER = k.Capabilities(dedupes=False, queryable=False)
TIMING = k.Timing(send_timeout=2_000, settle_margin=1_000, dedup_margin=5_000)
FACTS = {"paid": 100, "refunded": 0}
LIVE = k.Lease("L1", expires_at=10**9)
REVOKED = k.Lease("L1", expires_at=10**9, revoked=True)


def proposal(caps=LOOKUP_ONLY, amount=20):
    return k.Proposal(payload={"order": 881, "amount": amount}, premises=FACTS, lease="L1",
                      capabilities=caps, timing=TIMING, key={"order": 881, "case": 4471})


def dispatched(caps=LOOKUP_ONLY):
    e = k.step(None, k.Propose(0, proposal(caps))).effect
    e = k.step(e, k.Authorize(1, LIVE, FACTS)).effect
    return k.step(e, k.Dispatch(2, LIVE, FACTS)).effect


def kinds(transition):
    return [type(c).__name__ + (":" + c.entry["kind"] if isinstance(c, k.Append) else "")
            for c in transition.commands]


def test_propose_creates_a_proposed_effect_and_journals_it_unsynced():
    t = k.step(None, k.Propose(0, proposal()))
    assert t.effect.state is State.PROPOSED
    assert kinds(t) == ["Append:PROPOSED"]
    assert t.commands[0].fsync is False
    assert t.commands[0].entry["payload_digest"] == proposal().payload_digest


def test_authorize_with_live_lease_and_holding_premises():
    e = k.step(None, k.Propose(0, proposal())).effect
    t = k.step(e, k.Authorize(1, LIVE, FACTS))
    assert t.effect.state is State.AUTHORIZED and kinds(t) == ["Append:AUTHORIZED"]
    assert t.effect.authorized["lease"]["live"] is True


@pytest.mark.parametrize("lease, facts, reason", [
    (REVOKED, FACTS, "lease_dead"),
    (k.Lease("L1", expires_at=1), FACTS, "lease_dead"),
    (k.Lease("other", expires_at=10**9), FACTS, "lease_dead"),
    (LIVE, {"paid": 100, "refunded": 20}, "premise_stale"),
    (LIVE, {"paid": 100}, "premise_stale"),
])
def test_authorize_refuses_without_authority_or_on_stale_premises(lease, facts, reason):
    e = k.step(None, k.Propose(0, proposal())).effect
    t = k.step(e, k.Authorize(1, lease, facts))
    assert t.effect.state is State.REFUSED and t.effect.reason == reason
    assert t.effect.executed is k.Executed.FALSE
    assert kinds(t) == ["Append:REFUSED"] and t.commands[0].fsync


def test_dispatch_journals_durable_intent_before_the_send():
    e = k.step(k.step(None, k.Propose(0, proposal())).effect, k.Authorize(1, LIVE, FACTS)).effect
    t = k.step(e, k.Dispatch(5, LIVE, FACTS))
    assert kinds(t) == ["Append:DISPATCHED", "Send"]
    append, send = t.commands
    assert append.fsync is True
    assert send.deadline == 5 + TIMING.send_timeout and send.attempt == 1
    assert send.idempotency_key == proposal().effect_id
    assert t.effect.claim_until == send.deadline + TIMING.settle_margin


def test_dispatch_rechecks_and_refuses_when_the_world_moved_since_authorize():
    e = k.step(k.step(None, k.Propose(0, proposal())).effect, k.Authorize(1, LIVE, FACTS)).effect
    t = k.step(e, k.Dispatch(5, REVOKED, FACTS))
    assert t.effect.state is State.REFUSED and not any(isinstance(c, k.Send) for c in t.commands)


def test_ack_commits():
    t = k.step(dispatched(), k.Ack(10, attempt=1))
    assert t.effect.state is State.COMMITTED and t.effect.executed is k.Executed.TRUE
    assert t.commands[0].entry["via"] == "ack"


def test_a_lookup_answer_from_a_target_that_cannot_be_looked_up_is_illegal():
    e = dispatched(NEITHER)
    with pytest.raises(k.IllegalTransition, match="cannot be looked up"):
        k.step(e, k.Recover(e.claim_until + 5, LIVE, FACTS, k.Lookup(False, e.claim_until)))


def test_ack_for_an_attempt_never_sent_is_illegal():
    with pytest.raises(k.IllegalTransition, match="no attempt 2"):
        k.step(dispatched(), k.Ack(10, attempt=2))


@pytest.mark.parametrize("state_of, event", [
    (lambda: None, k.Ack(0, 1)),
    (lambda: None, k.Recover(0, LIVE, FACTS)),
    (lambda: k.step(None, k.Propose(0, proposal())).effect, k.Dispatch(1, LIVE, FACTS)),
    (lambda: k.step(None, k.Propose(0, proposal())).effect, k.Ack(1, 1)),
    (dispatched, k.Authorize(3, LIVE, FACTS)),
    (dispatched, k.Dispatch(3, LIVE, FACTS)),
    (dispatched, k.LookupAnswer(3, True)),
    (lambda: k.step(dispatched(), k.Ack(3, 1)).effect, k.Recover(4, LIVE, FACTS)),
])
def test_illegal_event_raises_and_changes_nothing(state_of, event):
    effect = state_of()
    before = effect
    with pytest.raises(k.IllegalTransition) as info:
        k.step(effect, event)
    assert type(event).__name__ in str(info.value)
    assert effect == before


def test_resubmission_outcomes():
    e = dispatched()
    assert k.step(e, k.Propose(9, proposal())).commands == (k.Reply(e.effect_id, "in_flight"),)
    committed = k.step(e, k.Ack(10, 1)).effect
    t = k.step(committed, k.Propose(11, proposal()))
    assert t.commands == (k.Reply(e.effect_id, "duplicate"),) and t.effect == committed


def test_conflicting_payload_is_rejected_and_the_effect_unchanged():
    committed = k.step(dispatched(), k.Ack(10, 1)).effect
    t = k.step(committed, k.Propose(11, proposal(amount=30)))
    assert t.effect == committed
    assert kinds(t) == ["Append:REJECTED", "Reply"]
    assert t.commands[1].outcome == "conflicting_payload"


# ---------------------------------------------------------------- recovery, step by step


def recover(effect, now, lease=LIVE, facts=FACTS, lookup=None):
    return k.step(effect, k.Recover(now, lease, facts, lookup))


def test_recovery_first_waits_out_the_claim():
    e = dispatched()
    t = recover(e, now=e.claim_until - 1)
    assert t.commands == (k.WaitUntil(e.claim_until),) and t.effect == e


@pytest.mark.parametrize("caps", [STRIPE, LOOKUP_ONLY])
def test_queryable_target_is_looked_up_and_a_find_commits(caps):
    e = dispatched(caps)
    assert recover(e, e.claim_until).commands == (k.Query(e.effect_id),)
    t = recover(e, e.claim_until + 5, lookup=k.Lookup(True, e.claim_until))
    assert t.effect.state is State.COMMITTED and t.effect.reason == "found_by_lookup"


def test_a_lookup_asked_before_the_claim_expired_is_not_evidence():
    e = dispatched(LOOKUP_ONLY)
    t = recover(e, e.claim_until + 5, lookup=k.Lookup(False, e.claim_until - 1))
    assert t.commands == (k.Query(e.effect_id),)


def test_negative_lookup_with_checks_passing_resends_durably():
    e = dispatched(LOOKUP_ONLY)
    t = recover(e, e.claim_until + 5, lookup=k.Lookup(False, e.claim_until))
    assert kinds(t) == ["Append:DISPATCHED", "Send"]
    assert t.commands[0].entry["phase"] == "recovery" and t.commands[1].attempt == 2
    assert t.effect.claim_until > e.claim_until


@pytest.mark.parametrize("lease, facts, reason", [
    (REVOKED, FACTS, "lease_dead_at_recovery"),
    (LIVE, {"paid": 100, "refunded": 20}, "premise_stale_at_recovery"),
])
def test_world_moved_and_lookup_proves_absent_refuses(lease, facts, reason):
    e = dispatched(LOOKUP_ONLY)
    t = recover(e, e.claim_until, lease, facts, k.Lookup(False, e.claim_until))
    assert t.effect.state is State.REFUSED and t.effect.reason == reason
    assert t.effect.executed is k.Executed.FALSE


def test_dedupe_only_resends_same_key_inside_the_window():
    e = dispatched(DEDUPE_ONLY)
    t = recover(e, e.claim_until)
    assert kinds(t) == ["Append:DISPATCHED", "Send"]
    assert t.commands[1].idempotency_key == e.effect_id


def test_dedupe_only_with_the_world_moved_is_ambiguous_never_resent():
    e = dispatched(DEDUPE_ONLY)
    t = recover(e, e.claim_until, facts={"paid": 100, "refunded": 20})
    assert t.effect.state is State.AMBIGUOUS
    assert t.effect.reason == "premise_stale_at_recovery_cannot_confirm"
    assert kinds(t) == ["Append:AMBIGUOUS", "Surface"]


def test_dedup_window_past_its_margin_downgrades_to_lookup_or_ambiguity():
    late = 2 + STRIPE.dedup_window - TIMING.dedup_margin  # first send at 2
    e = dispatched(STRIPE)
    assert recover(e, late, lookup=k.Lookup(False, late)).commands[1].attempt == 2
    only = dispatched(DEDUPE_ONLY)
    t = recover(only, late)
    assert t.effect.state is State.AMBIGUOUS
    assert t.effect.reason == "dedup_window_expired_no_lookup"
    assert kinds(recover(only, late - 1))[1] == "Send"


def test_tier3_is_ambiguous_and_never_resent():
    e = dispatched(NEITHER)
    t = recover(e, e.claim_until)
    assert t.effect.state is State.AMBIGUOUS and t.effect.reason == "no_dedup_no_lookup"
    assert not any(isinstance(c, k.Send) for c in t.commands)


def test_late_ack_settles_an_ambiguous_receipt():
    amb = recover(dispatched(NEITHER), 10_000).effect
    t = k.step(amb, k.Ack(20_000, 1))
    assert t.effect.state is State.AMBIGUOUS and t.effect.executed is k.Executed.TRUE
    assert kinds(t) == ["Append:LATE"]


def test_late_confirmation_contradicting_a_refusal_raises_a_k7_alert():
    e = dispatched(LOOKUP_ONLY)
    refused = recover(e, e.claim_until, REVOKED, FACTS, k.Lookup(False, e.claim_until)).effect
    t = k.step(refused, k.LookupAnswer(99_000, True))
    assert [c.invariant for c in t.commands if isinstance(c, k.Alert)] == ["K7"]


def test_timing_is_validated_against_capabilities():
    with pytest.raises(k.ConfigError, match="lookup lag"):
        k.Timing(settle_margin=100).validate(k.Capabilities(False, True, lookup_lag=100))
    with pytest.raises(k.ConfigError, match="dedup_margin"):
        k.Timing(send_timeout=2_000, settle_margin=1_000, dedup_margin=3_000).validate(STRIPE)
    with pytest.raises(k.ConfigError, match="dedup_window"):
        k.Capabilities(dedupes=True, queryable=False)


def test_replay_rebuilds_what_step_built():
    effects, chain, entries = k.Effects(), k.Chain(), []
    p = proposal(STRIPE)
    for event in (k.Propose(0, p), k.Authorize(1, LIVE, FACTS), k.Dispatch(2, LIVE, FACTS)):
        for c in effects.apply(event, p.effect_id):
            if isinstance(c, k.Append):
                entries.append(chain.seal(c.entry)[0])
    assert k.replay(entries) == effects.by_id
    assert [e.effect_id for e in k.Effects(k.replay(entries)).open()] == [p.effect_id]


def test_the_state_diagram_comes_from_the_table():
    edges = set(k.edges())
    assert ("DISPATCHED", "Recover", "AMBIGUOUS") in edges
    assert ("PROPOSED", "Authorize", "REFUSED") in edges
    assert not any(src in ("COMMITTED", "REFUSED", "AMBIGUOUS") for src, _, _ in edges)


def test_a_late_miss_asked_before_the_claim_expired_is_not_evidence():
    e = dispatched(LOOKUP_ONLY)
    committed = k.step(e, k.Ack(10, 1)).effect
    early = k.step(committed, k.LookupAnswer(50_000, False, asked_at=e.claim_until - 1))
    assert not any(isinstance(c, k.Alert) for c in early.commands)
    assert early.commands[0].entry["asked_at"] == e.claim_until - 1
    unknown_time = k.step(committed, k.LookupAnswer(50_000, False))
    assert not any(isinstance(c, k.Alert) for c in unknown_time.commands)
    late = k.step(committed, k.LookupAnswer(50_000, False, asked_at=e.claim_until))
    assert [c.invariant for c in late.commands if isinstance(c, k.Alert)] == ["K7"]


def test_a_late_miss_is_no_evidence_where_nothing_bounds_what_is_in_flight():
    """Found by the sweep (seed 1491, t1): two recoverers, one commits by lookup, the other's
    negative lookup arrives later; without an in-flight bound the effect may land after a
    lookup was answered, so that miss contradicts nothing."""
    import dataclasses

    e = dispatched(dataclasses.replace(LOOKUP_ONLY, bounds_in_flight=False))
    committed = k.step(e, k.Ack(10, 1)).effect
    late = k.step(committed, k.LookupAnswer(50_000, False, asked_at=e.claim_until))
    assert not any(isinstance(c, k.Alert) for c in late.commands)


# ---------------------------------------------------------------- the facts a check records

_JSON = st.recursive(st.none() | st.booleans() | st.sampled_from([0, 1, 2, 1.0, "", "a"]),
                     lambda inner: st.lists(inner, max_size=2)
                     | st.dictionaries(st.sampled_from("xy"), inner, max_size=2), max_leaves=4)


def _alike(value):
    """A value ``==`` holds equal to ``value`` that JSON may not: true for 1, 1.0 for 1,
    at any depth."""
    if type(value) is list:
        return [_alike(v) for v in value]
    if type(value) is dict:
        return {key: _alike(v) for key, v in value.items()}
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        return bool(value) if value in (0, 1) else float(value)
    return value


@given(st.dictionaries(st.sampled_from("abcd"), _JSON, max_size=4),
       st.dictionaries(st.sampled_from("abcde"), _JSON, max_size=5),
       st.lists(st.sampled_from(["same", "alike", "other", "absent"]), min_size=4,
                max_size=4))
@settings(max_examples=300, derandomize=True, database=None)
def test_a_check_records_each_premise_fact_and_names_the_stale_ones(premises, others, how):
    """model.observed (the check's one pass, with == for two scalars of one type) agrees
    with stale_premises (JSON equality: true is not 1, 1.0 is 1) and records every premise's
    fact, None where none was observed. Each premise's fact is the same value, one ==
    holds equal (true for 1, at any depth), another value, or absent."""
    facts = dict(others)
    for (name, value), choice in zip(sorted(premises.items()), how):
        if choice == "absent":
            facts.pop(name, None)
        elif choice != "other":
            facts[name] = value if choice == "same" else _alike(value)
    p = k.Proposal(payload={}, premises=premises, lease="L", capabilities=k.Capabilities(
        dedupes=False, queryable=False), timing=k.Timing(send_timeout=1, settle_margin=1))
    seen, stale = observed(p, facts)
    assert stale == stale_premises(premises, facts)
    assert seen == {name: facts.get(name) for name in sorted(premises)}
    assert list(seen) == sorted(premises)
