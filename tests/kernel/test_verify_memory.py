"""How verify holds a big journal: split a piece at a time, equal strings kept once, the
garbage collector paused while it builds the entries and left as it was found.

The pieces must give exactly the lines ``text.split("\\n")`` gives (but the torn last one);
a proven entry's prev is the hash object of the entry before it, and its effect id and kind
are shared with the entries before it; the entries stay equal to the exact path's.
"""

from __future__ import annotations

import gc

import pytest

from kernel import journal
from kernel.journal import BLOCK, verify
from tests.kernel.test_fast_verify import LINES


@pytest.mark.parametrize("text", [
    "", "\n", "\n\n", "a", "a\n", "a\nb", "a\n\nb\n", "x" * 10 + "\n" + "y",
    "".join(f"{i}\n" for i in range(3 * BLOCK + 7)),
    ("z" * 1000 + "\n") * 700 + "torn",  # pieces of several lines each, lines between them
    "w" * (3 * journal._PIECE) + "\n" + "v" * 5 + "\n",  # a line longer than a piece
], ids=lambda t: f"{len(t)} chars")
def test_the_blocks_are_the_lines_split_at_once(monkeypatch: pytest.MonkeyPatch,
                                               text: str) -> None:
    for piece in (journal._PIECE, 1, 7, 5000):
        monkeypatch.setattr(journal, "_PIECE", piece)
        blocks = list(journal._blocks(text))
        assert all(len(b) == BLOCK for b in blocks[:-1]) and all(blocks), piece
        assert [line for b in blocks for line in b] == text.split("\n")[:-1], piece


def test_equal_strings_of_proven_entries_are_one_object() -> None:
    entries = verify("".join(LINES)).entries
    assert entries == verify("".join(LINES), fast=False).entries
    assert entries[0]["prev"] is journal.GENESIS
    ids: dict[str, str] = {}
    kinds = {kind: kind for kind in journal.KINDS}
    for before, entry in zip(entries, entries[1:]):
        assert entry["prev"] is before["hash"]
        assert entry["kind"] is kinds[entry["kind"]]
        assert ids.setdefault(entry["effect_id"], entry["effect_id"]) is entry["effect_id"]


@pytest.mark.parametrize("enabled", [True, False])
def test_verify_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        for text in ("".join(LINES), "".join(LINES[:9]) + "{]\n", b"\xff\n"):
            verify(text)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_the_collector_is_off_while_verify_builds_entries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    states = []
    real = journal._proven

    def spy(*args: object) -> int:
        states.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(journal, "_proven", spy)
    assert gc.isenabled()
    verify("".join(LINES))
    assert states and not any(states) and gc.isenabled()


def test_the_collector_is_off_while_the_oracle_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The full check pauses it too (re-execution builds an effect per entry), and leaves it
    as it found it, whatever the verdict."""
    from kernel import oracle
    states = []
    real = oracle.invariants.check

    def spy(*args: object) -> object:
        states.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(oracle.invariants, "check", spy)
    assert gc.isenabled()
    assert oracle.check("".join(LINES)).valid is True
    assert states == [False] and gc.isenabled()
    gc.disable()
    try:
        oracle.check("".join(LINES[:9]) + "{]\n")
        assert not gc.isenabled()
    finally:
        gc.enable()
