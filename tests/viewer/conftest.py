"""A tiny results/ folder for the viewer's tests, written the way run_all.py writes results/.

How it works. Runs come from the simulator in-process (``sim.fixed.run_cell`` for two
fixed-table cells, ``sim.sweep.replay`` for two traced sweep cells), so the folder is small but
real: journals, receipts and timelines are exactly what the simulator produces today.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CELLS = [("crash before ack", "kernel", "t1"), ("crash before ack", "naive", "t1")]
SWEEP_SEED = 17
SWEEP_CELLS = [("naive", "t3"), ("kernel", "t3")]


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def _entry(doc: dict, file: str) -> dict:
    return {"id": doc["id"], "file": file, "fault": doc["fault"], "system": doc["system"],
            "tier": doc["tier"], "verdict": doc["verdict"], "refunded": doc["refunded"],
            "outcome": doc["outcome"], "seed": doc["seed"]}


@pytest.fixture(scope="session")
def tiny_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sim import fixed, sweep

    out = tmp_path_factory.mktemp("results")
    docs = [fixed.run_cell(c) for c in CELLS]
    for d in docs:
        _write(out / "traces" / f"{d['id']}.json", d)
    swept = {}
    for system, tier in SWEEP_CELLS:
        d = sweep.replay(SWEEP_SEED, system, tier)
        swept[(system, tier)] = d
        _write(out / "traces" / "sweep" / f"{SWEEP_SEED}__{system}__{tier}.json", d)
    _write(out / "traces" / "index.json", {
        "version": 1, "format": "sim/TRACES.md", "faults": ["crash before ack"],
        "systems": ["naive", "kernel"], "tiers": ["t1", "t3"],
        "traces": [_entry(d, f"{d['id']}.json") for d in docs],
        "sweep_traces": [_entry(d, f"sweep/{SWEEP_SEED}__{s}__{t}.json")
                         for (s, t), d in swept.items()]})
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
        {"seed": SWEEP_SEED, "plan": swept[SWEEP_CELLS[0]]["plan_summary"], "kinds": [],
         "cells": {f"{s}/{t}": {"ok": d["verdict"] == "ok", "outcome": d["outcome"],
                               "reasons": d["reasons"], "refunded": d["refunded"],
                               "resolution_ms": d["metrics"]["resolution_ms"]}
                   for (s, t), d in swept.items()}},
    ]
    (out / "sweep_cases.jsonl").write_text(
        "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines), encoding="utf-8")
    return out
