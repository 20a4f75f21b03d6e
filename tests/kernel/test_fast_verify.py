"""verify's fast path (``_proven``) never proves a line the exact path rejects.

A real journal of three blocks is mutated at one line (in the first block, at a block's
end, in the last block) by each way a line can be wrong; the mutated line's hash is made
to match the line's own bytes (the hash cut out, as the exact path cuts it) and every later
line is re-chained, so the one flaw is the one planted. For each mutant: ``_proven`` proves
no line from the mutated one on, and verify with the fast path gives exactly the reference
path's verdict. Lines the exact path accepts but the fast path leaves to it (a float, an
integer read as a double, a nested member named hash) get the same verdict and entries.
Sound journals (including one from before the fast path existed, the old-format fixture)
go through the fast path and give the reference verdict too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

import kernel
from kernel import journal
from kernel.journal import BLOCK, GENESIS, MAX_LINE, Chain, entry_hash, verify

FACTS = {"paid": 100, "refunded": 0}
TIMING = kernel.Timing(send_timeout=200, settle_margin=100, dedup_margin=1_000)
TIER = kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=50)
LEASE = kernel.Lease("L", expires_at=2**40)


def _journal(n_lines: int) -> list[str]:
    chain, lines, i = Chain(), [], 0
    while len(lines) < n_lines:
        p = kernel.Proposal(payload={"amount": 20 + i % 7, "order": i}, premises=FACTS,
                            lease="L", capabilities=TIER, timing=TIMING, key={"order": i})
        effect = None
        for event in (kernel.Propose(10 * i, p), kernel.Authorize(10 * i + 1, LEASE, FACTS),
                      kernel.Dispatch(10 * i + 2, LEASE, FACTS), kernel.Ack(10 * i + 3, 1)):
            result = kernel.step(effect, event)
            effect = result.effect
            lines += [chain.seal(c.entry)[1] for c in result.commands
                      if isinstance(c, kernel.Append)]
        i += 1
    return lines[:n_lines]


LINES = _journal(2 * BLOCK + 300)
ROOT = Path(__file__).resolve().parents[2]


def _with_hash(text: str) -> str:
    """``text`` (a line with a placeholder hash) with the hash the verifier computes."""
    parsed = json.loads(text)
    try:
        return text.replace(parsed["hash"], entry_hash(text, parsed))
    except UnicodeEncodeError:  # a lone surrogate: no hash can be computed
        return text


def _rechain(lines: list[str], start: int) -> list[str]:
    """Lines after ``start`` re-sealed onto the (possibly mutated) line ``start``."""
    out = lines[:start + 1]
    head = json.loads(out[-1])["hash"]
    for line in lines[start + 1:]:
        entry, sealed = journal.seal(json.loads(line), len(out), head)
        out.append(sealed)
        head = entry["hash"]
    return out


def _spell(body: dict[str, Any], **dumps: Any) -> str:
    """A line for ``body`` spelled by json.dumps(**dumps), its hash made to match."""
    return _with_hash(json.dumps({**body, "hash": "f" * 64}, **dumps)) + "\n"


COMPACT = {"separators": (",", ":"), "ensure_ascii": False}
Mutation = Callable[[str], str]


def _body(line: str) -> dict[str, Any]:
    return dict(json.loads(line))


def _resealed(change: Callable[[dict[str, Any]], None], **dumps: Any) -> Mutation:
    def mutate(line: str) -> str:
        body = _body(line)
        change(body)
        return _spell(body, **{"sort_keys": True, **COMPACT, **dumps})
    return mutate


def _text(old: str, new: str) -> Mutation:
    return lambda line: _with_hash(line.rstrip("\n").replace(old, new, 1)) + "\n"


def _set(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.__setitem__(name, value)


MUTANTS: dict[str, Mutation] = {
    "spaces after separators": lambda line: _spell(_body(line), sort_keys=True),
    "one space": _text('","', '", "'),
    "keys reordered": lambda line: _spell(dict(reversed(list(_body(line).items()))),
                                          **COMPACT),
    "escaped ASCII": _text('"kind":"', '"kind":"\\u0041'),
    "escaped slash": _text('"kind":"', '"kind":"\\/'),
    "escape in capitals": _text('"target":"', '"target":"\\u001F'),
    "orjson's spelling of 1e16": _text('"payload":{', '"payload":{"a":1e16,'),
    "orjson's spelling of 1.0": _text('"payload":{', '"payload":{"a":1.0,'),
    "orjson's spelling of 1e21": _text('"payload":{', '"payload":{"a":1e21,'),
    # _spell's placeholder hash is "f" * 64: the copy becomes the hash the line then gets
    "a nested hash member holding a copy of the hash": _resealed(_set("payload",
                                                                      {"hash": "f" * 64})),
    "float 1.0 for an int": _text('"ts":', '"ts":1.0,"x":'),
    "float exponent": _resealed(_set("payload", 1e-7)),
    "integer beyond 2^53": _resealed(_set("payload", 2**60)),
    "integer beyond 2^53 in a line with an escape": _resealed(_set("payload", [2**60, 'a"b'])),
    "16 digits in a fixed member": _resealed(_set("ts", 10**16)),
    "negative zero": _text('"seq":', '"payload":-0,"seq":'),
    "astral key order": _resealed(_set("payload", {"\U0001f600": 1, "\uffff": 2})),
    "duplicate key": _text('{', '{"effect_id":"x",'),
    "free-form keys out of order": _text('"premises":{"paid":100,"refunded":0}',
                                         '"premises":{"refunded":0,"paid":100}'),
    "free-form duplicate key": _text('"premises":{"paid":100,',
                                     '"premises":{"paid":7,"paid":100,'),
    "free-form negative zero": _text('"refunded":0}', '"refunded":-0}'),
    "nested free-form keys out of order": _text('"key":{"order":',
                                                '"key":{"z":{"b":1,"a":2},"order":'),
    "negative zero in a fixed member": _text('"dedup_window":0', '"dedup_window":-0'),
    "deep payload": _resealed(_set("payload", json.loads("[" * 40 + "]" * 40))),
    "one level too deep": _resealed(_set("payload", json.loads("[" * journal.LINE_DEPTH
                                                               + "]" * journal.LINE_DEPTH))),
    "lone surrogate": _resealed(_set("payload", "\ud800"), ensure_ascii=False),
    "unknown kind": _resealed(_set("kind", "SENT")),
    "kind of another type": _resealed(_set("kind", ["PROPOSED"])),
    "unknown field": _resealed(_set("extra", 1)),
    "wrong type": _resealed(_set("ts", "5")),
    "wrong hash": lambda line: line.replace(_body(line)["hash"], "0" * 64),
    "wrong prev": _resealed(_set("prev", "a" * 64)),
    "wrong seq": _resealed(lambda b: b.__setitem__("seq", b["seq"] + 1)),
    "time reversed": _resealed(_set("ts", 0)),
    "carriage return": lambda line: line[:-1] + "\r\n",
    "two entries on one line": lambda line: line[:-1] + "," + line,
    "empty line": lambda line: "\n",
    "over the line limit": _resealed(_set("payload", "x" * MAX_LINE)),
}
# Lines 4, BLOCK - 4 and 2 * BLOCK + 4 are PROPOSED entries, whose payload may hold any value
# (so a payload mutant is refused for its spelling, not for a field its kind lacks).
WHERE = {"first block": 4, "near a block's end": BLOCK - 4, "end of a block": BLOCK - 1,
         "last block": 2 * BLOCK + 4}


def _mutated(name: str, at: int) -> list[str]:
    lines = list(LINES)
    lines[at] = MUTANTS[name](lines[at])
    if name == "time reversed" and at == 4:
        lines[at] = lines[at - 1]  # ts 0 at line 6 is no reversal; a duplicate is
    return _rechain(lines, at) if name not in ("two entries on one line", "empty line",
                                              "carriage return") else lines


def _prev_and_ts(lines: list[str], start: int) -> tuple[str, int]:
    if start == 0:
        return GENESIS, 0
    last = json.loads(lines[start - 1])
    return str(last["hash"]), int(last["ts"])


# Mutants of members only a PROPOSED entry has (the line at a block's end is a COMMITTED).
PROPOSED_ONLY = {"orjson's spelling of 1e16", "orjson's spelling of 1.0",
                 "orjson's spelling of 1e21", "escape in capitals",
                 "a nested hash member holding a copy of the hash", "free-form keys out of order",
                 "free-form duplicate key",
                 "free-form negative zero", "nested free-form keys out of order",
                 "negative zero in a fixed member"}


@pytest.mark.parametrize(("name", "where"), [
    (name, where) for name in sorted(MUTANTS) for where in sorted(WHERE)
    if not (name in PROPOSED_ONLY and WHERE[where] % 4)])
def test_the_fast_path_rejects_every_mutant_the_reference_path_rejects(name: str,
                                                                      where: str) -> None:
    at = WHERE[where]
    lines = _mutated(name, at)
    text = "".join(lines)
    reference = verify(text, fast=False)
    assert reference.valid is False, (name, where)
    assert _proven_from(lines, at) == 0
    assert verify(text).as_json() == reference.as_json()


def _proven_from(lines: list[str], at: int) -> int:
    """How many lines from line index ``at`` on the fast path proves (in at's block), the
    lines before ``at`` being sound."""
    start = at - at % BLOCK
    block = "".join(lines).split("\n")[:-1][start:start + BLOCK]  # as verify cuts it
    parsed = journal._parse_block(block)
    return journal._proven(parsed, block, at - start, at, *_prev_and_ts(lines, at), None, {})


# Sound lines the fast path must leave to the exact path (or prove with the same entry).
EXACT_ONLY: dict[str, Any] = {
    "canonical floats": [0.5, 1e-7, 1e21, -2.5e-300, 1e16],
    "a double written as an integer": float(2**53),
    "a large double written as an integer": -float(2**60),
    "nested members named hash": {"hash": "f" * 64, "x": [{"hash": 1}]},
    "characters beyond the BMP": {"\U0001f600": "\U0001f600", "\uffff": "\uffff"},
    "escapes and raw controls": "\x00\x1f\"\\\x7f\u2028/",
    "nesting at the limit": json.loads("[" * (journal.LINE_DEPTH - 1)
                                       + "]" * (journal.LINE_DEPTH - 1)),
    "free-form nesting one past the typed parse's": json.loads(
        '{"a":[' * (journal._FREE_DEPTH // 2) + "{}" + "]}" * (journal._FREE_DEPTH // 2)),
    "strings of every BMP block": "".join(chr(c) for c in range(0xA0, 0xD800, 97)),
}


@pytest.mark.parametrize("name", sorted(EXACT_ONLY))
def test_a_sound_line_the_fast_path_may_not_spell_gets_the_same_verdict(name: str) -> None:
    lines, at = list(LINES), 4
    lines[at] = journal.seal({**_body(lines[at]), "payload": EXACT_ONLY[name]}, at,
                             _prev_and_ts(lines, at)[0])[1]
    text = "".join(_rechain(lines, at))
    fast, reference = verify(text), verify(text, fast=False)
    assert reference.valid is True, reference.anomalies
    assert fast.as_json() == reference.as_json()
    assert fast.entries == reference.entries
    assert [type(e) for e in fast.entries] == [type(e) for e in reference.entries]
    assert repr(fast.entries[at]) == repr(reference.entries[at])  # 2.0**53 stays a float


def test_orjson_spells_every_string_as_rfc_8785_does() -> None:
    """The fast path takes orjson's spelling of a string for the canonical one: so it must
    be, character by character, over the whole Basic Multilingual Plane."""
    for code in range(0x10000):
        if not 0xD800 <= code <= 0xDFFF:
            text = chr(code) + "a"
            assert orjson.dumps(text) == kernel.canonical(text), hex(code)


@pytest.mark.parametrize("line", [b"[" * 100_000 + b"]" * 100_000,
                                  b'{"a":' * 100_000 + b"1" + b"}" * 100_000],
                         ids=["array", "object"])
def test_a_line_nested_far_beyond_the_limit_is_an_anomaly_not_a_crash(
        tmp_path: Path, line: bytes) -> None:
    """orjson before 3.10 crashed the process on such a line: so it runs in a child."""
    path = tmp_path / "j.jsonl"
    path.write_bytes("".join(LINES[:5]).encode() + line + b"\n")
    out = subprocess.run([sys.executable, "-m", "kernel", "check", str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stderr == "", out.stderr[-400:]
    assert out.stdout.splitlines()[0] == "valid: false"
    assert "line 6: nests deeper than 35 levels" in out.stdout


@pytest.mark.parametrize("cut", [1, 40, 200])
def test_a_torn_tail_gets_the_reference_verdict(cut: int) -> None:
    text = "".join(LINES)
    for torn in (text[:-cut], text[:-cut] + "x", text + '{"seq":'):
        assert verify(torn).as_json() == verify(torn, fast=False).as_json()


def test_a_sound_journal_is_proven_by_the_fast_path_block_by_block() -> None:
    text = "".join(LINES)
    lines = text.split("\n")[:-1]
    prev, ts = GENESIS, 0
    for start in range(0, len(LINES), BLOCK):
        block = lines[start:start + BLOCK]
        parsed = journal._parse_block(block)
        assert parsed is not None, start
        assert journal._proven(parsed, block, 0, start, prev, ts, None, {}) == len(block)
        prev, ts = parsed[-1]["hash"], parsed[-1]["ts"]
    fast, reference = verify(text), verify(text, fast=False)
    assert fast.valid is True and fast.as_json() == reference.as_json()
    assert fast.entries == reference.entries


def test_now_and_the_expected_head_are_judged_alike() -> None:
    text = "".join(LINES)
    last = json.loads(LINES[-1])
    for kwargs in ({"now": last["ts"] - 1}, {"now": last["ts"]},
                   {"expected_head": "0" * 64}, {"expected_head": last["hash"]}):
        assert verify(text, **kwargs).as_json() == verify(text, fast=False, **kwargs).as_json()


def test_journals_of_every_kind_get_the_same_verdict_both_ways() -> None:
    """Journals written by the kernel before the fast path existed (the same format):
    every entry kind, late answers, refusals, and a coordinated unit."""
    from tests.kernel.test_journal import EVERY_SCENARIO
    from tests.kernel.test_oracle import _unit_journal

    for text in (EVERY_SCENARIO, "".join(_unit_journal()[0]), "".join(_unit_journal(False)[0])):
        fast, reference = verify(text), verify(text, fast=False)
        assert fast.valid is True and fast.as_json() == reference.as_json()
        assert fast.entries == reference.entries


# ---------------------------------------------------------------- the plain schema
# The typed parse (_Entry) with _typed_fields stands in for _check_fields on the fast path:
# an entry they accept must be one _check_fields accepts. Judged here by editing every member
# of every kind of entry, top level and one level down, to values of each JSON type and to
# near misses, and by dropping members and adding one.

ODD_VALUES: list[Any] = [0, 1, -1, 7, 1.5, "", "x", "ack", "dispatch", "verification", "false",
                         True, False, None, {}, [], ["x"], [1], {"a": 1}, "a" * 64, "g" * 64,
                         "0" * 63]


def _variants(entry: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, value in entry.items():
        places = [(entry, name)]
        if type(value) is dict:
            places += [(value, inner) for inner in value]
            out += [{**entry, name: {**value, extra: odd}} for odd in ODD_VALUES
                    for extra in ("zzz", "bounds_in_flight", "unit")]
            if type(value.get("lease")) is dict:
                places += [(value["lease"], inner) for inner in value["lease"]]
        for holder, key in places:
            for odd in ODD_VALUES:
                copy = json.loads(json.dumps(entry))
                target = copy if holder is entry else _find(copy, entry, holder)
                target[key] = odd
                out.append(copy)
            copy = json.loads(json.dumps(entry))
            target = copy if holder is entry else _find(copy, entry, holder)
            del target[key]
            out.append(copy)
    return out + [{**entry, extra: odd} for odd in ODD_VALUES
                  for extra in journal.ENTRY_FIELDS | {"zzz"} if extra not in entry]


def _find(copy: dict[str, Any], entry: dict[str, Any], holder: Any) -> Any:
    """The dict in ``copy`` at the place ``holder`` has in ``entry`` (one or two down)."""
    for name, value in entry.items():
        if value is holder:
            return copy[name]
        if type(value) is dict and value.get("lease") is holder:
            return copy[name]["lease"]
    raise AssertionError("not found")


def _plain(entry: dict[str, Any]) -> bool:
    """What _proven proves of the entry's canonical line but the chain: the typed parse gives
    back this very entry (a member the schema does not know is dropped, so it is not the
    same) and _typed_fields accepts it; prev and hash are hex, seq and ts naturals (the
    chain checks them by equality with what they must be)."""
    chained = all(journal._hex64(entry.get(name)) for name in ("prev", "hash")) and all(
        journal._nat(entry.get(name)) for name in ("seq", "ts"))
    try:
        line = orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError: a value it cannot spell
        return False
    parsed = journal._parsed_line(line.decode())
    try:
        return (chained and parsed == entry and orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS)
                == line and journal._typed_fields(parsed, {}))
    except (KeyError, TypeError):  # what _proven reads as "not proven"
        return False


def test_an_entry_the_plain_schema_accepts_is_one_check_fields_accepts() -> None:
    from tests.kernel.test_journal import EVERY_SCENARIO
    from tests.kernel.test_oracle import _unit_journal

    entries, shapes = [], set()
    for text in (EVERY_SCENARIO, "".join(_unit_journal()[0])):
        for e in verify(text).entries:  # one entry of each kind and member set
            shape = (e["kind"], *e, *e.get("checks", {}), "lookup" in e.get("checks", {}))
            if shape not in shapes:
                shapes.add(shape)
                entries.append(e)
    kinds, refused, accepted = set(), 0, 0
    for entry in entries:
        if "unit" not in entry.get("checks", {}):  # the plain subset
            assert _plain(entry), entry
            kinds.add(entry["kind"])
        for variant in _variants(entry):
            try:
                journal._check_fields(variant, 1)
            except kernel.JournalError:
                refused += 1
                assert not _plain(variant), variant
            else:
                accepted += _plain(variant)
    assert kinds >= set(journal.KINDS) - {"VERIFIED"}, kinds
    assert refused > 1000 and accepted > 100, (refused, accepted)
