"""viewer/build.py on a tiny results folder built here, from runs the simulator makes now.

How it works. Two fixed-table runs (the kernel and naive retry on "crash before ack" at tier 1)
are produced in-process by ``sim.fixed.run_cell`` and written the way run_all.py writes them
(sim/TRACES.md), beside a two-line sweep file using both documented cell shapes. build.main()
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
CELLS = [("crash before ack", "kernel", "t1"), ("crash before ack", "naive", "t1")]


def _write(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, sort_keys=True, indent=1) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sim import fixed

    out = tmp_path_factory.mktemp("results")
    (out / "traces").mkdir()
    docs = [fixed.run_cell(c) for c in CELLS]
    entries = []
    for d in docs:
        _write(out / "traces" / f"{d['id']}.json", d)
        entries.append({"id": d["id"], "file": f"{d['id']}.json", "fault": d["fault"],
                        "system": d["system"], "tier": d["tier"], "verdict": d["verdict"],
                        "refunded": d["refunded"], "outcome": d["outcome"]})
    _write(out / "traces" / "index.json", {
        "version": 1, "format": "sim/TRACES.md", "faults": ["crash before ack"],
        "systems": ["naive", "kernel"], "tiers": ["t1"], "traces": entries})
    _write(out / "fixed_table.json", {"seed": 1, "rows": [fixed.row(d) for d in docs]})
    object_cell = {"ok": False, "outcome": "2 applied", "reasons": ["duplicate"],
                   "refunded": 40, "resolution_ms": 1180}
    lines = [
        {"seed": 0, "plan": "crash=after_apply", "kinds": ["crash after_apply"],
         "cells": {"naive/t1": object_cell,
                   "kernel/t1": {"ok": True, "outcome": "COMMITTED (found_by_lookup)",
                                 "reasons": [], "refunded": 20, "resolution_ms": 3130,
                                 "oracle": True}}},
        {"seed": 1, "plan": "", "kinds": [],
         "cells": {"naive/t1": [20, "1 applied", [], 90],
                   "kernel/t1": [20, "COMMITTED (acked)", [], 90, {"world_race": True}]}},
    ]
    (out / "sweep_cases.jsonl").write_text(
        "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines), encoding="utf-8")
    return out


def _data(text: str, name: str) -> dict:
    prefix = f"window.{name} = "
    body = text.split("\n", 1)[1]
    assert body.startswith(prefix) and body.endswith(";\n")
    return json.loads(body[len(prefix):-2])


def test_build_writes_data_that_agrees_with_the_runs(tiny_results: Path, tmp_path: Path):
    out = tmp_path / "viewer" / "traces.js"
    assert build.main(tiny_results, out) == 0
    data = _data(out.read_text(encoding="utf-8"), "VIEWER_DATA")
    assert data["warnings"] == []
    assert sorted(data["runs"]) == sorted(f"crash-before-ack__{s}__t1" for s in ("kernel", "naive"))
    for run in data["runs"].values():
        source = json.loads((tiny_results / "traces" / f"{run['id']}.json").read_text())
        assert run["events"] == source["events"]
        assert len(run["money"]) == len(run["events"])
        assert run["money"][-1] == source["refunded"]
    k = data["runs"]["crash-before-ack__kernel__t1"]
    assert k["receipt_steps"], "a kernel run must carry receipts per journal entry"
    assert k["receipt_steps"][-1][1] == k["receipts"]
    assert [s[1][0]["final"] for s in k["receipt_steps"]][-1] == "COMMITTED"
    assert data["runs"]["crash-before-ack__naive__t1"]["receipt_steps"] == []
    assert data["diagram"]["edges"] == [list(e) for e in kernel.edges()]
    ids = {n["id"] for n in data["diagram"]["nodes"]}
    assert ids == {"(new)"} | {s.value for s in kernel.State}
    assert len(data["rows"]) == 2


def test_sweep_cells_in_both_shapes_decode_the_same_way(tiny_results: Path, tmp_path: Path):
    out = tmp_path / "traces.js"
    build.main(tiny_results, out)
    sweep = _data((tmp_path / "sweep.js").read_text(encoding="utf-8"), "VIEWER_SWEEP")
    codes = sweep["codes"]
    assert sweep["columns"] == ["kernel/t1", "naive/t1"]
    seeds = [c[0] for c in sweep["cases"]]
    assert seeds == [0, 1]
    naive0 = sweep["cases"][0][3][1]
    assert naive0[0] == 40 and codes[naive0[1]] == "2 applied"
    assert codes[naive0[2]] == ["duplicate"] and naive0[3] == 1180
    kernel1 = sweep["cases"][1][3][0]
    assert codes[kernel1[1]] == "COMMITTED (acked)" and codes[kernel1[4]] == {"world_race": True}
    assert codes[sweep["cases"][0][3][0][4]] == {"oracle": True}


def test_same_results_give_the_same_bytes(tiny_results: Path, tmp_path: Path):
    a, b = tmp_path / "a" / "traces.js", tmp_path / "b" / "traces.js"
    build.main(tiny_results, a)
    build.main(tiny_results, b)
    for name in ("traces.js", "sweep.js"):
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
