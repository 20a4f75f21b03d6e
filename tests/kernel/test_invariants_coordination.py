"""The independent judges of G1, G2, G5, G6 (limited), G7 and G8 catch bugs planted in the
kernel's coordination code, and pass what the unmodified kernel writes.

How it works. As in test_invariants_independent, the kernel package is copied once per
planted bug and one bug is patched into the copy (machine.py or view.py). A subprocess puts
each copy first on the import path and drives it through the six coordination scenarios of
``tests.kernel.coordinated``, whose target applies every request and records its fencing
token, so a stale owner's write is visible in its record. This process
judges the journals and records with the real ``kernel.invariants.check``: the unmodified
copy must pass everything, each bug must be flagged with the guarantee it breaks. A few
hand-made journals pin that refund journals are judged as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kernel as k
from kernel import invariants
from tests.kernel.planted import drive, flagged
from tests.kernel.test_coordination import PLAN, Bus, admitted, unit

ROOT = Path(__file__).resolve().parents[2]

# name -> (file, text in the kernel's code, replacement, guarantees it must be flagged with)
BUGS: dict[str, tuple[str, str, str, set[str]]] = {
    "a claim granted over a live claim": (
        "machine.py", "    if blocking:\n", "    if False:\n", {"G2"}),
    "reservation not checked against the cap": (
        "machine.py", '"ok": reserved + c.cost <= cap}', '"ok": True}', {"G7"}),
    "a stale plan version accepted at dispatch": (
        "machine.py", '    if "plan" in unit and not unit["plan"]["ok"]:',
        '    if "plan" in unit and not unit["plan"]["ok"] and "claim" not in unit:', {"G8"}),
    "commit on ack although verification is required": (
        "machine.py", '    if _verifies(effect):\n        return _landed(effect, ev.now, "ack"',
        '    if False:\n        return _landed(effect, ev.now, "ack"', {"G5"}),
    "claim not re-checked at dispatch": (
        "machine.py", '"live": now < admission["until"]}', '"live": True}', {"G2"}),
    "read overlaps not re-checked": (
        "machine.py", '{"moved": sorted({e for e in overlaps.values() if e in view.moved})}',
        '{"moved": []}', {"G6"}),
    "a commit releases the reservation": (
        "view.py", "        elif effect.state is State.REFUSED and effect.executed is "
        "Executed.FALSE:", "        if effect.state.final:", {"G7"}),
    "the token is not the admission's seq": (
        "machine.py", '"token": ev.seq,', '"token": ev.seq + 1,', {"G1"}),
}

DRIVER = r"""
import json, sys
for copy in sys.argv[1:]:
    for name in [m for m in sys.modules if m.split('.')[0] in ('kernel', 'tests')]:
        del sys.modules[name]
    sys.path.insert(0, copy)
    import kernel as k
    from tests.kernel.coordinated import run_all
    assert k.__file__.startswith(copy), k.__file__
    cells = run_all(k)
    for cell in cells:
        own = k.oracle.check(cell['entries'], history=cell['history'], complete=True)
        cell['own_oracle'] = [own.valid, [a.get('invariant') for a in own.anomalies]]
    print(json.dumps({'copy': copy, 'cells': cells}))
    sys.path.remove(copy)
"""


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """bug name (or "unmodified") -> the scenarios a kernel copy with that bug wrote."""
    return drive(tmp_path_factory.mktemp("planted_coord"), BUGS, DRIVER)


def _flagged(cells: list[dict[str, Any]]) -> dict[str, list[str]]:
    return flagged(cells, lambda cell: cell["scenario"])


def test_the_unmodified_kernels_coordinated_journals_pass(journals: dict[str, Any]) -> None:
    cells = journals["unmodified"]
    assert len(cells) == 6 and all(c["entries"] for c in cells)
    assert _flagged(cells) == {}
    kinds = {(c["scenario"], e["kind"], e.get("reason")) for c in cells for e in c["entries"]}
    for seen in [("budget", "REFUSED", "over_budget"), ("plan", "REFUSED", "plan_superseded"),
                 ("stale_owner", "REFUSED", "claim_expired"), ("verify", "LANDED", None),
                 ("overlap", "REFUSED", "read_overlap_moved")]:
        assert seen in kinds, f"the scenario no longer exercises {seen}"


@pytest.mark.parametrize("name", sorted(BUGS))
def test_each_planted_bug_is_flagged_with_its_guarantee(journals: dict[str, Any],
                                                        name: str) -> None:
    found = _flagged(journals[name])
    expected = BUGS[name][3]
    assert expected <= set(found), (
        f"planted bug '{name}' not flagged as {sorted(expected)}: flagged {sorted(found)}; "
        f"reproduce: python3 -m pytest tests/kernel/test_invariants_coordination.py -k "
        f"\"{name}\"")
    for g in expected:
        assert all(x.split(": ", 1)[1].startswith("line ") or " h" in x for x in found[g])


def test_the_judges_import_nothing_from_the_kernel() -> None:
    text = (ROOT / "kernel" / "invariants.py").read_text(encoding="utf-8")
    assert "import kernel" not in text and "from kernel" not in text


def test_refund_journals_meet_no_coordination_judge() -> None:
    bus = Bus()
    refund = [{"seq": 0, "kind": "PROPOSED", "effect_id": "e1", "ts": 0, "payload": {}},
              {"seq": 5, "kind": "COMMITTED", "effect_id": "e1", "ts": 1, "via": "ack"}]
    assert not [v for v in invariants.check(refund) if v.invariant.startswith("G")]
    a = admitted(bus, unit("a", writes=("x",)))
    assert bus.entries and a
    assert invariants.check(bus.entries) == []


def test_hand_edited_coordinated_journals_are_caught() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=20, cap=30, verify=True))
    bus.dispatch(a, 2)
    entries = [dict(e) for e in bus.entries]
    b = unit("b", writes=("x",), cost=20, cap=30)
    entries.append({**entries[0], "seq": 3, "effect_id": b.effect_id,
                    "coordination": b.coordination.as_json() if b.coordination else None})
    entries.append({**entries[1], "seq": 4, "effect_id": b.effect_id, "ts": 3,
                    "admission": {"token": 4, "until": 60_003, "overlaps": {}}})
    entries.append({"seq": 5, "kind": "COMMITTED", "effect_id": a, "ts": 4, "via": "ack",
                    "attempt": 1})
    history = [{"op": "apply", "effect_id": b.effect_id, "ts": 3, "token": 4},
               {"op": "apply", "effect_id": a, "ts": 4, "token": 1}]
    found = {(v.invariant, v.type) for v in invariants.check(entries, history)}
    assert {("G2", "claim_over_live_claim"), ("G7", "reserved_over_cap"),
            ("G5", "committed_unverified"), ("G2", "stale_token_write")} <= found, found


# ---------------------------------------------------------------- coordination mutants

OPERATOR_GUARANTEE = {
    "claim_outlives_admission": "G2", "reservation_above_cap": "G7",
    "committed_unverified": "G5", "dispatch_under_newer_plan": "G8", "token_not_seq": "G1",
    "claim_expired_at_dispatch": "G2", "read_of_moved_item": "G6", "stale_token_write": "G2",
}


@pytest.fixture(scope="module")
def coordinated() -> list[dict[str, Any]]:
    import kernel
    from tests.kernel.coordinated import run_all

    return run_all(kernel)


@pytest.mark.parametrize("operator", sorted(OPERATOR_GUARANTEE))
def test_each_coordination_mutant_is_flagged_by_the_independent_layer(
        coordinated: list[dict[str, Any]], operator: str) -> None:
    from kernel import mutations

    assert set(OPERATOR_GUARANTEE) == set(mutations.COORDINATION)
    made = 0
    for cell in coordinated:
        assert invariants.check(cell["entries"], cell["history"], complete=True) == []
        for m in mutations.mutants(cell["entries"], cell["history"], [operator]):
            made += 1
            found = {v.invariant for v in invariants.check(m.entries, m.history, complete=True)}
            assert OPERATOR_GUARANTEE[operator] in found, (
                f"{cell['scenario']} {m.site}: {operator} flagged {sorted(found)}; reproduce: "
                f"python3 -m tests.kernel.coordinated")
    assert made, f"{operator} made no mutant of the coordinated scenarios"


def test_the_oracle_accepts_the_sources_and_flags_every_coordination_mutant(
        coordinated: list[dict[str, Any]]) -> None:
    from kernel import mutations, oracle

    for cell in coordinated:
        assert oracle.check(cell["entries"], history=cell["history"],
                            complete=True).valid is True, cell["scenario"]
        for m in mutations.mutants(cell["entries"], cell["history"],
                                   list(mutations.COORDINATION)):
            verdict = oracle.check(m.entries, history=m.history, complete=True)
            assert verdict.valid is False, f"{cell['scenario']} {m.operator} {m.site}"


def test_coordination_operators_leave_refund_journals_alone() -> None:
    from faults.plans import CATALOGUE
    from faults.systems import SYSTEMS
    from kernel import mutations
    from sim.world import simulate

    for plan in list(CATALOGUE.values())[:4]:
        run = simulate(plan, SYSTEMS["kernel"], "t2", 1)
        entries = [e for e in run.disk.entries if e is not None]
        assert entries
        assert list(mutations.mutants(entries, list(run.history),
                                      list(mutations.COORDINATION))) == []


def test_a_unit_refused_for_a_check_that_held_is_k10(coordinated: list[dict[str, Any]]) -> None:
    for cell in coordinated:
        for i, e in enumerate(cell["entries"]):
            if e["kind"] != "REFUSED" or e.get("reason") not in invariants.UNIT_REASONS:
                continue
            for other in invariants.UNIT_REASONS:
                if other == e["reason"]:
                    continue
                entries = [dict(x) for x in cell["entries"]]
                entries[i]["reason"] = other
                found = {v.type for v in invariants.check(entries, cell["history"])}
                assert "unit_refused_without_cause" in found, (cell["scenario"], other)


# ---------------------------------------------------------------- drivers that break G1-G8


class StaleBus(Bus):
    """A driver that decides on an empty view (no conditional append, no fold)."""

    def authorize(self, eid, now, facts=None, plan=PLAN):
        return self.run(k.Authorize(now, k.Lease("L1", 10**9), facts or {"a.py": "d0"},
                                    k.View(), plan, self.chain.seq), eid)

    def dispatch(self, eid, now, facts=None, plan=PLAN):
        return self.run(k.Dispatch(now, k.Lease("L1", 10**9), facts or {"a.py": "d0"},
                                   k.View(), plan), eid)


def breaches(bus: Bus) -> list[str]:
    return [v.invariant for v in invariants.check_units(bus.entries)]


def test_the_kernel_driven_on_the_folded_view_breaks_nothing() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", writes=("x",), cost=10, cap=20, verify=True))
    b = bus.propose(unit("b", writes=("x",), cost=10, cap=20))
    bus.authorize(b, 2)  # blocked
    r = admitted(bus, unit("r", writes=("y",), reads=("x",), cost=10, cap=20), now=3)
    bus.dispatch(a, 4)
    bus.dispatch(r, 5)  # refused: the writer it overlapped was sent
    bus.run(k.Ack(6, 1), a)
    bus.run(k.Verification(7, "passed"), a)
    bus.authorize(b, 8)
    assert breaches(bus) == []


def test_a_stale_view_is_caught_as_g2_g6_g7() -> None:
    bus = StaleBus()
    a = admitted(bus, unit("a", writes=("x",), cost=10, cap=10))
    b = admitted(bus, unit("b", writes=("x",), reads=("y",), cost=10, cap=10))
    r = admitted(bus, unit("r", writes=("z",), reads=("x",)))
    bus.dispatch(a, 2)
    bus.dispatch(r, 3)
    assert {"G2", "G6", "G7"} <= set(breaches(bus)), breaches(bus)
    assert b


def test_a_superseded_plan_is_caught_as_g8() -> None:
    bus = StaleBus()
    old = admitted(bus, unit("old", writes=("x",), version=1))
    bus.propose(unit("new", writes=("y",), version=2))  # the plan moved on
    bus.dispatch(old, 3)  # the driver still reports version 1
    assert breaches(bus) == ["G8"]


def test_an_edited_token_or_an_unverified_commit_is_caught() -> None:
    bus = Bus()
    a = admitted(bus, unit("a", verify=True))
    bus.dispatch(a, 2)
    bus.run(k.Ack(3, 1), a)
    entries = [dict(e) for e in bus.entries]
    entries[1]["admission"] = {**entries[1]["admission"], "token": 0}
    entries.append({"kind": "COMMITTED", "effect_id": a, "seq": len(entries), "ts": 4,
                    "via": "ack"})
    assert [v.invariant for v in invariants.check_units(entries)] == ["G1", "G5"]


def test_a_read_overlap_refused_at_admission_is_judged_at_that_instant() -> None:
    bus = Bus()
    writer = admitted(bus, unit("w", writes=("x",)))
    bus.dispatch(writer, 2)
    reader = bus.propose(unit("r", writes=("y",), reads=("x",)), 3)
    bus.authorize(reader, 3)  # the writer of what it reads was sent: refused at once
    assert bus.entries[-1]["kind"] == "REFUSED"
    assert bus.entries[-1]["reason"] == "read_overlap_moved"
    assert invariants.check_units(bus.entries) == []
    unsent = [{**e, "seq": n} for n, e in enumerate(x for x in bus.entries
                                                    if x["kind"] != "DISPATCHED")]
    assert [v.type for v in invariants.check_units(unsent)] == ["unit_refused_without_cause"]
