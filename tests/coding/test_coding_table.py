"""The coding fixed table: the kernel holds all 13 rows, the original's two failures are
reproduced, the simulated and the real repository agree, and each planted bug is caught.
Replay any cell: python -m sim.coding --row ROW --system SYSTEM."""

from __future__ import annotations

import pytest

from gate.repo import Repo
from kernel import symbols
from sim.coding import __main__ as cli
from sim.coding import kernel_system, real, sweep, table
from sim.coding.registry import SYSTEMS

HOW = "python -m sim.coding --row {} --system {}"


@pytest.mark.parametrize("row", list(table.ROWS))
def test_kernel_holds_every_row(row):
    r = table.run_cell((row, "kernel"), trace=False)
    assert r["verdict"] == "ok", f"{r['harms']} {r['lost']}; replay: {HOW.format(row, 'kernel')}"


def test_the_originals_two_failures_are_reproduced_and_beaten():
    reformat = table.run_cell(("benign_reformat", "filehash"), trace=False)
    assert reformat["verdict"] == "FAIL" and reformat["lost"] == ["post_url"]
    semantic = table.run_cell(("semantic_only", "symbol"), trace=False)
    assert semantic["verdict"] == "FAIL" and "broken_tree" in semantic["harms"]
    for row in ("benign_reformat", "semantic_only"):
        assert table.run_cell((row, "kernel"), trace=False)["verdict"] == "ok"
    for system in ("filehash", "symbol"):
        for row, (group, _) in table.ROWS.items():
            if group == "original":
                assert table.run_cell((row, system), trace=False)["matches_reference"], \
                    HOW.format(row, system)


def test_naive_and_advisory_fail_the_rows_coordination_is_for():
    for system in ("naive", "advisory"):
        for row in ("rename_break", "duplicate_work", "crash_before_commit"):
            assert table.run_cell((row, system), trace=False)["verdict"] == "FAIL"


def _name_and_arity(node):
    args = getattr(node, "args", None)
    return f"{getattr(node, 'name', '?')}/{len(args.args) if args else 0}"


def test_planted_name_and_arity_digest_lets_semantic_only_through(monkeypatch):
    monkeypatch.setattr(symbols, "normalised", _name_and_arity)
    r = table.run_cell(("semantic_only", "kernel"), trace=False)
    assert r["verdict"] == "FAIL" or "verification_failed" in str(r["outcomes"])


def test_planted_no_fencing_lets_the_stale_write_land(monkeypatch):
    monkeypatch.setattr(SYSTEMS["kernel"], "fencing", False)
    r = table.run_cell(("stale_owner_late_write", "kernel"), trace=False)
    assert "stale_owner_write" in r["harms"]


def test_planted_no_image_journal_leaves_a_half_change(monkeypatch):
    plain = kernel_system.payload_of
    monkeypatch.setattr(kernel_system, "payload_of",
                        lambda unit, change, **kw: plain(unit, change, journaled=False))
    r = table.run_cell(("coordinator_killed_mid_change", "kernel"), trace=False)
    assert r["verdict"] == "FAIL"


def test_planted_judge_that_never_runs_tests_would_miss_the_rename(monkeypatch):
    from sim.coding import judge
    monkeypatch.setattr(judge, "tests_pass", lambda files: True)
    assert table.run_cell(("rename_break", "naive"), trace=False)["verdict"] == "ok"


def test_real_repository_with_real_pytest_agrees_with_the_simulation():
    cells = [("coordinator_killed_mid_change", "kernel"), ("semantic_only", "symbol")]
    sim = [table.run_cell(c, trace=False) for c in cells]
    rows, diffs = real.compare(sim, Repo, cells)
    assert not diffs, diffs
    assert [r["verdict"] for r in rows] == ["ok", "FAIL"]


def test_sweep_kernel_has_no_harm_and_is_deterministic():
    records = [sweep.case(seed) for seed in range(20)]
    assert records == [sweep.case(seed) for seed in range(20)]
    summary = sweep.summarize(records)
    kernel = summary["systems"]["kernel"]
    assert kernel["harmed"] == 0, summary["replay"].get("kernel")
    assert summary["systems"]["naive"]["harmed"] > 15


def test_cli_usage_errors_are_one_line(capsys):
    assert cli.main(["--row", "nope", "--system", "kernel"]) == 2
    assert cli.main(["--replay", "1", "--system", "nobody"]) == 2
    assert cli.main(["--real", "--cases", "0"]) == 2  # the real target comes from run_all.py
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "Traceback" not in err and "run_all.py --coding" in err
