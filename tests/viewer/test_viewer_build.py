"""viewer/build.py on a tiny results folder (conftest.py), from runs the simulator makes now.

How it works. The tiny folder holds two fixed-table runs (the kernel and naive retry on "crash
before ack" at tier 1), a three-line sweep file using both documented cell shapes, and two
traced sweep cells, all written the way run_all.py writes them (sim/TRACES.md). build.main()
must turn that into traces.js and sweep.js whose data agree with the runs: the money moved adds
up to what the run says was refunded, the receipts after the last journal entry are the run's
receipts, and the state diagram is exactly kernel.edges(). Same input, same bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kernel
from viewer import build

ROOT = Path(__file__).resolve().parents[2]


def _data(text: str, name: str) -> dict:
    prefix = f"window.{name} = "
    body = text.split("\n", 1)[1]
    assert body.startswith(prefix) and body.endswith(";\n")
    return json.loads(body[len(prefix):-2])


def _added(text: str) -> dict:
    """The value a ``(window.X = window.X || {})[key] = value;`` file adds."""
    body = text.split("\n", 1)[1]
    assert body.endswith(";\n")
    return json.loads(body.split("] = ", 1)[1][:-2])


def _fault_runs(folder: Path, data: dict) -> dict:
    runs: dict = {}
    for name in data["fault_files"].values():
        runs.update(_added((folder / name).read_text(encoding="utf-8")))
    return runs


def test_build_writes_data_that_agrees_with_the_runs(tiny_results: Path, tmp_path: Path):
    out = tmp_path / "viewer" / "traces.js"
    assert build.main(tiny_results, out) == 0
    data = _data(out.read_text(encoding="utf-8"), "VIEWER_DATA")
    assert data["warnings"] == []
    assert "runs" not in data, "the first screen loads one fault's runs, not all"
    assert data["fault_files"] == {"crash before ack": "faults/crash-before-ack.js"}
    runs = _fault_runs(out.parent, data)
    assert sorted(runs) == sorted(f"crash-before-ack__{s}__t1" for s in ("kernel", "naive"))
    for run in runs.values():
        source = json.loads((tiny_results / "traces" / f"{run['id']}.json").read_text())
        assert run["events"] == source["events"]
        assert len(run["money"]) == len(run["events"])
        assert run["money"][-1] == source["refunded"]
    k = runs["crash-before-ack__kernel__t1"]
    assert k["receipt_steps"], "a kernel run must carry receipts per journal entry"
    assert k["receipt_steps"][-1][1] == k["receipts"]
    assert [s[1][0]["final"] for s in k["receipt_steps"]][-1] == "COMMITTED"
    assert runs["crash-before-ack__naive__t1"]["receipt_steps"] == []
    assert data["diagram"]["edges"] == [list(e) for e in kernel.edges()]
    ids = {n["id"] for n in data["diagram"]["nodes"]}
    assert ids == {"(new)"} | {s.value for s in kernel.State}
    assert len(data["rows"]) == 2


def test_sweep_cells_in_both_shapes_decode_the_same_way(tiny_results: Path, tmp_path: Path):
    out = tmp_path / "traces.js"
    build.main(tiny_results, out)
    sweep = _data((tmp_path / "sweep.js").read_text(encoding="utf-8"), "VIEWER_SWEEP")
    codes = sweep["codes"]
    assert sweep["columns"] == ["kernel/t1", "naive/t1"]  # from the first case
    seeds = [c[0] for c in sweep["cases"]]
    assert seeds == [0, 1, 17]
    naive0 = sweep["cases"][0][3][1]
    assert naive0[0] == 40 and codes[naive0[1]] == "2 applied"
    assert codes[naive0[2]] == ["duplicate"] and naive0[3] == 1180
    kernel1 = sweep["cases"][1][3][0]
    assert codes[kernel1[1]] == "COMMITTED (acked)" and codes[kernel1[4]] == {"world_race": True}
    assert codes[sweep["cases"][0][3][0][4]] == {"oracle": True}


def test_traced_sweep_cells_ship_in_their_own_file(tiny_results: Path, tmp_path: Path):
    build.main(tiny_results, tmp_path / "traces.js")
    sweep = _data((tmp_path / "sweep.js").read_text(encoding="utf-8"), "VIEWER_SWEEP")
    traced = _data((tmp_path / "sweep_traces.js").read_text(encoding="utf-8"),
                   "VIEWER_SWEEP_TRACES")
    assert sweep["traced"] == ["17|kernel|t3", "17|naive|t3"]
    assert sorted(traced["runs"]) == sweep["traced"]
    k = traced["runs"]["17|kernel|t3"]
    source = json.loads((tiny_results / "traces" / "sweep" / "17__kernel__t3.json").read_text())
    assert k["events"] == source["events"] and k["money"][-1] == source["refunded"]
    assert k["receipt_steps"][-1][1] == source["receipts"]


def test_same_results_give_the_same_bytes(tiny_results: Path, tmp_path: Path):
    a, b = tmp_path / "a" / "traces.js", tmp_path / "b" / "traces.js"
    build.main(tiny_results, a)
    build.main(tiny_results, b)
    names = sorted(str(p.relative_to(a.parent)) for p in a.parent.rglob("*.js"))
    assert "replays/s0000.js" in names and "faults/crash-before-ack.js" in names
    assert names == sorted(str(p.relative_to(b.parent)) for p in b.parent.rglob("*.js"))
    for name in names:
        first = (a.parent / name).read_bytes()
        assert first == (b.parent / name).read_bytes()
        assert str(tiny_results).encode() not in first, "no absolute paths in the data"


def test_missing_results_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture):
    assert build.main(tmp_path / "nowhere", tmp_path / "traces.js") == 2
    err = capsys.readouterr().err
    assert "run `python run_all.py` first" in err and "Traceback" not in err
    assert not (tmp_path / "traces.js").exists()


@pytest.mark.parametrize("argv", [["viewer/build.py"], ["-m", "viewer.build"]])
def test_command_line_help(argv: list[str]):
    res = subprocess.run([sys.executable, *argv, "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "--results" in res.stdout and "--out" in res.stdout


def test_failing_sweep_runs_replay_from_their_seeds_into_compact_chunks(tiny_results: Path,
                                                                       tmp_path: Path):
    """Seed 17's naive/t3 run fails in the tiny sweep: its compact timeline, decoded, is the
    simulator's own run (sim.sweep.replay), and the kernel beside it is there too."""
    from sim import sweep as simsweep

    build.main(tiny_results, tmp_path / "traces.js", jobs=1)
    index = _data((tmp_path / "sweep_traces.js").read_text(encoding="utf-8"),
                  "VIEWER_SWEEP_TRACES")["replays"]
    chunk = _added((tmp_path / index["files"]["0"]).read_text(encoding="utf-8"))
    keys = set(chunk["runs"]) | set(chunk["same"])
    assert {"17|naive|t3", "17|kernel|t3", "0|naive/t1".replace("/", "|")} <= keys
    row = chunk["runs"][chunk["same"].get("17|naive|t3", "17|naive|t3")]
    codes = chunk["codes"]
    flat = row[0]
    times = flat[0::2]
    events = [dict(codes[c], t=t) for t, c in zip(times, flat[1::2], strict=True)]
    want = simsweep.replay(17, "naive", "t3")
    assert [(e["t"], e["actor"], e["kind"], e["label"]) for e in events] == \
        [(e["t"], e["actor"], e["kind"], e["label"]) for e in want["events"]]
    assert row[5][0] == want["refunded"] and codes[row[5][2]] == want["reasons"]


def test_coding_cells_read_the_file_sim_coding_writes() -> None:
    """``sim.coding`` writes ``{"scenario", "seed", "traces": [...]}``; every one of its cells
    reaches the viewer with its events and journal (an empty list here once hid the whole
    coding-agents section's content while the section itself still showed)."""
    doc = {"scenario": "coding", "seed": 1, "traces": [
        {"id": "kernel/rename_break", "row": "rename_break", "guarantee": "G4",
         "system": "kernel", "harms": [], "lost": False, "outcomes": {"c1": "REFUSED"},
         "events": [{"t": 0, "actor": "agent", "kind": "submit", "label": "change c1"}],
         "journal": [{"seq": 0, "kind": "PROPOSED"}]}]}
    cells = build.coding_cells(doc)
    assert [c["id"] for c in cells] == ["kernel/rename_break"]
    assert cells[0]["events"] == doc["traces"][0]["events"]
    assert cells[0]["journal"] == doc["traces"][0]["journal"]
    committed = ROOT / "results" / "coding" / "coding_traces.json"
    if committed.exists():  # the committed data: one viewer cell per traced cell, none empty
        real = json.loads(committed.read_text(encoding="utf-8"))
        cells = build.coding_cells(real)
        assert len(cells) == len(real["traces"]) > 0
        assert all(c["events"] for c in cells)
