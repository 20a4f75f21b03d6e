"""Torn and damaged journal tails: cut what was never durable, refuse what was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gate import JsonlJournal, Refused, plan_repair
from gate.journal import lock_path_of, read_marker

ROOT = Path(__file__).resolve().parents[2]


def journal_with_unsynced_tail(kit, clock, folder: Path) -> tuple[Path, int, bytes]:
    """One committed effect (durable), then an effect crashed after AUTHORIZED whose two
    entries (with multi-byte UTF-8 in the payload) were never fsync'd."""
    path = folder / "j.jsonl"
    target = kit.Ledger(clock)
    kit.make_gate(path, target, clock).submit(kit.proposal(1))
    with pytest.raises(kit.Crash):
        kit.make_gate(path, target, clock, probe=kit.dies_at("after:AUTHORIZED")).submit(
            kit.proposal(2, note="remboursé €20 😀"))
    marker = read_marker(lock_path_of(path))
    data = path.read_bytes()
    assert marker.offset < len(data) and data.count(b"\n") == marker.seq + 3
    return path, marker.offset, data


def test_every_byte_cut_of_the_unsynced_tail_restarts(kit, clock, tmp_path):
    path, durable, data = journal_with_unsynced_tail(kit, clock, tmp_path)
    lines_at = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for size in range(durable, len(data) + 1):
        path.write_bytes(data[:size])
        journal = JsonlJournal(path)
        whole = sum(1 for end in lines_at if end <= size)
        assert journal.seq == whole, f"cut at byte {size}"
        assert path.read_bytes() == data[:lines_at[whole - 1]]
        assert bool(journal.notes) == (size not in lines_at)
        journal.close()


def test_a_cut_into_durable_entries_is_refused_naming_the_line(kit, clock, tmp_path):
    path, durable, data = journal_with_unsynced_tail(kit, clock, tmp_path)
    path.write_bytes(data[:durable - 5])
    with pytest.raises(Refused, match="line 4"):
        JsonlJournal(path)
    assert path.read_bytes() == data[:durable - 5]  # never repaired silently


@pytest.mark.parametrize("damage", ["zero", "garble"])
def test_a_damaged_sector_after_the_durable_head_is_cut_with_a_note(kit, clock, tmp_path,
                                                                     damage):
    path, durable, data = journal_with_unsynced_tail(kit, clock, tmp_path)
    start = durable + 10
    fill = b"\0" * 40 if damage == "zero" else bytes((b * 7 + 3) % 256 for b in range(40))
    path.write_bytes(data[:start] + fill + data[start + 40:])  # intact lines follow it
    journal = JsonlJournal(path)
    assert journal.seq == 4 and "cut" in journal.notes[0]
    assert path.read_bytes() == data[:durable]


@pytest.mark.parametrize("where", [0, 200, -3])
def test_damage_at_or_before_a_durable_entry_is_refused(kit, clock, tmp_path, where):
    path, durable, data = journal_with_unsynced_tail(kit, clock, tmp_path)
    at = where % durable
    path.write_bytes(data[:at] + b"\0" + data[at + 1:])
    line = data[:at].count(b"\n") + 1
    with pytest.raises(Refused, match=f"line {line}"):
        JsonlJournal(path)


def test_repair_shows_the_cut_and_cuts_only_when_asked(kit, clock, tmp_path):
    path, durable, data = journal_with_unsynced_tail(kit, clock, tmp_path)
    damaged = data[:50] + b"\0" + data[51:]
    path.write_bytes(damaged)
    show = subprocess.run([sys.executable, "-m", "gate", "repair", str(path)], cwd=ROOT,
                          capture_output=True, text=True)
    assert show.returncode == 1 and "line 1" in show.stdout and "DURABLE" in show.stdout
    assert path.read_bytes() == damaged
    done = subprocess.run([sys.executable, "-m", "gate", "repair", str(path), "--apply"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and path.read_bytes() == b""
    assert JsonlJournal(path).seq == 0 and plan_repair(path).clean
