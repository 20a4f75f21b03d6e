"""The coding judge shares no code with what it judges.

Three checks. Statically: ``sim/coding/judge.py`` imports neither the systems (their patch
merge, their drivers) nor the kernel's decision code (the same walk as the refund judge's
test). At run time: after seeded runs of every system, the merge and the kernel's replay are
replaced by functions that raise, and judging the same runs again gives the same verdicts.
Planted: the systems' merge loses the line break before an added definition, so every
added function breaks its file; the kernel's verification then refuses the change, and the
judge, reading the patch its own way, reports a change refused for no reason, where a judge
that used the systems' merge would have found the run clean.
Reproduce: python3 -m pytest tests/coding/test_coding_judge.py
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

import kernel
from sim.coding import judge, model, sweep
from sim.coding.registry import SYSTEM_NAMES, SYSTEMS
from sim.coding.story import CodingPlan, simulate
from tests.sim.test_sim_judge_independent import offences

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS_CODE = {"sim.coding.model", "sim.coding.systems", "sim.coding.kernel_system",
                "sim.coding.registry", "sim.coding.real", "faults.systems", "kernel.view"}


def test_the_judge_imports_no_merge_and_no_decision_code() -> None:
    bad, deps = offences(ROOT / "sim" / "coding" / "judge.py")
    assert not bad, bad
    assert not deps & SYSTEMS_CODE, sorted(deps & SYSTEMS_CODE)


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the judge called code it judges")


def test_verdicts_stand_with_the_merge_and_the_replay_poisoned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = [simulate(sweep.plan_from_seed(seed), SYSTEMS[s], seed)
            for seed in range(6) for s in SYSTEM_NAMES]
    before = [judge.judge(r) for r in runs]
    machine, receipts = (importlib.import_module(f"kernel.{m}") for m in ("machine", "receipts"))
    for target, name in ((model, "merge"), (model, "merge_one"), (machine, "replay"),
                         (receipts, "receipts"), (kernel, "receipts"), (kernel, "replay")):
        monkeypatch.setattr(target, name, _raise)
    assert [judge.judge(r) for r in runs] == before
    assert any(v["lost"] for v in before) and any(v["harms"] for v in before)


def _glued(text: str | None, op: dict[str, Any]) -> str | None:
    """The planted bug: an added definition is glued to the file's last line."""
    if op["op"] == "add" and text:
        return text.rstrip("\n") + op["code"]
    return PLAIN(text, op)


PLAIN = model.merge_one
ALONE = CodingPlan("post_url alone", (("post_url", 0),))


def test_a_broken_systems_merge_is_caught_as_a_change_refused_for_no_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clean = judge.judge(simulate(ALONE, SYSTEMS["kernel"], 1))
    assert clean["ok"] and clean["landed"] == ["post_url"]
    monkeypatch.setattr(model, "merge_one", _glued)
    run = simulate(ALONE, SYSTEMS["kernel"], 1)
    assert "verification_failed" in run.jobs[0].outcome
    verdict = judge.judge(run)
    assert verdict["lost"] == ["post_url"] and not verdict["ok"], verdict
    # a judge that reads the patch with the systems' merge shares the bug and misses it
    monkeypatch.setattr(judge, "expected", lambda tree, ops: {
        **tree, **{p: t for p, t in model.merge(tree, list(ops)).items() if t is not None}})
    assert judge.judge(run)["ok"]
