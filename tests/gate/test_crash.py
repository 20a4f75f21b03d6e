"""The crash harness in CI: at least 50 real SIGKILLs (power-loss images and several workers
among them) with nothing duplicated, lost or disputed; and the judge catches a planted bug."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

from gate.crash import judge, power_loss

ROOT = Path(__file__).resolve().parents[2]


def crash(tmp_path: Path, *args: str, timeout: int = 115) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gate.crash", "--out", str(tmp_path), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_fifty_kills_leave_nothing_duplicated_lost_or_open(tmp_path):
    run = crash(tmp_path, "--seed", "7", "--kills", "50", "--images", "5", "--multi", "10")
    lines = run.stdout.splitlines()
    assert lines[0].startswith("seed 7"), "the seed is printed first"
    totals = re.search(r"trials (\d+), kills (\d+), power-loss images (\d+), multi-worker runs "
                       r"(\d+): duplicates 0, lost 0, left open 0, disagreements 0, failed "
                       r"trials 0", run.stdout)
    assert run.returncode == 0 and totals, run.stdout[-3000:] + run.stderr[-2000:]
    assert int(totals[2]) >= 50 and int(totals[3]) >= 5 and int(totals[4]) >= 10


def test_a_planted_bug_is_caught_with_a_repro_command(tmp_path):
    run = crash(tmp_path, "--seed", "2", "--kills", "15", "--plant", "no_claim_wait",
                "--stop-on-failure")
    assert run.returncode == 1, run.stdout[-2000:]
    assert "FAIL trial" in run.stdout
    assert re.search(r"repro: python -m gate.crash --seed 2 --trial \d+ --plant "
                     r"no_claim_wait --keep", run.stdout)


def test_the_judge_counts_a_double_application_and_an_open_effect():
    eid = "e" * 64
    journal = [{"kind": "PROPOSED", "effect_id": eid}, {"kind": "DISPATCHED", "effect_id": eid}]
    rows = {"applies": [(eid, 1, "d"), (eid, 2, "d")], "requests": [(eid,)], "sends": []}
    problems, counts = judge(journal, rows, "2", [], [])
    assert counts["duplicates"] == 1 and counts["open"] == 1 and counts["disagreements"] == 1


def test_power_loss_images_only_touch_bytes_after_the_last_fsync(tmp_path):
    data = b"".join(b'{"n":%d}\n' % i for i in range(200))
    durable = 700
    for n in range(40):
        (tmp_path / "journal.jsonl").write_bytes(data)
        (tmp_path / "fsync.1.log").write_text(f"J {durable}\n")
        kind = power_loss(tmp_path, random.Random(n))
        image = (tmp_path / "journal.jsonl").read_bytes()
        assert image[:durable] == data[:durable], kind
        assert kind != "drop" or image == data[:durable]


def test_workers_paused_past_their_claims_never_land_twice(tmp_path):
    """SIGSTOP senders past every claim while another worker recovers, then SIGCONT them
    (planted: with --plant no_claim_wait the same trials fail)."""
    run = crash(tmp_path, "--seed", "12", "--stop-share", "1", "--kills", "0", "--stops", "6")
    assert run.returncode == 0 and re.search(r"stops \d+ .*duplicates 0, lost 0, left open 0, "
                                             r"disagreements 0, failed trials 0", run.stdout), \
        run.stdout[-3000:]
