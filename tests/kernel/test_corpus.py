"""The mutation corpus: every operator applies, stays semantic, and every mutant is flagged.

The sources are the kernel's fixed-table runs (every catalogue fault at every tier). A
mutant must pass the integrity layer (so only a judge of behaviour can catch it), the
operators must be deterministic and leave their input alone, the independent invariant
layer alone must catch every mutant of the operators that change behaviour, and the
oracle with all its layers must catch every mutant of every operator. Reproduce a miss with
``python -m sim.corpus --operator NAME --missed 99``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernel import mutations
from kernel.journal import render, verify
from sim import corpus

ROOT = Path(__file__).resolve().parents[2]
# Operators whose mutants change what was done (sent, applied, settled, refused), not only
# a derived field: the invariant layer, which shares no code with the kernel, catches them.
BEHAVIOURAL = ("dead_lease_recorded_live", "hidden_stale_facts", "renumbered_attempt",
               "resend_inside_claim", "ambiguous_inside_window", "resend_where_unsafe",
               "lookup_after_entry", "swapped_payload", "rebound_payload",
               "rejected_own_payload", "ack_of_unsent_attempt", "apply_before_dispatch",
               "settled_without_application", "committed_without_application",
               "applied_after_commit")


@pytest.fixture(scope="module")
def sources() -> list[corpus.Source]:
    return list(corpus.sources())


@pytest.fixture(scope="module")
def made(sources: list[corpus.Source]) -> dict[str, list[tuple[str, mutations.Mutant]]]:
    out: dict[str, list[tuple[str, mutations.Mutant]]] = {n: [] for n in mutations.OPERATORS}
    for src in sources:
        for m in mutations.mutants(src.entries, src.history):
            out[m.operator].append((src.name, m))
    return out


def test_the_sources_are_every_fault_at_every_tier_and_valid(
        sources: list[corpus.Source]) -> None:
    assert len(sources) == 15 * 4
    assert all(corpus.caught_by(s.entries, s.history) is None for s in sources)


@pytest.mark.parametrize("name", sorted(mutations.OPERATORS))
def test_each_operator_makes_mutants_and_says_why(made: dict[str, Any], name: str) -> None:
    assert made[name], f"{name} found no site in any fixed-table journal"
    doc = mutations.OPERATORS[name].__doc__ or ""
    assert "kernel" in doc, f"{name}'s docstring must say why the kernel cannot write it"


def test_every_mutant_passes_the_integrity_layer(made: dict[str, Any]) -> None:
    for name, pairs in made.items():
        for src, m in pairs:
            verdict = verify(render(m.entries))
            assert verdict.valid is True, (name, src, m.site, verdict.anomalies[:1])


def test_the_operators_are_deterministic_and_leave_their_input_alone(
        sources: list[corpus.Source]) -> None:
    src = next(s for s in sources if s.name == "crash before ack/t2")
    before = json.dumps([src.entries, src.history], sort_keys=True)
    first = list(mutations.mutants(src.entries, src.history))
    again = list(mutations.mutants(src.entries, src.history))
    assert first == again and first
    assert json.dumps([src.entries, src.history], sort_keys=True) == before


@pytest.mark.parametrize("name", BEHAVIOURAL)
def test_the_independent_layer_alone_catches_behavioural_mutants(
        made: dict[str, Any], name: str) -> None:
    missed = [f"{src}: {m.site}" for src, m in made[name]
              if not corpus.independent(m.entries, m.history)]
    assert not missed, f"{name}: kernel.invariants missed {missed[:5]}"


@pytest.mark.parametrize("journal_only", [False, True], ids=["with record", "journal only"])
def test_the_oracle_flags_every_mutant(sources: list[corpus.Source], journal_only: bool) -> None:
    scores = corpus.score(sources, journal_only=journal_only)
    low = {name: f"{s.caught}/{s.made}, e.g. {s.missed[:2]}" for name, s in scores.items()
           if s.caught < s.made}
    assert not low, f"the oracle missed mutants (python -m sim.corpus --missed 99): {low}"


def test_the_command_line_prints_the_score_per_operator() -> None:
    out = subprocess.run([sys.executable, "-m", "sim.corpus", "--operator", "swapped_payload"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "swapped_payload" in out.stdout and "100.0%" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "sim.corpus", "--seeds", "-1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 254 and "Traceback" not in bad.stderr
