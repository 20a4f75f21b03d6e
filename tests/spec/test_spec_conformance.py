"""The Python kernel implements exactly Kernel.tla: bisimulation and trace validation.

How it works. ``spec.conformance.bisim.check`` explores the kernel (driven by the harness in
the spec's world) and the spec under one config and checks the mapping is a bisimulation;
the spec side must be the very graph the checker counts (manifest distinct states). The
kernel bug this check found (a stale "not found" raised a false K7 alert; fixed in the
kernel) is pinned: two workers at tier 2 conform, and the variant with the old behaviour
diverges exactly there. Trace validation must accept real kernel traces (harness random
walks and the simulator's traces) and reject hand-mutated ones with a readable first bad
step.
"""
from __future__ import annotations

import copy
import json
import pathlib
import random
import time

import pytest

from spec.conformance import bisim, harness, manifest, specgraph, trace

ROOT = pathlib.Path(__file__).resolve().parents[2]
BISIM_CONFIGS = ["MC_t1.cfg", "MC_t1q.cfg", "MC_t2.cfg", "MC_t3.cfg", "MC_t3_workers.cfg",
                 "MC_t2_workers.cfg", "MC_t3_world.cfg", "MC_t2_world.cfg", "MC_t2_redecide.cfg",
                 "MC_t1_prune.cfg"]


@pytest.mark.parametrize("cfg", BISIM_CONFIGS)
def test_kernel_is_bisimilar_to_the_spec(cfg: str) -> None:
    res = bisim.check(str(manifest.SPEC_DIR / cfg))
    assert res.ok, res.summary()
    assert res.spec_states == manifest.expected("Kernel.tla", cfg)["distinct_states"]
    assert res.kernel_states >= res.spec_states


def two_workers_tier2() -> dict:
    c = specgraph.read_constants(manifest.SPEC_DIR / "MC_t2_workers.cfg")
    c.update(MaxCrashes=0, MaxLoss=0)
    return c


def test_two_workers_late_lookup_conforms() -> None:
    """A 'not found' asked before the last resend is not evidence: no K7 alert (the kernel
    bug found by this check, fixed in kernel c613ea2)."""
    res = bisim.check(two_workers_tier2())
    assert res.ok, res.summary()


def test_the_kernel_before_the_fix_is_caught() -> None:
    """broken/LateLookupNoAskedAt.tla is the kernel before c613ea2: it alerts on any late
    'not found'; today's kernel diverges from it exactly at that LateLookup."""
    spec = manifest.SPEC_DIR / "broken" / "LateLookupNoAskedAt.tla"
    res = bisim.check(two_workers_tier2(), spec=spec)
    assert not res.ok
    assert res.divergence.kind == "kernel_step_not_in_spec"
    assert res.divergence.steps[0].startswith("LateLookup")
    assert "first divergence" in res.summary()


def test_divergence_is_reported_readably(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that forgets to wait out the claim is caught at its first early lookup."""
    import kernel.machine as machine
    real = machine.decide
    monkeypatch.setattr(machine, "decide", lambda e, *a: real(e._replace(claim_until=0), *a))
    res = bisim.check(str(manifest.SPEC_DIR / "MC_t2.cfg"))
    assert not res.ok
    text = res.divergence.explain()
    assert "Dispatch(1,1)" in text and "Lookup(1,1)" in text

# ---------------------------------------------------------------- trace validation


def walks(cfg: str, n: int, length: int = 40, seed: int = 7) -> list[list[dict]]:
    p = harness.Params.from_constants(specgraph.read_constants(manifest.SPEC_DIR / cfg))
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        w, steps = harness.initial(p), []
        for _ in range(length):
            label, w, rec = rng.choice(harness.moves_with_steps(p, w))
            if rec is not None:
                steps.append(rec)
        out.append(steps)
    return out


@pytest.mark.parametrize("cfg", ["MC_t1_prune.cfg", "MC_t1q_world.cfg", "MC_t2_world.cfg",
                                 "MC_t3_world.cfg", "MC_t2_redecide.cfg"])
def test_trace_validation_accepts_kernel_runs(cfg: str) -> None:
    for steps in walks(cfg, 60):
        res = trace.validate_trace(steps)
        assert res.ok, res.explanation
        assert res.steps == len(steps)


def test_trace_validation_accepts_two_workers() -> None:
    for steps in walks("MC_t2_workers.cfg", 80):
        res = trace.validate_trace(steps)
        assert res.ok, res.explanation


def sim_traces() -> list[dict]:
    files = sorted((ROOT / "results" / "traces").glob("*__kernel__*.json"))
    return [json.loads(f.read_text()) for f in files]


def test_trace_validation_accepts_simulator_traces() -> None:
    docs = sim_traces()
    if not docs:
        pytest.skip("no simulator traces under results/traces")
    for doc in docs:
        verdict = trace.check(doc)
        assert verdict["valid"], (doc["id"], verdict["anomalies"])


SCRIPT = ["Propose", "Authorize", "Dispatch", "Deliver", "Ack", "Propose", "Authorize",
          "Dispatch", "LoseReq", "Tick", "Tick", "Lookup", "Recover"]


def scripted(cfg: str, labels: list[str]) -> list[dict]:
    """The kernel steps of the run that takes, in turn, the first move named by each label."""
    consts = specgraph.read_constants(manifest.SPEC_DIR / cfg)
    consts["Keys"] = {1, 2}
    p = harness.Params.from_constants(consts)
    w, steps = harness.initial(p), []
    for label in labels:
        _, w, rec = next(m for m in harness.moves_with_steps(p, w)
                         if m[0].startswith(label) and m[1].key() != w.key())
        steps += [rec] if rec is not None else []
    return steps


def a_walk_with(kind: str) -> list[dict]:
    return scripted("MC_t2.cfg", SCRIPT)


def mutate(steps: list[dict], kind: str, change) -> list[dict]:
    steps = list(steps)
    i = next(i for i, s in enumerate(steps)
             if type(s["event"]).__name__ == kind and s["after"] != s["before"])
    steps[i] = dict(steps[i], after=change(steps[i]["after"]))
    return steps


@pytest.mark.parametrize("kind,change", [
    ("Dispatch", lambda e: e._replace(claim_until=e.claim_until + 1)),
    ("Recover", lambda e: e._replace(attempts=e.attempts + 1)),
    ("Authorize", lambda e: e._replace(state=type(e.state)("DISPATCHED"))),
    ("Ack", lambda e: e._replace(executed=type(e.executed)("unknown"))),
])
def test_trace_validation_rejects_mutated_steps(kind: str, change) -> None:
    steps = mutate(a_walk_with(kind), kind, change)
    res = trace.validate_trace(steps)
    assert not res.ok
    assert f"step {res.index}: {kind}" in res.explanation and "allows" in res.explanation


def journal_of(doc_id: str) -> list[dict]:
    docs = [d for d in sim_traces() if d["id"] == doc_id]
    if not docs:
        pytest.skip(f"simulator trace {doc_id} not found")
    return copy.deepcopy(docs[0]["journal"])


def test_trace_validation_rejects_mutated_journals() -> None:
    entries = journal_of("crash-before-send__kernel__t2")
    assert trace.validate_journal(entries).ok
    resend = next(e for e in entries if e["kind"] == "DISPATCHED" and e["phase"] == "recovery")
    resend["lookup"]["found"] = True  # resent although the lookup found it
    res = trace.validate_journal(entries)
    assert not res.ok and "DISPATCHED" in res.explanation
    entries = journal_of("lease-revoked-during-outage__kernel__t2")
    refused = next(e for e in entries if e["kind"] == "REFUSED")
    refused["checks"]["lease"]["live"] = True
    refused["checks"]["stale"] = []
    res = trace.validate_journal(entries)
    assert not res.ok and "REFUSED" in res.explanation


def test_trace_validation_is_fast() -> None:
    runs = walks("MC_t2_world.cfg", 100)
    for steps in runs[:5]:
        trace.validate_trace(steps)  # compile the model once
    before = trace._model.cache_info()
    started = time.process_time()
    for steps in runs:
        trace.validate_trace(steps)
    per_step = (time.process_time() - started) / sum(len(s) for s in runs)
    after = trace._model.cache_info()
    assert after.misses == before.misses and after.hits >= before.hits + len(runs), \
        f"the spec was compiled again: {before} then {after}"
    assert per_step < 0.02, f"{per_step * 1e6:.0f} us of CPU per step"  # a compile is ~0.2 s
